// A wrong declaration stops boot with a message saying what to change, and leaves no database running.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { BeforeSave } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import path from 'node:path'
import { lane, startKit, tempDir } from './helpers/kit.js'
import { copyTemplateCluster } from './helpers/pg-template.js'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { openDatabase } from '../lib/storage/database.js'

class Loose {
  @BeforeSave() static check () {}
}

function processesUsing (dataDir: string): string {
  try {
    return execFileSync('pgrep', ['-a', '-f', dataDir], { encoding: 'utf8' })
  } catch {
    return '' // pgrep exits 1 when nothing matches
  }
}

t.test('a trigger on a class without @ParseClass fails boot and stops the database', async (t) => {
  t.equal(modelByName(Loose.name), undefined, 'Loose is no model: only its trigger is declared')
  const dataDir = path.join(tempDir(), 'postgres')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  await t.rejects(startKit(t, { dataDir }), /@BeforeSave on Loose\.check: Loose is not a model\. Add @ParseClass/)
  t.equal(processesUsing(dataDir), '', 'the embedded PostgreSQL was stopped')
})

t.test('a PostgreSQL that runs but refuses the login is not reported as unreachable', { skip: lane.kind !== 'postgres' ? 'a PostgreSQL login' : false }, async (t) => {
  const dataDir = path.join(tempDir(), 'postgres')
  await copyTemplateCluster(dataDir)
  const server = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: () => {} })
  t.teardown(() => server.stop())
  const url = new URL(server.uri)
  const where = `127\\.0\\.0\\.1:${url.port}`
  const wrongPassword = new URL(server.uri)
  wrongPassword.password = 'not-the-password'
  await t.rejects(openDatabase({ databaseURI: wrongPassword.href, dataDir }), {
    code: 'FPK_ERR_DATABASE_UNREACHABLE',
    message: new RegExp(`^PostgreSQL at ${where} refused user "${url.username}": wrong password \\(28P01\\)\\. Fix the user and password in DATABASE_URI\\.$`)
  })
  const noDatabase = new URL(server.uri)
  noDatabase.pathname = '/no_such_app'
  await t.rejects(openDatabase({ databaseURI: noDatabase.href, dataDir }), {
    code: 'FPK_ERR_DATABASE_UNREACHABLE',
    message: new RegExp(`^PostgreSQL at ${where} has no database "no_such_app" \\(3D000\\)`)
  })
})

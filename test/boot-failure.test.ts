// A wrong declaration stops boot with a message saying what to change, and leaves no database running.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { BeforeSave } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import path from 'node:path'
import { startKit, tempDir } from './helpers/kit.js'

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

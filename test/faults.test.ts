// The database server dies under load: the process stays up, every call answers
// (503 while the database is gone, never a hang), readiness says so, the kit
// recovers by itself, and every call acknowledged 2xx is in the database.
import t, { type Test } from 'tap'
import net from 'node:net'
import { Writable } from 'node:stream'
import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appHeaders, lane, masterHeaders, startKit, tempDir, type Kit } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { currentDatabase, openDatabase } from '../lib/storage/database.js'
import { KitState } from '../lib/kit-state.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { parseLogger, SchemaCache } from '../lib/parse/internals.js'

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
  const waiting = () => sql.any('SELECT pid FROM pg_stat_activity WHERE wait_event_type = \'Lock\' AND query LIKE \'%_password_changed_at%\'')
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

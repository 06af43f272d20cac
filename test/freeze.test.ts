// The database server freezes (SIGSTOP, as in a network partition: the
// connections stay open but nothing answers): calls already waiting on it end
// within the database bound with 503, readiness says so, and once the server
// runs again (SIGCONT) calls succeed without a restart; every acknowledged
// write is stored.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appHeaders, lane, masterHeaders, startKit, tempDir } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { currentDatabase } from '../lib/storage/database.js'
import { withoutQueryBound } from '../lib/storage/postgres/bounded.js'
import { isDatabaseUnavailable } from '../lib/storage/unavailable.js'
import { resolveOptions } from '../lib/options.js'
import { boundedMongoOptions } from '../lib/storage/mongo/bounded.js'

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')
/** The kit's bound for this test (option databaseTimeout), in seconds. */
const BOUND_SECONDS = 5
/** Well past the bound: a call unanswered after this long hung. */
const CLIENT_TIMEOUT_MS = 20_000
/** Longer than the client timeout, so that a call waiting for the frozen server is seen hanging. */
const FREEZE_MS = 25_000
const CLIENTS = 20

type Kind = 'note' | 'order' | 'list'
type Phase = 'before' | 'frozen' | 'after'
interface Call { kind: Kind, phase: Phase, status: number | 'hung' | 'network error', code?: number, error?: string, retryAfter?: string | null, id?: string, ms: number }

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

  const calls: Call[] = []
  const state = { phase: 'before' as Phase, running: true }
  let serial = 0
  const once = async (kind: Kind): Promise<void> => {
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
      calls.push({ kind, phase, status: response.status, code: json.code, error, retryAfter: response.headers.get('retry-after'), id: json.id ?? json.objectId, ms: Date.now() - started })
      if (response.status === 503) await sleep(100)
    } catch (error) {
      calls.push({ kind, phase, status: (error as Error).name === 'TimeoutError' ? 'hung' : 'network error', ms: Date.now() - started })
    }
  }
  // On the MongoDB stand-in, one client per kind: it lets concurrent transactions overwrite each other.
  const loops = Array.from({ length: lane.kind === 'postgres' ? CLIENTS : 3 }, async (_, index) => {
    while (state.running) await once((['note', 'order', 'list'] as const)[index % 3])
  })
  const count = (phase: Phase, status: number) => calls.filter((call) => call.phase === phase && call.status === status).length
  t.teardown(async () => { state.running = false; await Promise.all(loops) })

  await until('calls answered before the freeze', () => count('before', 200) >= 10)

  // Freeze this test's own database only; it runs again whatever happens below.
  const pids = [lane.kind === 'postgres' ? postmasterOf(kit.app.kit.database.dataDir ?? dataDir) : kit.standInPid!]
  let frozen = true
  const thaw = () => { if (frozen) { frozen = false; signal(pids, 'SIGCONT') } }
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
  t.same(calls.filter((call) => call.status === 503 && (call.code !== 5003 || call.retryAfter !== '1')), [], 'every 503 is {code: 5003, error} with Retry-After')
  t.ok(frozenCalls.some((call) => call.status === 503 && call.ms >= BOUND_SECONDS * 1000 - 500), 'calls caught in flight were answered by the bound')
  // The bound covers a whole database call, the wait for a pooled connection included (it used to
  // add up to 10 s). A call may make a few database calls in a row; the margin allows for that and a loaded machine.
  t.same(frozenCalls.filter((call) => call.ms > BOUND_SECONDS * 1000 * 2 + 2_000).map((call) => `${call.kind} ${call.ms} ms`), [], 'no call waited much longer than the bound')
  for (const kind of ['note', 'order', 'list'] as const) {
    t.ok(frozenCalls.some((call) => call.kind === kind && call.status === 503), `a ${kind === 'order' ? 'transactional createOrder' : kind === 'note' ? 'createNote' : 'listProducts'} call caught by the freeze answered 503`)
  }
  const longest = (kind: Kind) => Math.max(0, ...frozenCalls.filter((call) => call.kind === kind).map((call) => call.ms))
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

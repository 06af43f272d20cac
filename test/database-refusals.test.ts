// PostgreSQL refusing or stalling, short of going away: a database that takes
// no connections (ALLOW_CONNECTIONS false) answers 503 5003 like any outage; a
// frozen server answers a transactional call within databaseTimeout, not a
// multiple of it; and one statement past the bound on a live server fails
// alone, without turning away the healthy requests around it.
import t from 'tap'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { appHeaders, lane, masterHeaders, startKit, tempDir, type HttpResult } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { clusterFromTemplate } from './helpers/pg-template.js'

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')
/** The kit's databaseTimeout here, in seconds: small, so that the test stays short. */
const BOUND_SECONDS = 2
/** More transactions than the kit opens at once (8), so that some wait for a slot. */
const ORDERS = 12

function signal (pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try { process.kill(pid, name) } catch { /* already gone */ }
  }
}

/** The postmaster of a cluster and its children (backends, checkpointer, …). */
function serverProcesses (dataDir: string): number[] {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const children = execFileSync('ps', ['--ppid', String(postmaster), '-o', 'pid='], { encoding: 'utf8' })
    .split('\n').map((line) => Number(line.trim())).filter((child) => child > 0)
  return [postmaster, ...children]
}

const outage = (answer: HttpResult) => ({ status: answer.status, code: answer.json?.code, retryAfter: answer.headers.get('retry-after') })
const OUTAGE = { status: 503, code: 5003, retryAfter: '1' }

t.test('PostgreSQL refusing connections, frozen, or slow on one statement', { skip: lane.kind !== 'postgres' ? 'PostgreSQL states and processes' : false }, async (t) => {
  const dir = tempDir()
  await clusterFromTemplate(path.join(dir, 'postgres'))
  const database = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
  t.teardown(() => database.stop())
  const notices: string[] = []
  const kit = await startKit(t, {
    databaseURI: database.uri,
    models: path.join(fixtures, 'models'),
    functions: path.join(fixtures, 'functions'),
    databaseTimeout: BOUND_SECONDS
  }, { logger: { level: 'info', stream: { write: (line: string) => { notices.push(JSON.parse(line).msg) } } } })
  const user = await kit.signUp('refusals')
  const headers = { ...appHeaders, 'x-parse-session-token': user.token }
  const product = await kit.request('POST', '/parse/classes/Product', { headers: masterHeaders, body: { name: 'Lamp', sku: 'REFUSE-1', priceCents: 100, stock: 1_000_000 } })
  t.equal(product.status, 201)
  t.equal((await kit.request('POST', '/parse/notes/createNote', { headers, body: { title: 'first' } })).status, 200)
  const name = new URL(database.uri).pathname.slice(1)
  // A second superuser connection, to another database of the same server.
  const admin = new pg.Client({ connectionString: database.uri.replace(/\/[^/?]+(\?|$)/, '/postgres$1') })
  await admin.connect()
  t.teardown(() => admin.end())
  const outageLines = () => notices.filter((line) => /the database cannot be reached/.test(line ?? ''))

  t.test('one statement past the bound on a live server fails alone', async (t) => {
    // The test's own transaction holds a lock the read waits for: the server answers everything else.
    const locker = new pg.Client({ connectionString: database.uri })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE "Note" IN ACCESS EXCLUSIVE MODE')
    const healthy: HttpResult[] = []
    const state = { running: true }
    const healthyLoop = (async () => {
      while (state.running) healthy.push(await kit.request('GET', '/parse/classes/Product?limit=1', { headers: masterHeaders }))
    })()
    const slow = await kit.request('GET', '/parse/classes/Note', { headers: masterHeaders })
    // At once after the slow answer: this is where the instance used to turn every request away.
    const right = await Promise.all([
      kit.request('GET', '/parse/classes/Product?limit=1', { headers: masterHeaders }),
      kit.request('GET', '/parse/products/listProducts?limit=1', { headers }),
      kit.request('GET', '/parse/health')
    ])
    state.running = false
    await healthyLoop
    await locker.query('ROLLBACK')
    t.same(outage(slow), OUTAGE, 'the slow statement answers 503 5003 with Retry-After')
    t.same(right.map((answer) => answer.status), [200, 200, 200], 'requests right after it succeed (a Parse route, a function, readiness)')
    t.ok(healthy.length > 0)
    t.same(healthy.filter((answer) => answer.status !== 200).map((answer) => answer.text), [], `all ${healthy.length} requests during it succeed`)
    t.same(outageLines(), [], 'no "database cannot be reached" line: the probe answered')
  })

  t.test('a database that takes no connections answers 503 5003 with Retry-After', async (t) => {
    await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`)
    const allow = () => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`)
    t.teardown(allow)
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
    // A Parse route first: it meets the refusal itself (nothing has noted an outage before it).
    const rest = await kit.request('GET', '/parse/classes/Note', { headers: masterHeaders })
    const call = await kit.request('POST', '/parse/notes/createNote', { headers, body: { title: 'refused' } })
    t.same(outage(rest), OUTAGE, `a Parse REST call: ${rest.text}`)
    t.same(outage(call), OUTAGE, `a function call: ${call.text}`)
    const ready = await kit.request('GET', '/parse/health')
    t.equal(ready.status, 503)
    t.match(ready.json?.error, /does not accept connections|shut down/, 'readiness says why')
    await allow()
    await until('readiness to recover', async () => (await kit.request('GET', '/parse/health')).status === 200)
    t.equal((await kit.request('POST', '/parse/notes/createNote', { headers, body: { title: 'after' } })).status, 200, 'calls succeed again')
  })

  t.test('a frozen server answers a transactional call within databaseTimeout', async (t) => {
    const pids = serverProcesses(database.dataDir)
    let frozen = true
    const thaw = () => { if (frozen) { frozen = false; signal(pids, 'SIGCONT') } }
    t.teardown(thaw)
    const order = async () => {
      const started = Date.now()
      const answer = await kit.request('POST', '/parse/orders/createOrder', { headers, body: { lines: [{ product: product.json.objectId, quantity: 1 }] } })
      return { ...outage(answer), ms: Date.now() - started }
    }
    let answers: Array<ReturnType<typeof outage> & { ms: number }>
    try {
      signal(pids, 'SIGSTOP')
      answers = await Promise.all(Array.from({ length: ORDERS }, order))
    } finally {
      thaw()
    }
    t.same(answers.map(({ ms: _ms, ...answer }) => answer), answers.map(() => OUTAGE), 'every order answers 503 5003 with Retry-After')
    // The bound is a promise about the whole call, not a speed target: twice it would be a broken promise.
    const longest = Math.max(...answers.map((answer) => answer.ms))
    t.ok(longest < BOUND_SECONDS * 1000 * 1.5, `the longest took ${longest} ms, within ${BOUND_SECONDS} s and a margin (waiting for a transaction slot included)`)
    await until('readiness to recover', async () => (await kit.request('GET', '/parse/health')).status === 200)
    const after = await kit.request('POST', '/parse/orders/createOrder', { headers, body: { lines: [{ product: product.json.objectId, quantity: 1 }] } })
    t.equal(after.status, 200, 'orders succeed after the thaw')
  })
})

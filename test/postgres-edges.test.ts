// PostgreSQL at its edges, one test process for what were separate files (each
// process costs seconds of loading Parse Server):
// - test/database-refusals.test.ts: a database refusing, frozen or slow on one statement;
// - test/large-tables.test.ts: the example list on 120,000 rows reads its indexes;
// - test/geo.test.ts: distance queries without PostGIS (400 naming it) and with it;
// - test/long-names-and-checks.test.ts (in a block of its own at the end, last, so
//   that every class of the file is declared before its three boots): names past
//   PostgreSQL's 63 bytes and the edges of CHECK constraints.
// Each part boots its own kit with its own options; the classes of all parts are
// declared in the one process, under distinct names.
import t, { type Test } from 'tap'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { appHeaders, lane, masterHeaders, startKit, tempDir, type HttpResult, type Kit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { clusterFromTemplate } from './helpers/pg-template.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { currentDatabase } from '../lib/storage/database.js'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, ParseVersionField, Route, asCaller, type CloudRequest } from '../lib/index.js'
import { planSchemaChanges } from '../lib/storage/schema-plan.js'
import { postgresRegex } from '../lib/model/postgres-regex.js'
import { pgIdentifier } from '../lib/storage/postgres/identifiers.js'
import { postgisCluster, postgisMissing } from './helpers/postgis.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

// ── from test/database-refusals.test.ts ──
// PostgreSQL refusing or stalling, short of going away: a database that takes
// no connections (ALLOW_CONNECTIONS false) answers 503 5003 like any outage; a
// frozen server answers a transactional call within databaseTimeout, not a
// multiple of it; and one statement past the bound on a live server fails
// alone, without turning away the healthy requests around it.
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
    // The server ends the statement too, a second after the client's bound, while the lock is still held: before, it
    // waited on the lock (a backend and a pooled slot of the database's) until the lock went, long after its 503.
    const waitingOnLock = async () => Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = \'Lock\'', [name])).rows[0].n)
    await until('the server to cancel the statement past the bound', async () => await waitingOnLock() === 0, scaled(15_000))
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
    // The bound is a promise about the whole call, not a speed target: far past it (the 20 s a client gives up after)
    // would be a broken promise. The margin is half the bound on a quiet machine and stretches with the load, as a
    // starved process fires its own timer late (3,042 ms against 3,000 at load 27 on 2 cores).
    const longest = Math.max(...answers.map((answer) => answer.ms))
    const margin = scaled(BOUND_SECONDS * 500)
    t.ok(longest < BOUND_SECONDS * 1000 + margin, `the longest took ${longest} ms, within ${BOUND_SECONDS} s and a margin of ${margin} ms (waiting for a transaction slot included)`)
    await until('readiness to recover', async () => (await kit.request('GET', '/parse/health')).status === 200)
    const after = await kit.request('POST', '/parse/orders/createOrder', { headers, body: { lines: [{ product: product.json.objectId, quantity: 1 }] } })
    t.equal(after.status, 200, 'orders succeed after the thaw')
  })
})

// ── from test/large-tables.test.ts ──
// The example app's listNotes on a Note table of 120,000 rows made by SQL in
// Parse's row format (half public, the rest readable by their owner or a
// role): the statements the list sends over HTTP, anonymous and with a
// session (row-ACL predicate `"_rperm" IS NULL OR "_rperm" && ARRAY[…]`),
// and a page after a cursor, read the index the Note model declares for the
// list's order, as EXPLAIN ANALYZE shows: an index scan backward on
// (createdAt, objectId), about two page lengths of entries, no sequential
// scan, no sort. The capped count reads at most 1,001 ids and stops. With a
// status filter that matches few notes, the (status, createdAt, objectId)
// index is read and nothing scans the table.
const ROWS = 120_000

interface Pg {
  none (sql: string, values?: unknown): Promise<null>
  any (sql: string, values?: unknown): Promise<Array<Record<string, any>>>
  one (sql: string, values?: unknown): Promise<Record<string, any>>
}
interface PlanNode { 'Node Type': string, 'Index Name'?: string, 'Scan Direction'?: string, 'Actual Rows'?: number, 'Rows Removed by Filter'?: number, Plans?: PlanNode[] }

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test(`listNotes on ${ROWS.toLocaleString('en')} notes reads the indexes Note declares`, async (t) => {
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions') })
  await kit.app.kit.indexesApplied
  const reader = await kit.signUp('reader')
  const adapter = currentDatabase()!.adapter as unknown as { _client: Pg, _pgp: { as: { format (sql: string, values?: unknown): string } } }
  const pg = adapter._client

  const indexes = new Map((await pg.any(`SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = 'Note' AND x.indisvalid`)).map((row) => [row.name as string, row.def as string]))
  t.match(indexes.get('Note_createdAt_1_objectId_1'), /\("createdAt", "objectId"\)/, 'the list\'s order, declared by the model')
  t.match(indexes.get('Note_status_1_createdAt_1_objectId_1'), /\(status, "createdAt", "objectId"\)/, 'the status filter, then the order')

  // Parse's row format: one row in ten per second of createdAt (equal values: objectId breaks ties);
  // half public (published), a quarter the reader's own or another user's drafts, a quarter a role's.
  await pg.none(`
    INSERT INTO "Note" ("objectId", "createdAt", "updatedAt", title, status, slug, views, _rperm, _wperm)
    SELECT 'n' || lpad(to_hex((i::bigint * 2654435761) % 68719476736), 9, '0'),
           timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
           timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
           'note ' || i,
           CASE WHEN i % 2 = 0 THEN 'published' ELSE 'draft' END,
           'note-' || i,
           0,
           CASE WHEN i % 2 = 0 THEN ARRAY['*', 'u' || (i % 5000)]
                WHEN i % 4 = 1 THEN ARRAY[CASE WHEN i % 400 = 1 THEN $1 ELSE 'u' || (i % 5000) END]
                ELSE ARRAY['role:team' || (i % 50)] END,
           ARRAY['u' || (i % 5000)]
    FROM generate_series(1, ${ROWS}) AS i`, [reader.id])
  await pg.none('VACUUM ANALYZE "Note"')

  /** Every statement the adapter sends while `work` runs, values in place. */
  const capture = async (work: () => Promise<unknown>): Promise<string[]> => {
    const sent: string[] = []
    const real = adapter._client
    adapter._client = new Proxy(real, {
      get (target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof value !== 'function' || !['any', 'manyOrNone', 'one', 'oneOrNone', 'many', 'map', 'none', 'query'].includes(String(property))) return value
        return (sql: string, values?: unknown, ...rest: unknown[]) => {
          sent.push(adapter._pgp.as.format(sql, values))
          return value.call(target, sql, values, ...rest)
        }
      }
    })
    try {
      await work()
    } finally {
      adapter._client = real
    }
    return sent
  }
  const explain = async (statement: string) => {
    const [{ Plan: plan }] = (await pg.one(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`))['QUERY PLAN']
    const nodes: PlanNode[] = []
    const visit = (node: PlanNode) => { nodes.push(node); for (const child of node.Plans ?? []) visit(child) }
    visit(plan)
    const text = (await pg.any(`EXPLAIN (ANALYZE, COSTS OFF) ${statement}`)).map((row) => row['QUERY PLAN'] as string).join('\n')
    return { nodes, text }
  }

  const session = { ...appHeaders, 'x-parse-session-token': reader.token }
  const CREATED = 'Note_createdAt_1_objectId_1'
  const STATUS = 'Note_status_1_createdAt_1_objectId_1'
  /** One listNotes request over HTTP, and the EXPLAIN ANALYZE of the rows statement it sent. */
  const answers = new Map<string, { next: string | null }>()
  /**
   * `ordered`: the page is read in order from one of `indexes`, backward, no sort (cost: the page).
   * `filtered`: the filter's index is read, and no table scan (cost: the rows the filter matches).
   */
  const listed = (t: Test, who: string, query: string, headers: Record<string, string>, indexes: string[], condition: RegExp, expect: 'ordered' | 'filtered' = 'ordered') => t.test(who, async (t) => {
    let answer: Awaited<ReturnType<typeof kit.request>> | undefined
    const sent = await capture(async () => { answer = await kit.request('GET', `/parse/notes/listNotes?${query}`, { headers }) })
    t.equal(answer!.status, 200, answer!.status === 200 ? 'answered' : answer!.text)
    t.equal(answer!.json.results.length, 100, 'a full page')
    t.same([answer!.json.count, answer!.json.countKind], [1000, 'atLeast'], 'the count stops at 1000')
    const notes = sent.filter((statement) => /FROM "Note"/.test(statement))
    const rows = notes.find((statement) => /ORDER BY "createdAt" DESC,\s*"objectId" DESC/.test(statement))
    if (!t.ok(rows, `the rows statement is among what the list sent:\n${notes.join('\n')}`)) return
    t.match(rows, condition, 'with the caller\'s conditions')
    t.comment(`${who}: ${rows!.replace(/\s+/g, ' ')}`)
    const plan = await explain(rows!)
    t.comment(`${who}: EXPLAIN ANALYZE\n${plan.text}`)
    const shape = plan.nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`).join(' → ')
    t.notOk(plan.nodes.some((node) => node['Node Type'] === 'Seq Scan'), `no sequential scan: ${shape}`)
    if (expect === 'ordered') {
      const scan = plan.nodes.find((node) => node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan')
      t.ok(indexes.includes(scan?.['Index Name'] ?? ''), `an index scan on ${indexes.join(' or ')}`)
      t.equal(scan?.['Scan Direction'], 'Backward', 'newest first: the index read backward')
      t.notOk(plan.nodes.some((node) => node['Node Type'] === 'Sort'), 'no sort')
      const visited = (scan?.['Actual Rows'] ?? 0) + (scan?.['Rows Removed by Filter'] ?? 0)
      t.ok(visited < 1000, `${visited} index entries visited for a page of 100, not the ${ROWS.toLocaleString('en')} rows`)
    } else {
      t.ok(plan.nodes.some((node) => indexes.includes(node['Index Name'] ?? '')), `${indexes.join(' or ')} is read`)
    }
    // The capped count: at most 1,001 ids; its scan stops once it has them (or, filtered, reads what the filter's indexes give).
    const count = notes.find((statement) => statement !== rows && /LIMIT 1001/.test(statement))
    if (t.ok(count, 'the capped count reads at most 1,001 ids')) {
      const counted = await explain(count!)
      t.comment(`${who}: the capped count's EXPLAIN ANALYZE\n${counted.text}`)
      const read = counted.nodes.filter((node) => /Scan/.test(node['Node Type'])).reduce((sum, node) => sum + (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0), 0)
      if (expect === 'ordered') t.ok(read < 10_000, `the count's scan stops early: ${read} rows read of ${ROWS.toLocaleString('en')}`)
      else t.notOk(counted.nodes.some((node) => node['Node Type'] === 'Seq Scan'), 'the count reads the filter\'s indexes, not the table')
    }
    answers.set(who, answer!.json)
  })

  // The row-ACL filter, anonymous: Parse sends ("_rperm" IS NULL OR "_rperm" && ARRAY['*','*']).
  await listed(t, 'anonymous', 'limit=100', appHeaders, [CREATED], /\("_rperm" IS NULL OR "_rperm" && ARRAY\['\*'(,'\*')?\]\)/)
  await listed(t, 'with a session', 'limit=100', session, [CREATED], new RegExp(`\\("_rperm" IS NULL OR "_rperm" && ARRAY\\[('\\*',)+'${reader.id}'\\]\\)`))
  await listed(t, 'anonymous, the page after a cursor', `limit=100&after=${encodeURIComponent(answers.get('anonymous')?.next ?? '')}`, appHeaders, [CREATED], /"createdAt" <= .*"objectId" < /s)
  // Half the notes are published: the planner may read either index (both serve the order).
  await listed(t, 'with a session, status=published (half the notes)', 'status=published&limit=100', session, [CREATED, STATUS], /"status" = 'published'/)

  // A selective filter: nine published notes in ten become their authors' private drafts; one note in twenty stays published.
  // Published and public go together here, which the planner cannot know: it may combine the status
  // index with the ACL indexes (aclIndex) and sort the published notes rather than read them in order.
  await pg.none('UPDATE "Note" SET status = \'draft\', _rperm = ARRAY["_wperm"[1]] WHERE status = \'published\' AND substr(title, 6)::int % 20 <> 0')
  await pg.none('VACUUM ANALYZE "Note"')
  await listed(t, 'anonymous, status=published (one note in twenty)', 'status=published&limit=100', appHeaders, [STATUS], /"status" = 'published'/, 'filtered')
  await listed(t, 'with a session, status=published (one note in twenty)', 'status=published&limit=100', session, [STATUS], /"status" = 'published'/, 'filtered')
})

// ── from test/geo.test.ts ──
// Geo queries. On a PostgreSQL without PostGIS (the embedded one) distance
// queries answer a 400 that names the missing extension, on Parse's routes and
// on declared endpoints alike; on a PostgreSQL with PostGIS they work.
@ParseClass('Spot')
class Spot extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'GeoPoint' }) declare location: Parse.GeoPoint
}

@Route(Spot)
export class SpotFunctions {
  @CloudFunction({ methods: ['GET'] })
  static async nearby (request: CloudRequest) {
    const here = new Parse.GeoPoint(Number(request.params.latitude), Number(request.params.longitude))
    const spots = await new Parse.Query(Spot).withinKilometers('location', here, 50).find(asCaller(request))
    return spots.map((spot) => spot.name)
  }
}

const open = { allowedRoutes: [{ path: '/classes/*' }] }
const berlin = { __type: 'GeoPoint', latitude: 52.52, longitude: 13.405 }
const where = (condition: object) => `/parse/classes/Spot?where=${encodeURIComponent(JSON.stringify({ location: condition }))}`
const nearSphere = where({ $nearSphere: berlin, $maxDistance: 0.01 })
const centerSphere = where({ $geoWithin: { $centerSphere: [[13.405, 52.52], 0.01] } })
const box = where({ $within: { $box: [{ __type: 'GeoPoint', latitude: 52, longitude: 13 }, { __type: 'GeoPoint', latitude: 53, longitude: 14 }] } })

async function seed (kit: Kit): Promise<void> {
  for (const [name, latitude, longitude] of [['Mitte', 52.52, 13.405], ['Potsdam', 52.39, 13.06], ['Hamburg', 53.55, 9.99]] as const) {
    const saved = await kit.request('POST', '/parse/classes/Spot', { headers: masterHeaders, body: { name, location: { __type: 'GeoPoint', latitude, longitude } } })
    if (saved.status !== 201) throw new Error(saved.text)
  }
}

const names = (json: { results: Array<{ name: string }> }) => json.results.map((row) => row.name).sort()

t.test('without PostGIS: distance queries answer 400 naming the extension', { skip: lane.kind === 'postgres' ? false : 'the embedded PostgreSQL case (the MongoDB stand-in has no geo queries)' }, async (t) => {
  t.ok(Spot && SpotFunctions)
  const kit = await startKit(t, open)
  await seed(kit)
  for (const [label, url] of [['$nearSphere', nearSphere], ['$centerSphere', centerSphere]]) {
    const answer = await kit.request('GET', url, { headers: appHeaders })
    t.equal(answer.status, 400, `${label}: ${answer.text}`)
    t.match(answer.json, { code: Parse.Error.INVALID_QUERY, error: /need the PostGIS extension.*postgresql-15-postgis-3.*CREATE EXTENSION postgis/ })
  }
  const endpoint = await kit.request('GET', '/parse/spots/nearby?latitude=52.52&longitude=13.405', { headers: appHeaders })
  t.equal(endpoint.status, 400, `declared endpoint: ${endpoint.text}`)
  t.match(endpoint.json, { code: Parse.Error.INVALID_QUERY, error: /PostGIS/ })
  const boxed = await kit.request('GET', box, { headers: appHeaders })
  t.equal(boxed.status, 200, '$box needs no PostGIS')
  t.same(names(boxed.json), ['Mitte', 'Potsdam'])
})

t.test('with PostGIS: distance queries work', { skip: lane.kind === 'postgres' ? postgisMissing() : 'a PostgreSQL case' }, async (t) => {
  const databaseURI = await postgisCluster(t)
  const kit = await startKit(t, { ...open, databaseURI })
  t.equal(kit.app.kit.database.embedded, false)
  await seed(kit)
  const near = await kit.request('GET', nearSphere, { headers: appHeaders })
  t.equal(near.status, 200, near.text)
  t.same(near.json.results.map((row: { name: string }) => row.name), ['Mitte', 'Potsdam'], 'nearest first, within 0.01 radians (~64 km)')
  const within = await kit.request('GET', centerSphere, { headers: appHeaders })
  t.equal(within.status, 200, within.text)
  t.same(names(within.json), ['Mitte', 'Potsdam'])
  const endpoint = await kit.request('GET', '/parse/spots/nearby?latitude=52.52&longitude=13.405', { headers: appHeaders })
  t.equal(endpoint.status, 200, endpoint.text)
  t.same(endpoint.json.sort(), ['Mitte', 'Potsdam'], 'withinKilometers on a declared endpoint')
})

// ── from test/long-names-and-checks.test.ts ──
// Names past PostgreSQL's 63 bytes, and the edges of CHECK constraints, over
// three boots of one unchanged model on the same database: the kit finds its
// own (shortened) names again, and those an older kit left cut short, so
// nothing is dropped or re-made and the plan is empty; every CHECK violation answers 142 naming the constraint; a JavaScript
// pattern means the same in the database; a version field added to a class
// with rows leaves the old rows updatable. (A block of its own: its helpers keep their names.)
{
  @ParseClass('CustomerSubscription', {
    compoundIndexes: [{ fields: ['billingPeriodStart', 'billingPeriodEnd', 'status'], unique: true }]
  })
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
  class CustomerSubscription extends BaseModel {
    @ParseField({ type: 'String' }) declare billingPeriodStart: string
    @ParseField({ type: 'String' }) declare billingPeriodEnd: string
    @ParseField({ type: 'String' }) declare status: string
    @ParseField({ type: 'String', unique: true }) declare externalReferenceFromTheBillingProvider: string
    @ParseField({ type: 'Number', index: -1 }) declare lastInvoiceAmountInSmallestCurrencyUnit: number
    @ParseField({ type: 'Number', min: 0 }) declare outstandingBalanceInSmallestCurrencyUnit: number
    @ParseField({ type: 'String', pattern: /\bcat\b/ }) declare phrase: string
  }

  // Without a version field at the first boot; with one from the second on.
  function declareLedger (versioned: boolean) {
    if (!versioned) {
      @ParseClass('Ledger')
      class Ledger extends BaseModel {
        @ParseField({ type: 'Number' }) declare amount: number
      }
      return Ledger
    }
    @ParseClass('Ledger')
    class Ledger extends BaseModel {
      @ParseField({ type: 'Number' }) declare amount: number
      @ParseVersionField() declare version: number
    }
    return Ledger
  }

  const LONG_INDEX = 'CustomerSubscription_billingPeriodStart_1_billingPeriodEnd_1_status_1'
  const LONG_UNIQUE = 'CustomerSubscription_unique_externalReferenceFromTheBillingProvider'
  const LONG_CHECK = 'CustomerSubscription_outstandingBalanceInSmallestCurrencyUnit_check'

  interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>> }
  const pg = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client

  /** Every index and constraint of the table, by name, with its oid: a drop and re-make changes the oid. */
  async function catalogue (): Promise<Record<string, string>> {
    const indexes = await pg().any(`SELECT i.relname AS name, i.oid::text AS oid, pg_get_indexdef(i.oid) AS def FROM pg_index x
      JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid WHERE r.relname = 'CustomerSubscription'`)
    const checks = await pg().any(`SELECT c.conname AS name, c.oid::text AS oid, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
      JOIN pg_class r ON r.oid = c.conrelid WHERE r.relname = 'CustomerSubscription' AND c.contype = 'c'`)
    return Object.fromEntries([...indexes, ...checks].map((row) => [row.name as string, `${row.oid as string} ${row.def as string}`]))
  }

  const save = (kit: Kit, body: Record<string, unknown>) => kit.request('POST', '/parse/classes/CustomerSubscription', { headers: masterHeaders, body })
  const period = { billingPeriodStart: '2026-11', billingPeriodEnd: '2026-12', status: 'active' }

  t.test('an unsupported pattern construct fails at import, naming the field and the construct', async (t) => {
    class Probe extends BaseModel {}
    const declare = () => ParseField({ type: 'String', pattern: /^(\w)\1$/ })(Probe.prototype, 'doubled')
    t.throws(declare, { code: 'FPK_ERR_FIELD_PATTERN_UNSUPPORTED', message: /@ParseField Probe\.doubled: option "pattern" .* uses a backreference \(\\1\)/ })
    t.throws(() => ParseField({ type: 'String', pattern: /a/s })(Probe.prototype, 'dotAll'), { code: 'FPK_ERR_FIELD_PATTERN_UNSUPPORTED', message: /the s flag/ })
  })

  t.test('three boots of an unchanged model with names past 63 bytes', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL identifiers and CHECK constraints' }, async (t) => {
    // Three boots on one database of the process's shared server.
    const same = { ...await sharedPostgres(t), allowedRoutes: [{ path: '/classes/*' }] }
    const boot = async (versioned: boolean) => {
      declareLedger(versioned)
      const kit = await startKit(t, same)
      await kit.app.kit.indexesApplied
      return kit
    }

    // Boot 1: the rows, the DBA's CHECK, a kit-style CHECK on a class no model declares, a row without a version.
    const first = await boot(false)
    t.equal((await save(first, { ...period, externalReferenceFromTheBillingProvider: 'ext-1' })).status, 201)
    t.equal((await save(first, period)).json?.code, Parse.Error.DUPLICATE_VALUE, 'boot 1: the 3-field unique index holds')
    await pg().any('ALTER TABLE "CustomerSubscription" ADD CONSTRAINT "dba_status_is_not_bogus" CHECK (status <> \'bogus\')')
    t.equal((await first.request('POST', '/parse/classes/Gone', { headers: masterHeaders, body: { qty: 1 } })).status, 201)
    await pg().any('ALTER TABLE "Gone" ADD CONSTRAINT "Gone_qty_check" CHECK (qty >= 0)')
    const ledger = await first.request('POST', '/parse/classes/Ledger', { headers: appHeaders, body: { amount: 1 } })
    t.equal(ledger.status, 201, ledger.text)
    const afterFirst = await catalogue()
    // As an older kit left them: PostgreSQL had cut the long names at 63 bytes. Boot 2 takes them back by renaming.
    for (const declared of [LONG_INDEX, LONG_UNIQUE]) await pg().any('ALTER INDEX $1:name RENAME TO $2:name', [pgIdentifier(declared), declared.slice(0, 63)])
    await pg().any('ALTER TABLE "CustomerSubscription" RENAME CONSTRAINT $1:name TO $2:name', [pgIdentifier(LONG_CHECK), LONG_CHECK.slice(0, 63)])
    await first.app.close()

    const second = await boot(true)
    const afterSecond = await catalogue()
    const planned = await planSchemaChanges(currentDatabase()!)
    const duplicateAfterSecond = await save(second, period)
    await second.app.close()
    const third = await boot(true)
    const afterThird = await catalogue()

    t.test('the kit\'s names fit 63 bytes, and nothing was dropped or re-made', async (t) => {
      const names = Object.keys(afterThird)
      t.ok(names.every((name) => Buffer.byteLength(name) <= 63), names.join(', '))
      const index = names.find((name) => name.startsWith(LONG_INDEX.slice(0, 40)))
      t.match(afterThird[index!], /UNIQUE INDEX .* \("billingPeriodStart", "billingPeriodEnd", status\)/, 'the 3-field unique index')
      t.ok(names.some((name) => name.startsWith('CustomerSubscription_unique_externalRef')), 'the unique field index')
      t.ok(names.some((name) => name.startsWith('CustomerSubscription_lastInvoiceAmount')), 'the ordered index')
      t.ok(names.some((name) => name.startsWith(LONG_CHECK.slice(0, 40))), 'the CHECK with a long field name')
      t.same(afterSecond, afterFirst, 'boot 2 renamed what an older kit left under cut-short names, and rebuilt nothing')
      t.same(afterThird, afterSecond, 'boot 3 changed nothing')
    })

    t.test('the plan of the unchanged model is empty after boots 2 and 3', async (t) => {
      const ours = (changes: Awaited<ReturnType<typeof planSchemaChanges>>) => changes.filter((change) => change.subject === 'index' || change.subject === 'constraint')
      t.same(ours(planned), [], 'after boot 2')
      t.same(ours(await planSchemaChanges(currentDatabase()!)), [], 'after boot 3')
    })

    t.test('duplicates are refused at every boot', async (t) => {
      t.equal(duplicateAfterSecond.json?.code, Parse.Error.DUPLICATE_VALUE, 'after boot 2')
      t.equal((await save(third, period)).json?.code, Parse.Error.DUPLICATE_VALUE, 'after boot 3')
      t.equal((await save(third, { externalReferenceFromTheBillingProvider: 'ext-1' })).json?.code, Parse.Error.DUPLICATE_VALUE, 'the unique field')
    })

    t.test('every broken CHECK answers 142 naming it', async (t) => {
      const long = await save(third, { outstandingBalanceInSmallestCurrencyUnit: -1 })
      t.equal(long.status, 400, long.text)
      t.same(long.json, { code: 142, error: 'CustomerSubscription is invalid: outstandingBalanceInSmallestCurrencyUnit must be at least 0' })
      const dba = await save(third, { status: 'bogus' })
      t.equal(dba.status, 400, dba.text)
      t.same(dba.json, { code: 142, error: 'CustomerSubscription is invalid: the row breaks the database\'s CHECK constraint dba_status_is_not_bogus' })
      const gone = await third.request('POST', '/parse/classes/Gone', { headers: masterHeaders, body: { qty: -1 } })
      t.equal(gone.status, 400, gone.text)
      t.same(gone.json, { code: 142, error: 'Gone is invalid: qty breaks a rule the database still holds (Gone_qty_check)' })
    })

    t.test('pattern /\\bcat\\b/ means a word boundary in the database too', async (t) => {
      t.equal((await save(third, { phrase: 'cat' })).status, 201, '"cat" is accepted')
      const concat = await save(third, { phrase: 'concat' })
      t.same(concat.json, { code: 142, error: 'CustomerSubscription is invalid: phrase must match /\\bcat\\b/' }, '"concat" is refused')
    })

    t.test('translated patterns accept in PostgreSQL exactly what they accept in JavaScript', async (t) => {
      const patterns = [/\bcat\b/, /\Bat\b.*/, /\d+x?/, /\w+@\w+/, /a.b/, /[\b\d]x/, /\x41B/, /^[a-z]+$/i, /[\w.-]+/, /caf\u00e9/, /[[:alpha:]]+/, /\D\W\s\S/, /(?:ab|cd)+?/, '[A-Z]{2}-\\d{1,3}']
      const inputs = ['cat', 'concat', 'at', 'bat', '123', '12x', 'a@b', 'ab', 'a\nb', 'axb', 'AB', 'Ab', 'a]', 'café', '\bx', '5x', '٣x', 'me@host', 'a.b-c', 'x! y', 'abcd', 'AB-12', 'ab-1']
      for (const pattern of patterns) {
        const { source, caseInsensitive } = postgresRegex(pattern)
        const js = new RegExp(`^(?:${typeof pattern === 'string' ? pattern : pattern.source})$`, typeof pattern === 'string' ? '' : pattern.flags)
        for (const input of inputs) {
          const [{ matches }] = await pg().any(`SELECT $1 ${caseInsensitive ? '~*' : '~'} $2 AS matches`, [input, source])
          t.equal(matches, js.test(input), `${String(pattern)} on ${JSON.stringify(input)} (PostgreSQL: ${source})`)
        }
      }
    })

    t.test('a row saved before the version field was added is updatable', async (t) => {
      const id = ledger.json.objectId as string
      const rest = await third.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 2 } })
      t.equal(rest.status, 200, rest.text)
      const stored = await third.request('GET', `/parse/classes/Ledger/${id}`, { headers: appHeaders })
      t.match(stored.json, { amount: 2, version: 1 }, 'it has a version from now on')
      const stale = await third.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 3 } })
      t.equal(stale.status, 400, 'and is then checked like any other row')

      // Through the SDK: another row without a version (saved before the field), fetched and saved.
      await pg().any('UPDATE "Ledger" SET version = NULL WHERE "objectId" = $1', [id])
      const fetched = await new Parse.Query('Ledger').get(id)
      fetched.set('amount', 4)
      await fetched.save()
      t.match((await third.request('GET', `/parse/classes/Ledger/${id}`, { headers: appHeaders })).json, { amount: 4, version: 1 })
    })
  })
}

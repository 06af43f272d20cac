// Parse sessions as the kit keeps them, one test process for what were separate
// files (each process costs seconds of loading Parse Server):
// - test/session-indexes.test.ts: the indexes session lookups need;
// - test/session-sweep.test.ts: the sweep of expired sessions, databasePoolSize.
// Neither declares a class: the index counts below are the process's whole set.
// Each part boots its own kit(s). Runs on either database lane.
import t from 'tap'
import type { Db } from 'mongodb'
import { applyAllIndexes } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { lane, needsRealMongo, startKit, APP_ID, masterHeaders, type Kit } from './helpers/kit.js'
import { Writable } from 'node:stream'
import Parse from 'parse/node'
import { pgPool } from '../lib/parse/adapter-internals.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

// ── from test/session-indexes.test.ts ──
// The indexes Parse's session lookups need (Parse Server makes none): made at
// boot on both databases, used by the lookup on a table of 100k sessions, and a
// database holding a duplicate token still boots, with a plain index and a warning.
interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>>, none (query: string, values?: unknown): Promise<null> }

const pgClient = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client

function capture () {
  const lines: string[] = []
  return { lines, log: { info: (line: string) => { lines.push(line) }, warn: (line: string) => { lines.push(`WARN ${line}`) } } }
}

const plan = async (pg: Pg, query: string, values: unknown[]) => (await pg.any(`EXPLAIN ${query}`, values)).map((row) => row['QUERY PLAN'] as string).join('\n')
const ROWS = 100_000

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('PostgreSQL: the session indexes', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true })
  await kit.app.kit.indexesApplied
  const pg = pgClient()

  t.test('made at boot, valid, and reported like the declared ones', async (t) => {
    const rows = await pg.any(`SELECT i.relname AS name, x.indisunique AS unique, x.indisvalid AS valid, pg_get_indexdef(x.indexrelid) AS def
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = '_Session'`)
    const byName = new Map(rows.map((row) => [row.name, row]))
    t.match(byName.get('_Session_unique_sessionToken'), { unique: true, valid: true, def: /UNIQUE INDEX .* \("sessionToken"\)/ })
    t.match(byName.get('_Session_user_1'), { unique: false, valid: true, def: /\("user"\)/ })
    const { lines, log } = capture()
    const reports = await applyAllIndexes(undefined, { log })
    t.match(reports.filter((r) => r.className === '_Session'), [{ name: '_Session_unique_sessionToken', status: 'exists' }, { name: '_Session_user_1', status: 'exists' }])
    t.match(lines.at(-1), /0 created, 0 replaced, 0 dropped, 2 already present, 0 failed/, 'the next boot changes nothing')
  })

  t.test('a session lookup by token works end to end', async (t) => {
    const { token } = await kit.signUp('ada')
    const me = await kit.request('GET', '/parse/users/me', { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Session-Token': token } })
    t.equal(me.status, 200, me.text)
    t.equal(me.json.username, 'ada')
  })

  t.test(`the lookups use the indexes on ${ROWS} sessions`, async (t) => {
    // Parse's row format: the token and the user's objectId in plain columns.
    await pg.none(`INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", "user", "sessionToken", "expiresAt", "installationId", "createdWith")
      SELECT 's' || g, now(), now(), ARRAY['u' || (g % 5000)], ARRAY['u' || (g % 5000)], 'u' || (g % 5000), 'r:' || md5(g::text), now() + interval '1 year', md5('i' || g), '{"action":"login","authProvider":"password"}'::jsonb
      FROM generate_series(1, ${ROWS}) g`)
    await pg.none('ANALYZE "_Session"')
    const byToken = await plan(pg, 'SELECT * FROM "_Session" WHERE "sessionToken" = $1', [`r:${'a'.repeat(32)}`])
    t.comment(byToken)
    t.match(byToken, /Index Scan using "_Session_unique_sessionToken"/, 'the token lookup')
    t.notMatch(byToken, /Seq Scan/)
    const byUser = await plan(pg, 'SELECT * FROM "_Session" WHERE "user" = $1', ['u42'])
    t.comment(byUser)
    t.match(byUser, /_Session_user_1/, 'the sessions of one user')
    t.notMatch(byUser, /Seq Scan/)
  })

  t.test('a duplicate token: a plain index and a warning, never a failed boot', async (t) => {
    await pg.none('DROP INDEX "_Session_unique_sessionToken"')
    await pg.none('INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "sessionToken") VALUES (\'dup1\', now(), now(), \'r:same\'), (\'dup2\', now(), now(), \'r:same\')')
    const { lines, log } = capture()
    const reports = await applyAllIndexes(undefined, { log })
    t.match(reports.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'created', warn: true, detail: /could not be made unique: _Session holds duplicate values \(Key \("sessionToken"\)=\(r:same\) is duplicated\.\).*plain index _Session_sessionToken_1 was made instead/ })
    t.ok(lines.some((line) => /^WARN \[indexes\] _Session_unique_sessionToken could not be made unique/.test(line)), 'logged as a warning')
    const indexes = await pg.any('SELECT i.relname AS name, x.indisvalid AS valid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = \'_Session\'')
    t.same(indexes.filter((row) => !row.valid), [], 'no invalid leftover of the failed unique build')
    t.ok(indexes.some((row) => row.name === '_Session_sessionToken_1'), 'the plain index')
    t.match(await plan(pg, 'SELECT * FROM "_Session" WHERE "sessionToken" = $1', ['r:x']), /_Session_sessionToken_1/, 'which serves the lookup')

    const again = capture()
    const next = await applyAllIndexes(undefined, { log: again.log })
    t.match(next.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'exists', warn: true, detail: /still holds duplicate sessionToken values/ }, 'the next boot says so again, and builds nothing')
    t.notOk(next.some((r) => r.name === '_Session_sessionToken_1'), 'and does not drop the plain index as undeclared')

    await pg.none("DELETE FROM \"_Session\" WHERE \"objectId\" = 'dup2'")
    const fixed = await applyAllIndexes()
    t.match(fixed.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'created' }, 'once the duplicate is gone, unique')
    const after = (await pg.any('SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = \'_Session\'')).map((row) => row.name)
    t.ok(after.includes('_Session_unique_sessionToken'))
    t.notOk(after.includes('_Session_sessionToken_1'), 'and the plain index gave way')
  })
})

if (lane.kind === 'mongo') {
  t.test('MongoDB: the session indexes on the names Parse stores', async (t) => {
    const kit = await startKit(t, { allowAuthRoutes: true })
    await kit.app.kit.indexesApplied
    const adapter = currentDatabase()!.adapter as unknown as { connect (): Promise<unknown>, database: Db }
    await adapter.connect()
    const indexes = new Map((await adapter.database.collection('_Session').indexes()).map((index) => [index.name, index]))
    t.match(indexes.get('_Session_sessionToken_1_unique'), { key: { _session_token: 1 }, unique: true })
    t.match(indexes.get('_Session_user_1'), { key: { _p_user: 1 } })
    const again = await applyAllIndexes()
    t.match(again.filter((r) => r.className === '_Session').map((r) => r.status), ['exists', 'exists'])

    t.test('a session lookup by token works end to end', async (t) => {
      const { token } = await kit.signUp('ada')
      const me = await kit.request('GET', '/parse/users/me', { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Session-Token': token } })
      t.equal(me.status, 200, me.text)
    })

    // The stand-in has no dropIndexes command.
    t.test('a duplicate token: a plain index and a warning', { skip: needsRealMongo() }, async (t) => {
      const sessions = adapter.database.collection<{ _id: string }>('_Session')
      await sessions.dropIndex('_Session_sessionToken_1_unique')
      await sessions.insertMany([{ _id: 'dup1', _session_token: 'r:same' }, { _id: 'dup2', _session_token: 'r:same' }] as never)
      const reports = await applyAllIndexes()
      t.match(reports.find((r) => r.name === '_Session_sessionToken_1_unique'), { status: 'created', warn: true, detail: /plain index _Session_sessionToken_1 was made instead/ })
      t.ok((await sessions.indexes()).some((index) => index.name === '_Session_sessionToken_1'))
    })
  })
}

// ── from test/session-sweep.test.ts ──
// The built-in sweep of expired sessions: run by its schedule, it deletes every
// _Session past its expiresAt in batches of 1000 and keeps the live ones, whose
// tokens still work after; databasePoolSize reaches the pool (with a boot line)
// and bounds the connections a burst of requests opens.
interface SweepPg { one (query: string, values?: unknown): Promise<Record<string, any>>, none (query: string, values?: unknown): Promise<null> }

const EXPIRED = 2500
const POOL_SIZE = 4
const logLines: string[] = []
let kit: Kit

t.before(async () => {
  const stream = new Writable({ write (chunk, _encoding, done) { logLines.push(String(chunk)); done() } })
  kit = await startKit(t, { allowAuthRoutes: true, databasePoolSize: POOL_SIZE, jobs: { sessionSweep: '* * * * * *' } }, { logger: { level: 'info', stream } })
})

const database = () => currentDatabase()!
const pg = () => (database().adapter as unknown as { _client: SweepPg })._client
async function mongo (): Promise<Db> {
  const adapter = database().adapter as unknown as { connect (): Promise<unknown>, database: Db }
  await adapter.connect()
  return adapter.database
}

/** Expired sessions in Parse's own stored format, made straight in the database. */
async function insertExpired (count: number): Promise<void> {
  if (lane.kind === 'postgres') {
    await pg().none(`INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", "user", "sessionToken", "expiresAt", "installationId", "createdWith")
      SELECT 'x' || g, now() - interval '2 years', now() - interval '2 years', ARRAY['u' || g], ARRAY['u' || g], 'u' || g, 'r:old' || md5(g::text), now() - interval '1 year' + g * interval '1 second', md5('i' || g), '{"action":"login","authProvider":"password"}'::jsonb
      FROM generate_series(1, $1) g`, [count])
    return
  }
  const past = Date.now() - 365 * 86_400_000
  await (await mongo()).collection('_Session').insertMany(Array.from({ length: count }, (_, g) => ({
    _id: `x${g}`, _session_token: `r:old${g}`, _p_user: `_User$u${g}`, expiresAt: new Date(past + g * 1000), _created_at: new Date(past), _updated_at: new Date(past)
  })) as never)
}

async function expiredCount (): Promise<number> {
  if (lane.kind === 'postgres') return (await pg().one('SELECT count(*)::int AS n FROM "_Session" WHERE "expiresAt" < now()')).n as number
  return (await mongo()).collection('_Session').countDocuments({ expiresAt: { $lt: new Date() } })
}

const me = (token: string) => kit.request('GET', '/parse/users/me', { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Session-Token': token } })

t.test('the scheduled sweep deletes expired sessions in batches and keeps live ones', async (t) => {
  const live = await kit.signUp('still-here')
  const old = await kit.signUp('gone-away')
  t.equal((await me(old.token)).status, 200, 'the session to expire works at first')
  // Expired the way an application with the master key could: an update of expiresAt through Parse.
  const found = await kit.request('GET', `/parse/classes/_Session?where=${encodeURIComponent(JSON.stringify({ sessionToken: old.token }))}`, { headers: masterHeaders })
  t.equal(found.json.results?.length, 1, found.text)
  const updated = await kit.request('PUT', `/parse/classes/_Session/${found.json.results[0].objectId}`, {
    headers: masterHeaders, body: { expiresAt: { __type: 'Date', iso: new Date(Date.now() - 60_000).toISOString() } }
  })
  t.equal(updated.status, 200, updated.text)
  await insertExpired(EXPIRED)

  await until('the expired sessions to go', async () => await expiredCount() === 0, scaled(60_000))
  t.equal((await me(live.token)).status, 200, 'a live session still works after the sweep')
  const refused = await me(old.token)
  t.equal(refused.json.code, 209, 'the expired one is refused (and gone)')
  const remaining = await kit.request('GET', `/parse/classes/_Session?where=${encodeURIComponent(JSON.stringify({ sessionToken: live.token }))}`, { headers: masterHeaders })
  t.equal(remaining.json.results?.length, 1, 'the live session row is kept')

  const statuses = await kit.request('GET', `/parse/classes/_JobStatus?where=${encodeURIComponent(JSON.stringify({ jobName: 'kitExpireSessions', status: 'succeeded' }))}&limit=1000`, { headers: masterHeaders })
  const messages = (statuses.json.results as Array<{ message?: string, source?: string }>).map((row) => row.message ?? '')
  t.ok(messages.some((message) => /^deleted 250[01] expired sessions in 3 batches of at most 1000 \(\d+ ms\)$/.test(message)), `one run deleted the ${EXPIRED} rows in three statements: ${messages.filter((m) => m.startsWith('deleted')).join('; ')}`)
  t.match(statuses.json.results[0], { source: /^schedule / }, 'started by its schedule')
  t.ok(logLines.some((line) => /\[jobs\] kitExpireSessions: deleted 250[01] expired sessions in 3 batches/.test(line)), 'a log line tells the count')
})

t.test('no trigger can watch the sweep: Parse allows only afterLogout on _Session (as the jobs guide says)', async (t) => {
  // Parse throws a string here, not an Error.
  const refusal = (register: () => void) => { try { register(); return undefined } catch (error) { return String(error) } }
  for (const [name, register] of [['afterDelete', () => Parse.Cloud.afterDelete('_Session', () => {})], ['beforeDelete', () => Parse.Cloud.beforeDelete('_Session', () => {})]] as const) {
    t.equal(refusal(register), 'Only the afterLogout trigger is allowed for the _Session class.', `${name} on _Session is refused`)
  }
})

t.test('databasePoolSize reaches the pool, with a boot line', async (t) => {
  const kind = database().kind
  t.ok(logLines.some((line) => line.includes(`[database] ${kind} pool: ${POOL_SIZE} connections`)), 'the boot line')
  t.equal(database().poolSize, POOL_SIZE)
  if (kind === 'postgres') {
    const pool = pgPool(database().adapter)!
    t.equal((pool as unknown as { options: { max: number } }).options.max, POOL_SIZE, "Parse's pg pool max")
    // A burst of 40 requests at once: every one answers, and the pool never opens more than its size.
    let peak = 0
    const sampler = setInterval(() => { peak = Math.max(peak, pool.totalCount) }, 1)
    const answers = await Promise.all(Array.from({ length: 40 }, () => kit.request('GET', '/parse/classes/_Session?limit=5', { headers: masterHeaders })))
    clearInterval(sampler)
    t.same([...new Set(answers.map((answer) => answer.status))], [200], 'all answered')
    t.ok(peak > 1 && peak <= POOL_SIZE, `peak ${peak} connections, at most ${POOL_SIZE}`)
    const { n } = await pg().one("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'")
    t.ok(n <= POOL_SIZE, `${n} client connections in pg_stat_activity`)
  } else {
    const client = (database().adapter as unknown as { client: { options: { maxPoolSize: number } } }).client
    t.equal(client.options.maxPoolSize, POOL_SIZE, "the driver's maxPoolSize")
  }
})

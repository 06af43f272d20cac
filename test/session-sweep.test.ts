// The built-in sweep of expired sessions: run by its schedule, it deletes every
// _Session past its expiresAt in batches of 1000 and keeps the live ones, whose
// tokens still work after; databasePoolSize reaches the pool (with a boot line)
// and bounds the connections a burst of requests opens.
import t from 'tap'
import { Writable } from 'node:stream'
import type { Db } from 'mongodb'
import Parse from 'parse/node'
import { currentDatabase } from '../lib/storage/database.js'
import { pgPool } from '../lib/parse/adapter-internals.js'
import { APP_ID, lane, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

interface Pg { one (query: string, values?: unknown): Promise<Record<string, any>>, none (query: string, values?: unknown): Promise<null> }

const EXPIRED = 2500
const POOL_SIZE = 4
const logLines: string[] = []
let kit: Kit

t.before(async () => {
  const stream = new Writable({ write (chunk, _encoding, done) { logLines.push(String(chunk)); done() } })
  kit = await startKit(t, { allowAuthRoutes: true, databasePoolSize: POOL_SIZE, jobs: { sessionSweep: '* * * * * *' } }, { logger: { level: 'info', stream } })
})

const database = () => currentDatabase()!
const pg = () => (database().adapter as unknown as { _client: Pg })._client
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

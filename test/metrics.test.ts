// The `metrics` option against the real server and database: after a mix of
// calls (served, refused, rate-limited, a transaction conflict, a database
// outage) the Prometheus endpoint, read with a Prometheus text parser, counts
// exactly the calls made.
import t from 'tap'
import Parse from 'parse/node'
import { createServer, type Server } from 'node:net'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../lib/storage/free-port.js'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { BaseModel, CloudFunction, ParseClass, ParseField, ParseVersionField, Route, withTransaction } from '../lib/index.js'
import { APP_ID, appHeaders, lane, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { redisAnswers } from './helpers/redis-ping.js'
import { scaled } from './helpers/time-scale.js'

const master = { useMasterKey: true }

@ParseClass('Chat')
class Chat extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}
void Chat

@ParseClass('Tally')
class Tally extends BaseModel {
  @ParseField({ type: 'Number' }) declare n: number
  @ParseVersionField() declare version: number
}

@Route('ops')
class OpsFunctions {
  @CloudFunction({ methods: ['GET', 'POST'] }) static ping () { return 'pong' }
  @CloudFunction({ methods: ['POST'], rateLimit: { windowMs: 60_000, max: 2 } }) static limited () { return 'within limit' }
  @CloudFunction({ methods: ['POST'], requireRoles: ['Nobody'], roleCacheMs: 60_000 }) static guarded () { return 'never' }
  @CloudFunction({ methods: ['POST'] }) static count () { return new Parse.Query(Tally).count(master) }

  /** Saves a copy made stale by a save in between, in a transaction: every attempt conflicts. */
  @CloudFunction({ methods: ['POST'] })
  static async stale () {
    const item = await new Tally({ n: 1 }).save(null, master)
    const copy = await new Parse.Query(Tally).get(item.id!, master)
    item.n = 2
    await item.save(null, master)
    return withTransaction(async () => {
      copy.n = 3
      await copy.save(null, master)
      return 'saved'
    })
  }
}
void OpsFunctions

interface Sample { labels?: Record<string, string>, value?: string, count?: string }
interface Family { name: string, type: string, metrics: Sample[] }

async function occupy (port: number): Promise<Server> {
  for (let attempt = 0; ; attempt++) {
    // Every connection is cut at once: the kit sees the database refuse, and close() has nothing to wait for.
    const server = createServer((socket) => socket.destroy())
    try {
      await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, '127.0.0.1', () => resolve()) })
      return server
    } catch (error) {
      if (attempt > 100) throw error
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
}

t.test('the endpoint counts each kind of call', { skip: lane.kind !== 'postgres' ? 'the outage is made by stopping the embedded PostgreSQL' : false }, async (t) => {
  const kit = await startKit(t, { metrics: { defaultMetrics: false } })
  const user = await kit.signUp('metrics-user')
  const call = (method: string, url: string, headers: Record<string, string> = appHeaders) => kit.request(method, `/parse${url}`, { headers, ...(method === 'POST' ? { body: {} } : {}) })

  t.equal((await call('GET', '/ops/ping')).status, 200)
  t.equal((await call('GET', '/ops/ping')).status, 200)
  t.equal((await call('POST', '/functions/ping')).status, 200, 'the /functions twin counts under the same function')
  t.equal((await call('GET', '/ops/ping', {})).status, 403, 'no application id: refused')
  t.same(await Promise.all([1, 2, 3].map(() => call('POST', '/ops/limited').then((r) => r.status))).then((s) => s.sort()), [200, 200, 429])
  const session = { ...appHeaders, 'x-parse-session-token': user.token }
  t.equal((await call('POST', '/ops/guarded', session)).status, 400, 'a missing role: refused with 119, as Parse answers it (roles read: a cache miss)')
  t.equal((await call('POST', '/ops/guarded', session)).status, 400, 'again (answered from the role cache)')
  const conflict = await call('POST', '/ops/stale')
  t.equal(conflict.status, 409, conflict.text)
  t.equal(conflict.json.code, 5001)

  // The outage: PostgreSQL killed, its port kept taken so that it stays down.
  const [pid, , , port] = readFileSync(path.join(kit.app.kit.database.dataDir!, 'postmaster.pid'), 'utf8').split('\n')
  process.kill(Number(pid), 'SIGKILL')
  const blocker = await occupy(Number(port))
  t.teardown(() => new Promise((resolve) => blocker.close(resolve)))
  const down = await call('POST', '/ops/count')
  t.equal(down.status, 503, down.text)

  const scrape = await kit.request('GET', '/metrics')
  t.equal(scrape.status, 200)
  t.match(scrape.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const families = new Map((parsePrometheusTextFormat(scrape.text) as Family[]).map((family) => [family.name, family]))
  const value = (name: string, labels: Record<string, string> = {}) => {
    const sample = families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    return sample === undefined ? undefined : Number(sample.value ?? sample.count)
  }
  const requests = (fn: string, status: number) => value('fpk_function_requests_total', { function: fn, status: String(status) })
  t.equal(requests('ping', 200), 3, 'ping: 3 answered (both routes)')
  t.equal(requests('ping', 403), 1, 'ping: 1 refused')
  t.equal(requests('limited', 200), 2)
  t.equal(requests('limited', 429), 1)
  t.equal(requests('guarded', 400), 2)
  t.equal(requests('stale', 409), 1)
  t.equal(requests('count', 503), 1)
  t.equal(families.get('fpk_function_duration_seconds')?.type, 'HISTOGRAM')
  // parse-prometheus-text-format 1.1 folds a histogram's label sets into one (labels, _count and _sum dropped):
  // the per-function count is read from its exposition line instead.
  t.match(scrape.text, /^fpk_function_duration_seconds_count\{function="ping"\} 4$/m, 'one latency observation per ping call')
  t.match(scrape.text, /^fpk_function_duration_seconds_bucket\{le="\+Inf",function="stale"\} 1$/m)
  t.equal(value('fpk_rate_limit_refusals_total', { function: 'limited' }), 1)
  t.equal(value('fpk_role_cache_lookups_total', { result: 'miss' }), 1)
  t.equal(value('fpk_role_cache_lookups_total', { result: 'hit' }), 1)
  t.equal(value('fpk_transaction_conflicts_total'), 1, 'the transaction gave up once')
  t.equal(value('fpk_transaction_retries_total'), 2, 'after re-running twice')
  t.equal(value('fpk_database_up'), 0, 'the database is down')
  t.equal(value('fpk_database_outages_total'), 1, 'one outage, however many calls it refused')
  t.notOk(families.has('process_cpu_seconds_total'), 'defaultMetrics: false leaves out the process metrics')
  t.notOk(families.has('fpk_redis_up'), 'no Redis gauge outside cluster mode')

  // The port is free again: the kit restarts its PostgreSQL, so it closes from a healthy state.
  await new Promise((resolve) => blocker.close(resolve))
  await until('the database to be back', async () => (await kit.request('GET', '/parse/health')).status === 200, scaled(120_000))
})

t.test('a token keeps the endpoint closed to scrapers without it', async (t) => {
  const token = 'scrape-token-0123456789'
  const kit = await startKit(t, { metrics: { path: '/internal/metrics', token } })
  t.equal((await kit.request('GET', '/metrics')).status, 404, 'only at its configured path')
  const refused = await kit.request('GET', '/internal/metrics')
  t.equal(refused.status, 401)
  t.equal(refused.headers.get('www-authenticate'), 'Bearer')
  t.equal((await kit.request('GET', '/internal/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401)
  const scrape = await kit.request('GET', '/internal/metrics', { headers: { authorization: `Bearer ${token}` } })
  t.equal(scrape.status, 200)
  t.ok((parsePrometheusTextFormat(scrape.text) as Family[]).some((family) => family.name === 'process_cpu_seconds_total'), 'prom-client\'s process metrics by default')
})

t.test('the metrics path is never under the mount path', async (t) => {
  await t.rejects(startKit(t, { metrics: { path: '/parse/metrics' } }), { code: 'FPK_ERR_OPTION_INVALID', message: /kitPlugin option "metrics.path": is under the mount path \/parse/ })
  await t.rejects(startKit(t, { metrics: { paht: '/m' } as never }), { code: 'FPK_ERR_OPTION_UNKNOWN', message: /"metrics.paht": unknown option; did you mean "path"\?/ })
})

const redisOnPath = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0

const gauge = async (origin: string, name: string) => {
  const text = await (await fetch(`${origin}/metrics`)).text()
  const family = (parsePrometheusTextFormat(text) as Family[]).find((f) => f.name === name)
  return family === undefined ? undefined : Number(family.metrics[0]?.value)
}

async function eventually (what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

t.test('cluster mode and LiveQuery: Redis state, connections and subscriptions', { skip: redisOnPath ? false : 'needs redis-server (apt-get install redis-server)' }, async (t) => {
  const port = await freePort()
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(() => { if (redis.exitCode === null) redis.kill('SIGKILL') })
  await eventually('redis-server to answer', () => redisAnswers(port))
  const kit = await startKit(t, { metrics: { defaultMetrics: false }, redis: `redis://127.0.0.1:${port}`, liveQuery: { classNames: ['Chat'] } })
  const user = await kit.signUp('watcher')
  t.equal(await gauge(kit.origin, 'fpk_redis_up'), 1, 'Redis reachable')
  t.equal(await gauge(kit.origin, 'fpk_live_query_connections'), 0)

  const client = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'live-query-client.mjs'), `${kit.origin}/parse`, APP_ID, user.token, 'Chat', '{}'], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (client.exitCode === null) client.kill('SIGKILL') })
  await eventually('the subscription to open', async () => (await gauge(kit.origin, 'fpk_live_query_subscriptions')) === 1)
  t.equal(await gauge(kit.origin, 'fpk_live_query_connections'), 1, 'one connection')
  t.equal(await gauge(kit.origin, 'fpk_live_query_subscriptions'), 1, 'one subscription')
  client.kill('SIGTERM')
  await once(client, 'exit')
  await eventually('the connection to close', async () => (await gauge(kit.origin, 'fpk_live_query_connections')) === 0)
  t.pass('the gauges fall when the client leaves')

  redis.kill('SIGTERM')
  await once(redis, 'exit')
  await eventually('Redis to count as lost', async () => (await gauge(kit.origin, 'fpk_redis_up')) === 0)
  t.equal(await gauge(kit.origin, 'fpk_redis_outages_total'), 1, 'one Redis outage')
})

// LiveQuery and what the kit reports about itself, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - live-query: this file's own tests (first part, its comment kept)
// - test/metrics.test.ts (merged here): The `metrics` option against the real server and database: after a mix of …
// - test/live-query-bounds.test.ts (merged here, in a block of its own at the end): LiveQuery's sockets have the bounds HTTP requests have, with raw `ws` clients …
import t from 'tap'
import { createHook } from 'node:async_hooks'
import { spawn, type ChildProcess, spawnSync } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import WebSocket from 'ws'
import { BaseModel, BeforeSubscribe, ParseClass, ParseField, implementACL, CloudFunction, ParseVersionField, Route, withTransaction } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { APP_ID, appHeaders, masterHeaders, startKit, lane } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { connect, createServer, type Server } from 'node:net'
import { readFileSync } from 'node:fs'
import { freePort } from '../lib/storage/free-port.js'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { redisAnswers } from './helpers/redis-ping.js'
import { openLiveQuerySocket, type LiveQuerySocket } from './helpers/live-query-socket.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

// ── live-query ──
// LiveQuery: a subscription with a session token receives only rows that token
// may read; @BeforeSubscribe can refuse; update events carry the changed fields.
// And what a client can make the server log (was client-log-levels.test.ts, in
// this process to spare one start of Parse Server): its own mistakes (an unknown
// function, LiveQuery messages it got wrong) are info lines without a stack,
// never error-level lines an attacker could repeat at will to page someone; a
// LiveQuery client pointed at the server root (what Parse's own examples use)
// is refused with an answer, and a warn line, naming the URL to use.
const here = path.dirname(fileURLToPath(import.meta.url))
const master = { useMasterKey: true }
const EVENT_TIMEOUT_MS = 15_000

@ParseClass('Chat')
class Chat extends BaseModel {
  @ParseField({ type: 'String' }) declare room: string
  @ParseField({ type: 'String' }) declare text: string

  @BeforeSubscribe()
  static refuseSecretRooms (request: { query: Parse.Query }) {
    const where = (request.query.toJSON() as { where?: { room?: unknown } }).where
    if (where?.room === 'secret') throw new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'No such room')
  }
}

interface Subscriber { events: Array<Record<string, any>>, child: ChildProcess, waitFor (predicate: (event: Record<string, any>) => boolean): Promise<Record<string, any>> }

function subscribe (origin: string, token: string, where: Record<string, unknown>): Subscriber {
  const child = spawn(process.execPath, [path.join(here, 'helpers', 'live-query-client.mjs'), `${origin}/parse`, APP_ID, token, 'Chat', JSON.stringify(where)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const events: Array<Record<string, any>> = []
  const arrived = new EventEmitter()
  let buffered = ''
  child.stdout!.on('data', (chunk) => {
    buffered += chunk
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) {
      if (!line.trim()) continue
      events.push(JSON.parse(line))
      arrived.emit('event')
    }
  })
  // Resolves on the event itself (no polling); the bound only turns a missing event into a readable failure.
  const waitFor = (predicate: (event: Record<string, any>) => boolean) => new Promise<Record<string, any>>((resolve, reject) => {
    const check = () => {
      const found = events.find(predicate)
      if (!found) return
      clearTimeout(timer)
      arrived.off('event', check)
      resolve(found)
    }
    const timer = setTimeout(() => {
      arrived.off('event', check)
      reject(new Error(`no such event within ${EVENT_TIMEOUT_MS} ms; got ${JSON.stringify(events)}`))
    }, EVENT_TIMEOUT_MS)
    arrived.on('event', check)
    check()
  })
  return { events, child, waitFor }
}

t.test('LiveQuery on the kit', async (t) => {
  t.equal(modelByName('Chat')?.model, Chat, '@ParseClass registered Chat')
  const kit = await startKit(t, { liveQuery: { classNames: ['Chat'] } })
  const alice = await kit.signUp('alice')
  const bob = await kit.signUp('bob')
  const readableBy = (id: string) => implementACL({ owner: [{ user: id, read: true, write: true }] })

  const mine = await new Chat({ room: 'lobby', text: 'hi alice' }).setACL(readableBy(alice.id)) as Chat
  await mine.save(null, master)
  const theirs = new Chat({ room: 'lobby', text: 'hi bob' })
  theirs.setACL(readableBy(bob.id))
  await theirs.save(null, master)

  const subscriber = subscribe(kit.origin, alice.token, { room: 'lobby' })
  const refused = subscribe(kit.origin, alice.token, { room: 'secret' })
  const owner = subscribe(kit.origin, bob.token, { room: 'lobby' })
  t.teardown(() => { subscriber.child.kill('SIGTERM'); refused.child.kill('SIGTERM'); owner.child.kill('SIGTERM') })
  await subscriber.waitFor((event) => event.event === 'open')
  await owner.waitFor((event) => event.event === 'open')

  theirs.text = 'bob only'
  await theirs.save(null, master)
  mine.text = 'edited for alice'
  await mine.save(null, master)

  const update = await subscriber.waitFor((event) => event.event === 'update')
  t.equal(update.object.objectId, mine.id, 'the update that arrives is the readable row')
  t.equal(update.object.text, 'edited for alice', 'with the changed field')
  // Sync points instead of a pause: bob received his row's update, so the server has
  // published it; and a later update of alice's row reached her after it.
  await owner.waitFor((event) => event.event === 'update' && event.object?.objectId === theirs.id)
  mine.text = 'after bob'
  await mine.save(null, master)
  await subscriber.waitFor((event) => event.event === 'update' && event.object?.text === 'after bob')
  t.notOk(subscriber.events.some((event) => event.object?.objectId === theirs.id), 'a row the token may not read never arrives')

  const error = await refused.waitFor((event) => event.event === 'error')
  t.match(error.message, /No such room/, '@BeforeSubscribe refused the subscription')
})

// ── client log levels (was client-log-levels.test.ts) ──

@ParseClass('Chirp')
class Chirp extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}

interface LogLine { level: number, msg: string, err?: unknown }

/** Resolves with the status and body an upgrade is refused with. */
function refusedUpgrade (url: string): Promise<{ status: number, body: string }> {
  const ws = new WebSocket(url)
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += String(chunk) })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }); ws.terminate() })
    })
    ws.on('open', () => { ws.close(); reject(new Error(`${url} was accepted`)) })
    ws.on('error', () => {})
  })
}

t.test('client mistakes log no error-level line; LiveQuery at the root says where to connect', async (t) => {
  const lines: LogLine[] = []
  const kit = await startKit(t, { models: [Chirp], allowAuthRoutes: true, liveQuery: { classNames: ['Chirp'], allowRegex: true } }, {
    logger: { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } }
  })
  const base = kit.origin.replace(/^http/, 'ws')
  const errorLines = () => lines.filter((line) => line.level >= 50).map((line) => line.msg)

  t.test('an unknown function', async (t) => {
    for (let i = 0; i < 3; i++) {
      const answer = await kit.request('POST', '/parse/functions/noSuchFunction', { headers: appHeaders, body: {} })
      t.equal(answer.status, 400)
      t.equal(answer.json.code, 141)
    }
    await until('the refusals to be logged', () => lines.filter((line) => /Invalid function/.test(line.msg + JSON.stringify(line))).length >= 3)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /Invalid function/.test(JSON.stringify(line)))
    t.ok(logged.every((line) => line.level === 30 && line.err === undefined), 'info lines without a stack')
  })

  t.test('refusals Parse answers "Permission denied" for (it logs their detail first)', async (t) => {
    // Parse writes the detail of each refusal it answers only "Permission denied" at error level:
    // /users/me without a token, a refused logout, a wrong application id in the body.
    const me = await kit.request('GET', '/parse/users/me', { headers: appHeaders })
    t.same([me.status, me.json], [400, { code: 209, error: 'Permission denied' }])
    const { token } = await kit.signUp('chirper')
    const other = await kit.request('GET', '/parse/sessions/me', { headers: { ...appHeaders, 'x-parse-session-token': token } })
    const logout = await kit.request('DELETE', `/parse/sessions/${other.json.objectId as string}`, { headers: appHeaders })
    t.equal(logout.status >= 400 && logout.status < 500, true, `a session deleted without its token is refused (${logout.status})`)
    await until('the refusals to be logged', () => lines.filter((line) => /Invalid session token/.test(line.msg)).length >= 1)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /Invalid session token/.test(line.msg))
    t.ok(logged.every((line) => line.level === 30 && line.err === undefined), 'at info, without a stack')
  })

  t.test('LiveQuery protocol mistakes', async (t) => {
    const ws = new WebSocket(`${base}/parse`)
    const messages: Array<Record<string, unknown>> = []
    ws.on('message', (data) => messages.push(JSON.parse(String(data))))
    t.teardown(() => ws.terminate())
    await once(ws, 'open')
    ws.send('this is not JSON')
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Chirp', where: {} } })) // before connect
    ws.send(JSON.stringify({ op: 'connect', applicationId: 'wrong-app' }))
    ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID }))
    await until('connected', () => messages.some((message) => message.op === 'connected'))
    ws.send(JSON.stringify({ op: 'bogus' }))
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 2, query: { where: {} } })) // no className
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 3, query: { className: 'NoSuchClass', where: {} } }))
    ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 99 }))
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 4, query: { className: 'Chirp', where: { text: { $regex: '(' } } } })) // Parse refuses it (102) and logged that at error level
    await until('each mistake to be answered', () => messages.filter((message) => message.op === 'error').length >= 6)
    t.match(messages.find((message) => message.requestId === 4), { op: 'error', code: 102, error: /Invalid regular expression/ })
    await until('the mistakes to be logged', () => lines.filter((line) => /unable to parse request|Connect message error|Can not find|Failed running beforeSubscribe/.test(line.msg)).length >= 4)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /unable to parse request|Connect message error|Key in request|Can not find|Failed running beforeSubscribe/.test(line.msg))
    t.ok(logged.length >= 5, `each mistake is still logged (${logged.length} lines)`)
    t.ok(logged.every((line) => line.level === 30 && line.err === undefined), 'at info, without a stack')
  })

  t.test('LiveQuery at the server root', async (t) => {
    const refused = await refusedUpgrade(base)
    t.equal(refused.status, 404, 'refused')
    const body = JSON.parse(refused.body) as { code: number, error: string }
    t.equal(body.code, 101)
    t.match(body.error, `LiveQuery is served at ${base}/parse`, 'the answer names the URL to use')
    for (let i = 0; i < 3; i++) t.equal((await refusedUpgrade(`${base}/?x=${i}`)).status, 404, 'the SDK retries')
    const warned = lines.filter((line) => line.level === 40 && /WebSocket upgrade at \/ was refused/.test(line.msg))
    t.equal(warned.length, 1, 'one warn line, however often the client retries')
    t.match(warned[0]?.msg, `${base}/parse`, 'naming the URL to use')
    t.same(errorLines(), [], 'no error-level line')
  })
})

// ── from test/metrics.test.ts ──
// The `metrics` option against the real server and database: after a mix of
// calls (served, refused, rate-limited, a transaction conflict, a database
// outage) the Prometheus endpoint, read with a Prometheus text parser, counts
// exactly the calls made.

// Chat (its text field) is live-query's, declared above: one class of that name per process.

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
  // A server of its own: the test kills it.
  const kit = await startKit(t, { metrics: { defaultMetrics: false }, ownDatabaseServer: true })
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

// ── live-query-bounds ──
// LiveQuery's sockets have the bounds HTTP requests have: upgrades only on the
// mount path, frames no larger than the body limit (refused from the frame
// header, before the payload is read), a deadline for the `connect` message,
// limits on subscriptions per socket and sockets per address, and a refusal
// naming the option for a class LiveQuery does not serve. Clients are raw `ws`
// sockets, as an attacker's would be. And app.close() ends with a subscribed
// client connected. (A block of its own: its helpers keep their names.)
{
  @ParseClass('Ping')
  class Ping extends BaseModel {
    @ParseField({ type: 'String' }) declare text: string
  }

  const CONNECT_TIMEOUT_MS = 1_500
  /** Generous: the machine is shared. */
  const WAIT_MS = 20_000

  type Client = LiveQuerySocket
  const open = (url: string): Promise<Client> => openLiveQuerySocket(url, WAIT_MS)

  async function connected (url: string): Promise<Client> {
    const client = await open(url)
    client.ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID }))
    await client.next((message) => message.op === 'connected')
    return client
  }

  const subscribe = (client: Client, requestId: number, className: string) =>
    client.ws.send(JSON.stringify({ op: 'subscribe', requestId, query: { className, where: {} } }))

  /** Resolves with the HTTP status an upgrade is refused with. */
  async function refusedUpgrade (url: string): Promise<number> {
    return (await refusal(url)).status
  }

  /** The status and request id header of a refused upgrade. */
  function refusal (url: string): Promise<{ status: number, requestId: unknown }> {
    const ws = new WebSocket(url)
    return new Promise((resolve, reject) => {
      ws.on('unexpected-response', (_request, response) => { resolve({ status: response.statusCode ?? 0, requestId: response.headers['x-request-id'] }); ws.terminate() })
      ws.on('open', () => { ws.close(); reject(new Error(`${url} was accepted`)) })
      ws.on('error', () => {})
    })
  }

  t.test('LiveQuery socket bounds', async (t) => {
    const logLines: string[] = []
    const kit = await startKit(t, {
      models: [Ping],
      liveQuery: { classNames: ['Ping'], connectTimeoutMs: CONNECT_TIMEOUT_MS, maxSubscriptionsPerConnection: 3, maxConnectionsPerAddress: 6 }
    }, { logger: { level: 'warn', stream: { write: (line: string) => { logLines.push(line) } } } })
    const base = kit.origin.replace(/^http/, 'ws')
    const url = `${base}/parse`
    const sockets: WebSocket[] = []
    t.teardown(() => { for (const ws of sockets) ws.terminate() })

    t.test('an upgrade on any other path is refused', async (t) => {
      t.equal(await refusedUpgrade(`${base}/anything`), 404, 'outside the mount')
      t.equal(await refusedUpgrade(`${base}/parse/classes/Ping`), 404, 'below the mount')
      const refused = await refusal(`${base}/anything`)
      t.match(refused.requestId, /^\S+$/, 'the refusal carries its request id, as every answer does')
      const client = await connected(url)
      sockets.push(client.ws)
      t.pass('the mount path itself is served')
      client.ws.close()
    })

    t.test('a frame over the body limit is refused from its header, before its payload is read', async (t) => {
      const client = await open(url)
      sockets.push(client.ws)
      client.ws.send('x'.repeat(2 * 1024 * 1024))
      const [code] = await once(client.ws, 'close')
      t.equal(code, 1009, 'closed as "message too big" (the default limit is the 1 MiB body limit)')
      // A client causes a socket error at will: it is logged in one short line, never as a dump of the socket.
      const deadline = Date.now() + WAIT_MS
      while (!logLines.some((line) => line.includes('Max payload size exceeded')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      const logged = logLines.filter((line) => line.includes('Max payload size exceeded'))
      t.equal(logged.length, 1, 'the socket error is logged once')
      t.match(logged[0], /LiveQuery socket from 127\.0\.0\.1: Max payload size exceeded/)
      t.equal(JSON.parse(logged[0]).level, 40, 'at warn: the client erred, not the server')
      t.same(logLines.filter((line) => line.length > 2_000).map((line) => line.slice(0, 120)), [], 'no log line dumps the socket')

      // A raw frame header announcing 90 MB, then 1 KiB of it: the server closes without waiting for the rest.
      const { port } = new URL(kit.origin)
      const socket = connect(Number(port), '127.0.0.1')
      await once(socket, 'connect')
      socket.write(['GET /parse HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'))
      const [handshake] = await once(socket, 'data') as [Buffer]
      t.match(handshake.toString(), /^HTTP\/1\.1 101/, 'upgraded')
      const header = Buffer.alloc(14)
      header[0] = 0x81 // final text frame
      header[1] = 0x80 | 127 // masked, 64-bit length
      header.writeBigUInt64BE(90_000_000n, 2)
      header.writeUInt32BE(0x01020304, 10) // mask
      socket.write(Buffer.concat([header, Buffer.alloc(1024)]))
      const closedAt = Date.now()
      let stillOpen: NodeJS.Timeout | undefined // cleared: a pending timer would keep the file running 20 s after its tests
      await Promise.race([once(socket, 'close'), new Promise((_resolve, reject) => { stillOpen = setTimeout(() => reject(new Error('still open')), WAIT_MS) })])
        .finally(() => clearTimeout(stillOpen))
      t.ok(Date.now() - closedAt < WAIT_MS, 'the server ended the socket with 90 MB still unsent')
    })

    t.test('a socket that never sends connect is closed after the deadline', async (t) => {
      const client = await open(url)
      sockets.push(client.ws)
      const started = Date.now()
      const [code, reason] = await once(client.ws, 'close')
      t.equal(code, 1008, 'policy violation')
      t.match(String(reason), /no accepted connect message within 1500 ms/)
      t.ok(Date.now() - started >= CONNECT_TIMEOUT_MS - 100, 'not before the deadline')
    })

    t.test('a connected socket outlives the deadline', async (t) => {
      const client = await connected(url)
      sockets.push(client.ws)
      await new Promise((resolve) => setTimeout(resolve, CONNECT_TIMEOUT_MS + 500))
      t.equal(client.ws.readyState, WebSocket.OPEN)
      client.ws.close()
    })

    t.test('subscriptions over the limit, and to a class LiveQuery does not serve, are refused', async (t) => {
      const client = await connected(url)
      sockets.push(client.ws)
      for (const id of [1, 2, 3]) subscribe(client, id, 'Ping')
      for (const id of [1, 2, 3]) await client.next((message) => message.op === 'subscribed' && message.requestId === id)
      subscribe(client, 4, 'Ping')
      const over = await client.next((message) => message.op === 'error' && message.requestId === 4)
      t.match(over.error, /At most 3 subscriptions per connection \(liveQuery\.maxSubscriptionsPerConnection\)/)
      t.notOk(client.messages.some((message) => message.op === 'subscribed' && message.requestId === 4), 'never subscribed')

      client.ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 1 }))
      await client.next((message) => message.op === 'unsubscribed' && message.requestId === 1)
      subscribe(client, 5, 'Ping')
      await client.next((message) => message.op === 'subscribed' && message.requestId === 5)
      t.pass('an unsubscribe frees a place')

      client.ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 2 }))
      await client.next((message) => message.op === 'unsubscribed' && message.requestId === 2)
      subscribe(client, 6, '_User')
      const unlisted = await client.next((message) => message.op === 'error' && message.requestId === 6)
      t.equal(unlisted.code, 119)
      t.match(unlisted.error, /Class _User is not in liveQuery\.classNames/, 'the refusal names the option')
      client.ws.close()
    })

    t.test('update frames for subscriptions the socket does not hold are refused, however many', async (t) => {
      const client = await connected(url)
      sockets.push(client.ws)
      subscribe(client, 1, 'Ping')
      await client.next((message) => message.op === 'subscribed' && message.requestId === 1)
      const query = { className: 'Ping', where: {} }
      // 500 frames: past the limit of 3 over a hundred times, so an update that took a place, or kept one, shows.
      for (let id = 1000; id < 1500; id++) client.ws.send(JSON.stringify({ op: 'update', requestId: id, query }))
      await client.next((message) => message.op === 'error' && message.requestId === 1499)
      const refused = client.messages.filter((message) => message.op === 'error' && message.requestId >= 1000)
      t.equal(refused.length, 500, 'each is refused')
      t.match(refused[0].error, /Cannot find subscription with requestId 1000/)
      t.notOk(client.messages.some((message) => message.op === 'subscribed' && message.requestId >= 1000), 'none became a subscription')
      // The limit (3) still leaves two places: the 500 updates took none of them.
      subscribe(client, 2, 'Ping')
      subscribe(client, 3, 'Ping')
      await client.next((message) => message.op === 'subscribed' && message.requestId === 3)
      t.ok(client.messages.some((message) => message.op === 'subscribed' && message.requestId === 2), 'the places left are intact')
      client.ws.send(JSON.stringify({ op: 'update', requestId: 1, query: { className: 'Ping', where: { text: 'x' } } }))
      await client.next((message) => message.op === 'subscribed' && message.requestId === 1 && client.messages.filter((m) => m.op === 'subscribed' && m.requestId === 1).length === 2)
      t.pass('an update of a held subscription still works')
      client.ws.close()
    })

    t.test('sockets per address are limited', async (t) => {
      const clients = await Promise.all(Array.from({ length: 6 }, () => open(url)))
      sockets.push(...clients.map((client) => client.ws))
      const refused = await refusal(url)
      t.equal(refused.status, 429, 'the seventh socket from one address is refused')
      t.match(refused.requestId, /^\S+$/, 'with its request id')
      for (const client of clients) client.ws.close()
      await Promise.all(clients.map((client) => client.ws.readyState === WebSocket.CLOSED ? undefined : once(client.ws, 'close')))
      const again = await connected(url)
      sockets.push(again.ws)
      t.pass('closed sockets free their places')
      again.ws.close()
    })

    t.test('a closed socket leaves no ping timer of Parse\'s running (it kept the process alive 20 s after app.close())', async (t) => {
      // Parse pings every socket on an interval (websocketTimeout, 10 s by default).
      const pings: NodeJS.Timeout[] = []
      const hook = createHook({
        init (_id, type, _trigger, resource) {
          if (type === 'Timeout' && (resource as { _repeat: unknown })._repeat === 10_000) pings.push(resource as NodeJS.Timeout)
        }
      }).enable()
      const client = await connected(url).finally(() => hook.disable())
      t.ok(pings.length > 0, 'Parse started its ping interval for the socket')
      client.ws.close()
      await once(client.ws, 'close')
      // Without the fix Parse clears it itself on its second tick, 20 s after the connection.
      await until('the socket\'s ping interval to be cleared', () => pings.every((timer) => (timer as unknown as { _destroyed: boolean })._destroyed), scaled(2_000))
    })

    t.test('a subscriber that stops reading is disconnected before its unsent events pile up in memory', async (t) => {
      // Without a bound the server queued every event for a socket that never reads, until
      // Parse's ping check (20 s): each subscription of each socket a copy of each row.
      const client = await connected(url)
      sockets.push(client.ws)
      for (const id of [1, 2, 3]) subscribe(client, id, 'Ping')
      for (const id of [1, 2, 3]) await client.next((message) => message.op === 'subscribed' && message.requestId === id)
      const raw = (client.ws as unknown as { _socket: import('node:net').Socket })._socket
      raw.pause() // reads nothing more: the kernel's buffers fill, then the server's queue grows
      const text = 'x'.repeat(200_000)
      const ROWS = 150 // 3 subscriptions × 150 rows × 200 kB: 90 MB of events, far past the kernel's buffers
      for (let i = 0; i < ROWS; i++) await new Ping({ text }).save(null, master)
      raw.resume()
      const delivered = () => client.messages.filter((message) => message.op === 'create').length
      await until('the socket to close, or every event to arrive', () => client.ws.readyState === WebSocket.CLOSED || delivered() === 3 * ROWS, WAIT_MS)
      const events = delivered()
      t.ok(events < 3 * ROWS, `the socket was closed with events left unsent (${events} of ${3 * ROWS} delivered)`)
      await until('the warn line', () => logLines.some((line) => line.includes('is not reading')), WAIT_MS)
      t.match(logLines.find((line) => line.includes('is not reading')), /LiveQuery socket from 127\.0\.0\.1 is not reading: closed with \d+ bytes unsent/)
      const again = await connected(url)
      sockets.push(again.ws)
      t.pass('the client may connect again')
      again.ws.close()
    })

    t.test('after a logout, a subscription made with its token stops receiving rows only that user may read, within Parse\'s 5 s', async (t) => {
      // REST refuses the token at once; Parse's LiveQuery keeps what a token may read for its
      // cacheTimeout (5 s) after looking it up. The guide says so; this pins the bound.
      const ada = await kit.signUp('ada')
      const client = await connected(url)
      sockets.push(client.ws)
      client.ws.send(JSON.stringify({ op: 'subscribe', requestId: 1, sessionToken: ada.token, query: { className: 'Ping', where: {} } }))
      await client.next((message) => message.op === 'subscribed')
      const forAda = async (text: string) => {
        const row = new Ping({ text })
        row.setACL(implementACL({ owner: [{ user: ada.id, read: true, write: true }] }))
        await row.save(null, master)
      }
      await forAda('before the logout')
      await client.next((message) => message.op === 'create' && message.object.text === 'before the logout')
      const out = await kit.request('POST', '/parse/logout', { headers: { ...masterHeaders, 'x-parse-session-token': ada.token } })
      t.equal(out.status, 200, 'logged out')
      await new Promise((resolve) => setTimeout(resolve, 5_500))
      await forAda('after the logout')
      const marker = new Ping({ text: 'public' })
      await marker.save(null, master)
      await client.next((message) => message.op === 'create' && message.object.text === 'public')
      t.notOk(client.messages.some((message) => message.object?.text === 'after the logout'), 'the row only ada may read is not sent once the cache entry has expired')
      client.ws.close()
    })

    t.test('app.close() ends within 2 s with a subscribed client', async (t) => {
      const client = await connected(url)
      sockets.push(client.ws)
      subscribe(client, 1, 'Ping')
      await client.next((message) => message.op === 'subscribed')
      const started = Date.now()
      await kit.app.close()
      const took = Date.now() - started
      t.ok(took < 2_000, `closed in ${took} ms`)
      t.not(client.ws.readyState, WebSocket.OPEN, 'the client was disconnected')
    })
  })
}

// LiveQuery and what the kit reports about itself, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - live-query: this file's own tests (first part, its comment kept)
// - test/metrics.test.ts (merged here): The `metrics` option against the real server and database: after a mix of …
import t from 'tap'
import { spawn, type ChildProcess, spawnSync } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import WebSocket from 'ws'
import { BaseModel, BeforeSubscribe, ParseClass, ParseField, implementACL, CloudFunction, ParseVersionField, Route, withTransaction } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { APP_ID, appHeaders, startKit, lane } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { createServer, type Server } from 'node:net'
import { readFileSync } from 'node:fs'
import { freePort } from '../lib/storage/free-port.js'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { redisAnswers } from './helpers/redis-ping.js'
import { scaled } from './helpers/time-scale.js'

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
  const kit = await startKit(t, { models: [Chirp], liveQuery: { classNames: ['Chirp'] } }, {
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
    await until('each mistake to be answered', () => messages.filter((message) => message.op === 'error').length >= 5)
    await until('the mistakes to be logged', () => lines.filter((line) => /unable to parse request|Connect message error|Can not find/.test(line.msg)).length >= 3)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /unable to parse request|Connect message error|Key in request|Can not find/.test(line.msg))
    t.ok(logged.length >= 4, `each mistake is still logged (${logged.length} lines)`)
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

// What lib/rate-limit-stores.ts relies on in @fastify/rate-limit: its two
// store files, reachable by path (the package has no exports map), their
// constructors' argument positions, `incr`'s arguments and answer, and how
// the plugin builds a store (`new Store(params)`, then `child(params)` per
// route). After an upgrade of the plugin, a failure here names what moved.
// The Redis counter runs against a redis-server of its own when one is installed.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Redis } from 'ioredis'
import { localCounter, redisCounter, type Counted, type RateCounter } from '../lib/rate-limit-stores.js'
import { freePort } from '../lib/storage/free-port.js'
import { redisAnswers } from './helpers/redis-ping.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

const require = createRequire(import.meta.url)
const PACKAGE_DIR = path.dirname(require.resolve('@fastify/rate-limit/package.json'))
const source = (file: string) => readFileSync(path.join(PACKAGE_DIR, file), 'utf8')

const count = (counter: RateCounter, key: string, timeWindow: number, max: number) => new Promise<Counted>((resolve, reject) => {
  // Copied at once: LocalStore answers its own record, which the next hit changes.
  counter.incr(key, (error, result) => { if (error) reject(error); else resolve({ current: result!.current, ttl: result!.ttl }) }, timeWindow, max)
})

t.test('the package: no exports map, so the store files are reachable by path', async (t) => {
  const manifest = JSON.parse(source('package.json')) as { exports?: unknown }
  t.equal(manifest.exports, undefined, '@fastify/rate-limit has no exports map')
})

t.test('the stores\' constructors and incr, by position', async (t) => {
  t.match(source('store/LocalStore.js'), /function LocalStore \(continueExceeding, exponentialBackoff, cache = \d+\)/, 'LocalStore(continueExceeding, exponentialBackoff, cache)')
  t.match(source('store/RedisStore.js'), /function RedisStore \(continueExceeding, exponentialBackoff, redis, key = /, 'RedisStore(continueExceeding, exponentialBackoff, redis, key)')
  for (const file of ['store/LocalStore.js', 'store/RedisStore.js']) {
    t.match(source(file), /\.prototype\.incr = function \(ip, cb, timeWindow, max\)/, `${file}: incr(key, done, timeWindow, max)`)
  }
  t.match(source('store/RedisStore.js'), /cb\(null, \{ current: result\[0\], ttl: result\[1\] \}\)/, 'RedisStore answers { current, ttl }')
  const plugin = source('index.js')
  t.match(plugin, /new Store\(globalParams\)/, 'the plugin builds the store option as a class, with the global params')
  t.match(plugin, /\.store\.child\(mergedRateLimitParams\)/, 'and asks it for a child per route')
})

t.test('localCounter counts hits in its window', async (t) => {
  const counter = localCounter({ continueExceeding: false, exponentialBackoff: false })
  const first = await count(counter, 'k', 60_000, 5)
  const second = await count(counter, 'k', 60_000, 5)
  t.equal(first.current, 1)
  t.equal(second.current, 2, 'the same key counts on')
  t.ok(second.ttl > 0 && second.ttl <= 60_000, 'ttl: the ms left in the window')
  t.equal((await count(counter, 'other', 60_000, 5)).current, 1, 'another key counts apart')
})

const redisInstalled = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0

t.test('redisCounter counts hits in Redis under its key prefix', { skip: !redisInstalled && 'needs redis-server' }, async (t) => {
  const port = await freePort()
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(async () => {
    if (server.exitCode !== null) return
    server.kill('SIGTERM')
    await once(server, 'exit')
  })
  await until('redis-server to answer', async () => await redisAnswers(port), scaled(10_000))
  const redis = new Redis(port, '127.0.0.1')
  t.teardown(() => redis.disconnect())
  const counter = redisCounter({ continueExceeding: false, exponentialBackoff: false }, redis, 'fpk-test:')
  t.equal((await count(counter, 'k', 60_000, 5)).current, 1)
  const second = await count(counter, 'k', 60_000, 5)
  t.equal(second.current, 2, 'the same key counts on')
  t.ok(second.ttl > 0 && second.ttl <= 60_000, 'ttl: the ms left in the window')
  t.equal(await redis.get('fpk-test:k'), '2', 'the count lives in Redis under the prefix')
})

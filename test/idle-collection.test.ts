// The idleCollection option (lib/host/idle-collection.ts): once a server that
// has served requests goes quiet for the given seconds, one memory-reducing
// collection gives the heap the load grew back; a server that served nothing
// is left alone, and the timer stops with the server. The young generation
// the collection shrinks grows back on the first request after it
// (lib/host/young-generation.ts).
import t from 'tap'
import { Writable } from 'node:stream'
import { resolveOptions } from '../lib/options.js'
import { collectAllGarbage } from '../lib/host/idle-collection.js'
import { YoungGenerationRegrowth, youngGenerationSize } from '../lib/host/young-generation.js'
import { startKit, appHeaders, masterHeaders } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

const base = { appId: 'a', masterKey: 'm' }

t.test('idleCollection: off by default; whole seconds or false; anything else refused at boot', async (t) => {
  t.equal(resolveOptions(base).idleCollection, false)
  t.equal(resolveOptions({ ...base, idleCollection: false }).idleCollection, false)
  t.same(resolveOptions({ ...base, idleCollection: 30 }).idleCollection, { afterSeconds: 30 })
  for (const bad of [0, -1, 1.5, 86_401, '30', true]) {
    t.throws(() => resolveOptions({ ...base, idleCollection: bad } as never),
      { code: 'FPK_ERR_OPTION_INVALID', message: /"idleCollection": must be a whole number of seconds from 1 to 86400, or false/ }, `refused: ${JSON.stringify(bad)}`)
  }
})

t.test('the collection gives back the old space that dropped garbage grew', async (t) => {
  // Objects that live long enough to be promoted, then dropped: the old space grows and is left mostly empty.
  const kept: unknown[] = []
  let batch: unknown[] = []
  for (let i = 0; i < 2_000_000; i++) {
    const entry = { i, text: `entry ${i}`, pair: [i, i + 1] }
    if (i % 20 === 0) kept.push(entry)
    else batch.push(entry)
    if (batch.length > 200_000) batch = []
  }
  batch = []
  const result = await collectAllGarbage()
  t.comment(`heap committed ${result.heapBeforeMB} → ${result.heapAfterMB} MB in ${result.ms} ms`)
  t.ok(result.heapAfterMB < result.heapBeforeMB - 20, `the heap shrank by more than 20 MB (${result.heapBeforeMB} → ${result.heapAfterMB})`)
  t.equal(kept.length, 100_000)
})

/** Light requests: each allocates a few KB; the last few hundred are still alive (in flight) at any moment. */
function lightRequests (count: number): void {
  const inFlight: unknown[] = new Array(300)
  for (let i = 0; i < count; i++) inFlight[i % 300] = { id: i, body: JSON.parse(`{"text":"request ${i}","n":[${i},2,3]}`), parts: new Array(64).fill(i) }
}

t.test('after the collection, light requests grow the young generation straight back to its size before it', async (t) => {
  const MB = (bytes: number) => Math.round(bytes / 2 ** 20 * 10) / 10
  lightRequests(400_000)
  const young = new YoungGenerationRegrowth()
  young.beforeCollection()
  const before = youngGenerationSize()
  await collectAllGarbage()
  young.afterCollection()
  const shrunk = youngGenerationSize()
  t.ok(shrunk < before, `the collection shrank it (${MB(before)} → ${MB(shrunk)} MB)`)
  t.ok(young.owed, 'a regrowth is owed until work comes back')
  t.notOk(young.settle(), 'nothing to put back before it was raised')
  young.raise()
  t.notOk(young.owed, 'raised once')
  // V8's own doubling got 8 of 32 MB back over 20,000 such requests on Node 20 (16 on the bench server).
  lightRequests(20_000)
  t.ok(youngGenerationSize() >= before, `back to ${MB(before)} MB after 20,000 light requests (${MB(youngGenerationSize())} MB)`)
  t.ok(young.settle(), "V8's own growth factor is put back once it has grown back")
  t.notOk(young.settle(), 'and only once')
})

t.test('the regrowth is owed only when the collection shrank the young generation, and kept across a second collection', async (t) => {
  let size = 32
  const young = new YoungGenerationRegrowth(() => size)
  young.beforeCollection()
  young.afterCollection()
  t.notOk(young.owed, 'not shrunk: nothing owed')
  young.beforeCollection()
  size = 1
  young.afterCollection()
  t.ok(young.owed)
  // Another collection before any request: the target stays the size before the first one.
  young.beforeCollection()
  young.afterCollection()
  t.ok(young.owed)
  young.raise()
  size = 16
  t.notOk(young.settle(), 'not back yet: the factor stays raised')
  size = 32
  t.ok(young.settle(), 'back: put back')
  t.notOk(young.owed)
})

t.test('a busy period then quiet: one collection; none before any request or for health checks and scrapes, none after close', async (t) => {
  const lines: Array<{ msg?: string, idleCollection?: { heapBeforeMB: number, heapAfterMB: number, ms: number } }> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    }
  })
  const collections = () => lines.filter((line) => line.msg === 'idle: heap collected and given back')
  const kit = await startKit(t, { idleCollection: 1, metrics: true }, { logger: { level: 'debug', stream } })
  const work = async () => t.equal((await kit.request('GET', '/parse/classes/Thing', { headers: masterHeaders })).status, 200)
  // A readiness probe and a metrics scrape every half second, as a balancer and Prometheus would (more often than the quiet second): not work.
  for (let i = 0; i < 5; i++) {
    t.equal((await kit.request('GET', '/parse/health', { headers: appHeaders })).status, 200)
    t.equal((await kit.request('GET', '/parse/health/live?x=1')).status, 200)
    t.equal((await kit.request('GET', '/metrics')).status, 200)
    await sleep(500)
  }
  await sleep(1500)
  t.equal(collections().length, 0, 'a server that has served nothing but health checks and scrapes is not collected')

  for (let i = 0; i < 5; i++) await work()
  await until('the collection after the quiet second', () => collections().length === 1, scaled(10_000))
  const first = collections()[0].idleCollection!
  t.ok(first.heapBeforeMB > 0 && first.heapAfterMB > 0 && first.ms >= 0, `logged: heap ${first.heapBeforeMB} → ${first.heapAfterMB} MB in ${first.ms} ms`)
  await sleep(2000)
  t.equal(collections().length, 1, 'one collection per busy period: quiet goes on, nothing more')

  await work()
  await until('a second collection after the next busy period', () => collections().length === 2, scaled(10_000))

  await work()
  await kit.app.close()
  await sleep(2000)
  t.equal(collections().length, 2, 'the timer stops with the server')
})

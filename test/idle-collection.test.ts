// The idleCollection option (lib/host/idle-collection.ts): once a server that
// has served requests goes quiet for the given seconds, one memory-reducing
// collection gives the heap the load grew back; a server that served nothing
// is left alone, and the timer stops with the server.
import t from 'tap'
import { Writable } from 'node:stream'
import { resolveOptions } from '../lib/options.js'
import { collectAllGarbage } from '../lib/host/idle-collection.js'
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

t.test('the event loop goes on after a collection: timers and a second collection still run', async (t) => {
  // Disconnecting the inspector session inside HeapProfiler.collectGarbage's callback deadlocks the process (Node 20): this test would then time out.
  await collectAllGarbage()
  let fired = false
  await new Promise<void>((resolve) => setTimeout(() => { fired = true; resolve() }, 20))
  t.ok(fired, 'a timer set after the collection fired')
  t.ok((await collectAllGarbage()).ms >= 0, 'a second collection answered')
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

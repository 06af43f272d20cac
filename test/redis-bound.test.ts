// The Redis bound on its own: a call that runs out of time rejects at the
// bound, starts one outage (one log line), and Redis stays bypassed until a
// PING answers within the bound; then the recovery listeners run and one line
// says Redis is back. (test/cluster.test.ts shows it against a frozen redis-server.)
import t from 'tap'
import { boundRedis, isCommandTimeout, RedisNoAnswerError } from '../lib/cluster/redis-bound.js'
import { createOutageLog } from '../lib/cluster/outage-log.js'
import { until } from './helpers/until.js'

t.test('a call that runs out of time bypasses Redis until a probe answers', async (t) => {
  const lines: string[] = []
  const outage = createOutageLog({ warn: (line) => lines.push(`warn ${line}`), info: (line) => lines.push(`info ${line}`) }, 'redis://cache:6379', 'Meanwhile …')
  let answering = false
  let pings = 0
  const bound = boundRedis({
    timeoutMs: 100,
    outage,
    ping: async () => {
      pings++
      if (!answering) await new Promise(() => {})
      return 'PONG'
    }
  })
  t.teardown(() => bound.close())
  const events: string[] = []
  bound.onBypass(() => events.push('bypass'))
  bound.onRecovery(() => events.push('recovery'))

  t.equal(await bound.within('Parse cache', Promise.resolve('hit')), 'hit', 'an answer within the bound passes through')
  t.notOk(bound.bypassed)

  const started = Date.now()
  const error = await bound.within('Parse cache', new Promise(() => {})).then(() => undefined, (reason: unknown) => reason)
  t.ok(error instanceof RedisNoAnswerError, 'an unanswered call rejects')
  t.ok(isCommandTimeout(error), 'as a command timeout')
  t.ok(Date.now() - started >= 90, 'at the bound')
  t.ok(bound.bypassed, 'Redis is bypassed from then on')
  bound.noAnswer('rate limits')
  await bound.within('role evictions', new Promise(() => {})).catch(() => {})
  t.same(events, ['bypass'], 'one bypass, however many calls run out')
  t.equal(lines.length, 1, 'one log line')
  t.match(lines[0], /^warn \[redis\] lost redis:\/\/cache:6379 \(no answer: Parse cache waited 100 ms\)/)

  await until('two unanswered probes', () => pings >= 2)
  t.ok(bound.bypassed, 'still bypassed while the probes go unanswered')
  answering = true
  await until('the bypass to end', () => !bound.bypassed)
  t.same(events, ['bypass', 'recovery'], 'the recovery listeners run once Redis answers')
  t.match(lines[1], /^info \[redis\] reconnected to redis:\/\/cache:6379/)
  t.ok(isCommandTimeout(new Error('Command timed out')), 'ioredis\' commandTimeout error counts too')
})

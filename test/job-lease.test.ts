// The schedule lease on the running kit's database (PostgreSQL, or MongoDB on
// the mongo lane): a tick is claimed once, a held lease makes the next tick
// "busy" (skipped), only the holder releases it, and an expired one is taken over.
import t from 'tap'
import { openJobLeases, type JobLeases } from '../lib/storage/job-lease.js'
import { startKit } from './helpers/kit.js'
import { sleep } from './helpers/until.js'

let leases: JobLeases
const tick = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second))

t.before(async () => {
  const kit = await startKit(t, { jobs: { schedules: false } })
  leases = await openJobLeases(kit.app.kit.state)
})

t.test('one claim per tick; a held lease makes later ticks busy until its holder releases it', async (t) => {
  const key = 'test:sequence'
  t.equal(await leases.claim(key, tick(1), 'a', 60_000), 'claimed')
  t.equal(await leases.claim(key, tick(1), 'b', 60_000), 'taken', 'the same tick again')
  t.equal(await leases.claim(key, tick(0), 'b', 60_000), 'taken', 'an older tick')
  t.equal(await leases.claim(key, tick(2), 'b', 60_000), 'busy', 'the next tick while a still runs')
  t.equal(await leases.claim(key, tick(2), 'c', 60_000), 'taken', 'a busy tick is reported once')
  await leases.release(key, 'b')
  t.equal(await leases.claim(key, tick(3), 'b', 60_000), 'busy', 'only the holder releases')
  await leases.renew(key, 'a', 60_000)
  await leases.release(key, 'a')
  t.equal(await leases.claim(key, tick(4), 'b', 60_000), 'claimed', 'free again after the release')
  t.equal((await leases.lastTick(key))?.toISOString(), tick(4).toISOString())
  t.equal(await leases.lastTick('test:never'), undefined)
})

t.test('a lease that expires (its holder crashed) is taken over at the next tick', async (t) => {
  const key = 'test:expiry'
  t.equal(await leases.claim(key, tick(1), 'crashed', 1_000), 'claimed')
  await sleep(1_500)
  t.equal(await leases.claim(key, tick(2), 'b', 60_000), 'claimed')
})

t.test('many instances at once: exactly one claims the tick', async (t) => {
  const key = 'test:race'
  const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.claim(key, tick(10), `holder-${i}`, 60_000)))
  t.equal(claims.filter((claim) => claim === 'claimed').length, 1, claims.join(', '))
  t.equal(claims.filter((claim) => claim === 'busy').length, 0, 'nobody else moves the tick on')
})

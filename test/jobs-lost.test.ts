// A run whose instance is killed outright (SIGKILL) is marked failed "instance
// lost" by another instance once its lease expires, and retried there; so is a
// run whose instance died before it took its lease, once its row has said
// "running" without one for long enough. It used to time out intermittently on
// a loaded machine (after the SIGTERM test, now in jobs-cluster.test.ts, in one
// process, and alone): the kill landed once Parse had marked the row running but
// before the handler wrote the lease, so no lease ever expired. It now kills
// once the lease exists, and that window is the second case (which waits the
// minute the survivor must see such a row without a lease).
import t from 'tap'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { jobStatuses, startJob } from './helpers/job-status.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

t.test('SIGKILL of the instance running a job: another instance marks the run failed "instance lost" once its lease expires, and retries it; a running run that never took a lease likewise, once its bound has passed', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('jobs_lost')
  const env = { DATABASE_URI: databaseURI, SCHEDULES: 'off', LEASE_MS: '2000' }
  const [holder, survivor] = await Promise.all([startJobsInstance('H', env, undefined, { compiled: true }), startJobsInstance('S', env, undefined, { compiled: true })])
  t.teardown(() => Promise.all([holder.stop(), survivor.stop()]))
  const status = await jobStatuses(t, databaseURI)

  const first = await startJob(t, holder.origin, 'resumable')
  // Killed once its lease exists (the row says "running" a few awaits before): this case is a run that holds one.
  await until('the run to hold its lease', async () => (await status.one(first))?.status === 'running' && await status.leased(first), scaled(30_000))
  holder.child.kill('SIGKILL')
  await holder.exited

  await until('the lost run to be reported', async () => (await status.one(first))?.status !== 'running', scaled(30_000))
  const lost = await status.one(first)
  t.equal(lost.status, 'failed', 'the lost run is failed')
  t.equal(lost.message, 'instance lost')
  t.ok(lost.finishedAt, 'with its finish time')

  await until('the retry to finish', async () => (await status.of('resumable')).some((row) => row.objectId !== first && row.status === 'succeeded'), scaled(30_000))
  const retry = (await status.of('resumable')).find((row) => row.objectId !== first)!
  t.equal(retry.message, 'attempt 2 finished on S', 'the retry ran on the surviving instance as attempt 2')
  t.match(survivor.output(), /run \w+ of resumable was lost with its instance .* during attempt 1 of 2; marked failed \\?"instance lost\\?"; retried as run \w+ \(attempt 2 of 2\)/, 'the survivor says so')

  // Parse marked the rows "running", then the instance died before the kit's handler wrote the lease: a run in its
  // first attempt, and one in its last (a retry of an earlier loss). Their createdAt, ten minutes back, proves nothing
  // (the clock of the instance that began them): the survivor takes them once it has seen them without a lease for
  // max(3 x leaseMs, 60 s) on its own clock.
  const old = await status.insertRunning('resumable', {}, 10 * 60_000)
  const last = await status.insertRunning('resumable', { __attempt: 2 }, 10 * 60_000)
  // One whose lease is written a moment after Parse marked it running is healthy, however old its createdAt: left alone.
  const young = await status.insertRunning('resumable', {}, 10 * 60_000)
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  await status.hold(young, 'resumable', 'Y')
  await until('the run without a lease to be reported', async () => (await status.one(old))?.status !== 'running', 60_000 + scaled(30_000))
  t.match(await status.one(old), { status: 'failed', message: 'instance lost' }, 'the old running row with no lease is failed "instance lost"')
  t.ok((await status.one(old)).finishedAt, 'with its finish time')
  t.equal((await status.one(young))?.status, 'running', 'the run that took its lease a moment after it began is not reported')
  const said = new RegExp(`run ${old} of resumable was lost with its instance before it took its lease .* during attempt 1 of 2; marked failed \\\\?"instance lost\\\\?"; retried as run (\\w+) \\(attempt 2 of 2\\)`)
  await until('the survivor to say so', () => said.test(survivor.output()), scaled(30_000))
  const retried = said.exec(survivor.output())![1]
  await until('its retry to finish', async () => (await status.one(retried))?.status === 'succeeded', scaled(30_000))
  t.equal((await status.one(retried)).message, 'attempt 2 finished on S', 'retried on the surviving instance as attempt 2')

  // The one in its last attempt: failed, and not run again.
  const spent = new RegExp(`run ${last} of resumable was lost with its instance before it took its lease .* during attempt 2 of 2; marked failed \\\\?"instance lost\\\\?", its retries spent`)
  await until('the run in its last attempt to be reported', () => spent.test(survivor.output()), scaled(30_000))
  t.match(await status.one(last), { status: 'failed', message: 'instance lost' }, 'the run in its last attempt is failed "instance lost"')
  t.equal((await status.of('resumable')).filter((row) => row.status === 'running' && row.objectId !== young).length, 0, 'and nothing runs it again')
})

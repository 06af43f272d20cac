// A run whose instance is killed outright (SIGKILL) is marked failed "instance
// lost" by another instance once its lease expires, and retried there. In a
// file of its own: after the SIGTERM test (now in jobs-cluster.test.ts) in the same
// process it timed out intermittently (kept apart while that is looked into).
import t from 'tap'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { jobStatuses, startJob } from './helpers/job-status.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

t.test('SIGKILL of the instance running a job: another instance marks the run failed "instance lost" once its lease expires, and retries it', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('jobs_lost')
  const env = { DATABASE_URI: databaseURI, SCHEDULES: 'off', LEASE_MS: '2000' }
  const [holder, survivor] = await Promise.all([startJobsInstance('H', env), startJobsInstance('S', env)])
  t.teardown(() => Promise.all([holder.stop(), survivor.stop()]))
  const status = await jobStatuses(t, databaseURI)

  const first = await startJob(t, holder.origin, 'resumable')
  await until('the run to be running', async () => (await status.one(first))?.status === 'running', scaled(30_000))
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
})

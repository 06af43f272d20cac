// SIGTERM and SIGKILL in the middle of jobs, on the generated server
// (fixtures/serve.ts through test/helpers/jobs-node.ts). With the default
// grace, a run that ends within it finishes and is recorded as succeeded; one
// that does not is marked failed "interrupted by shutdown" when the grace is
// spent; and the process exits 0 (the server's force exit leaves room for the
// grace). A run whose instance is killed outright: test/jobs-lost.test.ts.
import t from 'tap'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { jobStatuses, startJob } from './helpers/job-status.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

const DEFAULT_GRACE_MS = 10_000

t.test('SIGTERM mid-job with the default grace: the brief run finishes, the endless one is "interrupted by shutdown", and the server exits 0', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('jobs_shutdown')
  const instance = await startJobsInstance('C', { DATABASE_URI: databaseURI, SCHEDULES: 'off' })
  t.teardown(() => instance.stop())
  const status = await jobStatuses(t, databaseURI)

  const endless = await startJob(t, instance.origin, 'endless')
  await until('the endless run to be running', async () => (await status.one(endless))?.status === 'running', scaled(30_000))
  const brief = await startJob(t, instance.origin, 'brief')
  await until('the brief run to be running', async () => (await status.one(brief))?.status === 'running', scaled(30_000))

  const signalled = Date.now()
  instance.child.kill('SIGTERM')
  const [code, signal] = await Promise.race([
    instance.exited as Promise<[number | null, string | null]>,
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`the process did not end by itself after SIGTERM:\n${instance.output()}`)), scaled(120_000)).unref())
  ])
  const took = Date.now() - signalled
  if (code !== 0) t.comment(instance.output())
  t.equal(code, 0, 'it exits 0: the force exit leaves room for the jobs\' grace')
  t.equal(signal, null)
  t.ok(took >= DEFAULT_GRACE_MS - 500, `it waited for the grace time first (${took} ms)`)
  t.match(instance.output(), /"msg":"closed"/, 'the app closed')
  t.match(instance.output(), /interrupted by shutdown after 10000 ms: endless/, 'the interruption is logged')
  // test/helpers/jobs-node.ts logs "closed" from an onClose hook of its own, as an application closes its pools.
  const output = instance.output()
  const interrupted = output.indexOf('interrupted by shutdown after')
  t.ok(interrupted >= 0 && interrupted < output.indexOf('"msg":"closed"'), 'the jobs\' grace ended before the application\'s onClose hook ran')
  t.notMatch(instance.output(), /killed by timeout/, 'the force exit never fired')

  const briefStatus = await status.one(brief)
  t.equal(briefStatus.status, 'succeeded', 'the brief run finished within the grace')
  t.equal(briefStatus.message, 'brief finished')
  const endlessStatus = await status.one(endless)
  t.equal(endlessStatus.status, 'failed', 'the endless run is failed')
  t.equal(endlessStatus.message, 'interrupted by shutdown')
  t.ok(endlessStatus.finishedAt, 'with its finish time')
})

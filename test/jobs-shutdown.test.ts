// SIGTERM in the middle of jobs: a run that ends within the shutdown grace
// finishes and is recorded as succeeded; one that does not is marked failed
// "interrupted by shutdown" when the grace is spent; and the process then ends
// by itself (the test instance never calls process.exit).
import t from 'tap'
import pg from 'pg'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { MASTER_KEY, APP_ID, httpRequest } from './helpers/kit.js'
import { until } from './helpers/until.js'

const GRACE_MS = 6_000
const headers = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }

t.test('SIGTERM mid-job: grace for the brief run, "interrupted by shutdown" for the endless one, then the process ends', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('jobs_shutdown')
  const instance = await startJobsInstance('C', { DATABASE_URI: databaseURI, GRACE_MS: String(GRACE_MS), SCHEDULES: 'off' })
  t.teardown(() => instance.stop())

  const start = async (name: string) => {
    const response = await httpRequest(instance.origin, 'POST', `/parse/jobs/${name}`, { headers, body: {} })
    t.equal(response.status, 200, `${name} started`)
    return response.headers.get('x-parse-job-status-id')!
  }
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  const status = async (id: string) => (await client.query<{ status: string, message: string | null, finishedAt: Date | null }>(
    'SELECT status, message, "finishedAt" FROM "_JobStatus" WHERE "objectId" = $1', [id])).rows[0]

  const endless = await start('endless')
  await until('the endless run to be running', async () => (await status(endless))?.status === 'running', 30_000)
  const brief = await start('brief')
  await until('the brief run to be running', async () => (await status(brief))?.status === 'running', 30_000)

  const signalled = Date.now()
  instance.child.kill('SIGTERM')
  const [code, signal] = await Promise.race([
    instance.exited as Promise<[number | null, string | null]>,
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`the process did not end by itself after SIGTERM:\n${instance.output()}`)), 120_000).unref())
  ])
  const took = Date.now() - signalled
  t.equal(code, 0, 'it ends with code 0, by itself')
  t.equal(signal, null)
  t.ok(took >= GRACE_MS - 500, `it waited for the grace time first (${took} ms)`)
  t.match(instance.output(), /closed/, 'the app closed')
  t.match(instance.output(), /interrupted by shutdown after 6000 ms: endless/, 'the interruption is logged')

  const briefStatus = await status(brief)
  t.equal(briefStatus.status, 'succeeded', 'the brief run finished within the grace')
  t.equal(briefStatus.message, 'brief finished')
  const endlessStatus = await status(endless)
  t.equal(endlessStatus.status, 'failed', 'the endless run is failed')
  t.equal(endlessStatus.message, 'interrupted by shutdown')
  t.ok(endlessStatus.finishedAt, 'with its finish time')
})

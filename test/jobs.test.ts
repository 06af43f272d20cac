// Jobs on one kit: Parse's job machinery runs the declared methods (POST
// {mount}/jobs/{name}, the SDK's startJob from another process), _JobStatus
// records each run with its params and outcome, retries and time limits apply,
// a Dashboard schedule runs until its row is deleted, ttlSeconds expires rows
// on PostgreSQL, jobs stay out of the API document, and declaration mistakes
// fail at import with their codes. And, from the former job-lease.test.ts, the
// schedule lease on this kit's database (PostgreSQL, or MongoDB on the mongo
// lane): a tick is claimed once, a held lease makes the next tick "busy"
// (skipped), only the holder releases it, and an expired one is taken over
// (its keys, test:*, are no job's).
import t from 'tap'
import { execFile } from 'node:child_process'
import { Writable } from 'node:stream'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Parse from 'parse/node'
import {
  BaseModel, Cron, Job, ParseClass, ParseField, afterCommit, withTransaction, type JobRequest
} from '../lib/index.js'
import { openJobLeases } from '../lib/storage/job-lease.js'
import { APP_ID, MASTER_KEY, lane, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const run = promisify(execFile)

@ParseClass('JobNote')
class JobNote extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}

@ParseClass('Token')
class Token extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Date', ttlSeconds: 2 }) declare expiresAt: Date
}

const seen = {
  flakyAttempts: 0,
  failingAttempts: 0,
  scheduled: [] as Array<{ at: string | undefined, source: string, params: unknown }>,
  afterCommit: 0,
  stubborn: [] as Array<{ attempt: number, started: number, stopped?: number }>,
  /** Ends the run of `held` going on. */
  release: () => {}
}

/** The kit's log lines (JSON, from level debug), for the tests that read what a job logged. */
const logLines: Array<{ level: number, msg: string, err?: { stack?: string } }> = []
const logStream = new Writable({
  write (chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      try { logLines.push(JSON.parse(line)) } catch {}
    }
    done()
  }
})

class Chores {
  @Job({ description: 'echoes its params' })
  static async echo (request: JobRequest<{ word: string }>) {
    await request.message(`working on ${request.params.word}`)
    return `done: ${request.params.word}`
  }

  @Job()
  static async explode () {
    throw new Error('the chore exploded')
  }

  @Job({ retries: 2, backoffMs: 50 })
  static async flaky () {
    seen.flakyAttempts++
    if (seen.flakyAttempts < 3) throw new Error(`flaky failure ${seen.flakyAttempts}`)
    return `succeeded on attempt ${seen.flakyAttempts}`
  }

  @Job({ name: 'failing', retries: 1, backoffMs: 50 })
  static async alwaysFails () {
    seen.failingAttempts++
    throw new Error(`failure ${seen.failingAttempts}`)
  }

  @Job({ timeoutMs: 300 })
  static async slow (request: JobRequest) {
    await new Promise((resolve) => { request.signal.addEventListener('abort', resolve); setTimeout(resolve, 30_000).unref() })
  }

  /** Takes 400 ms to stop after its signal aborts: its retry must wait for that. */
  @Job({ timeoutMs: 200, retries: 1, backoffMs: 0 })
  static async stubborn (request: JobRequest) {
    const entry: { attempt: number, started: number, stopped?: number } = { attempt: request.attempt, started: Date.now() }
    seen.stubborn.push(entry)
    await new Promise((resolve) => { request.signal.addEventListener('abort', resolve); setTimeout(resolve, 30_000).unref() })
    await sleep(400)
    entry.stopped = Date.now()
  }

  /** Goes on until the test releases it. */
  @Job()
  static async held () {
    await new Promise<void>((resolve) => { seen.release = resolve; setTimeout(resolve, 60_000).unref() })
  }

  @Job()
  static async transactional (request: JobRequest<{ text: string }>) {
    await withTransaction(async () => {
      await new JobNote().save({ text: request.params.text }, { useMasterKey: true })
      await afterCommit(() => { seen.afterCommit++ })
    })
  }

  @Job()
  static async fromDashboard (request: JobRequest) {
    seen.scheduled.push({ at: request.scheduledAt?.toISOString(), source: request.source, params: request.params })
  }
}

let kit: Kit

async function startJob (name: string, body: unknown = {}): Promise<string> {
  const response = await kit.request('POST', `/parse/jobs/${name}`, { headers: masterHeaders, body })
  if (response.status !== 200) throw new Error(`POST /jobs/${name} answered ${response.status}: ${response.text}`)
  const id = response.headers.get('x-parse-job-status-id')
  if (!id) throw new Error('no X-Parse-Job-Status-Id header')
  return id
}

async function jobStatus (id: string): Promise<Record<string, any>> {
  const response = await kit.request('GET', `/parse/classes/_JobStatus/${id}`, { headers: masterHeaders })
  return response.json
}

async function finalStatus (id: string): Promise<Record<string, any>> {
  let status: Record<string, any> = {}
  await until(`job ${id} to finish`, async () => {
    status = await jobStatus(id)
    return status.status === 'succeeded' || status.status === 'failed'
  }, scaled(60_000))
  return status
}

t.before(async () => {
  kit = await startKit(t, {
    models: [JobNote, Token],
    functions: [Chores],
    docs: { title: 'API', version: '1' },
    metrics: true,
    jobs: { dashboardPollMs: 300, ttlSweep: '* * * * * *' }
  }, { logger: { level: 'debug', stream: logStream } })
})

t.test('POST {mount}/jobs/{name} with the master key runs the job; _JobStatus ends succeeded with params and message', async (t) => {
  const id = await startJob('echo', { word: 'hello' })
  const status = await finalStatus(id)
  t.equal(status.jobName, 'echo')
  t.equal(status.status, 'succeeded')
  t.equal(status.message, 'done: hello', 'the returned text is the final message')
  t.same(status.params, { word: 'hello' }, 'the params are recorded')
  t.ok(status.createdAt && status.finishedAt?.iso, 'start and finish times')
  t.ok(Date.parse(status.finishedAt.iso) >= Date.parse(status.createdAt))
})

t.test('Parse Dashboard\'s "Run now" (POST {mount}/jobs with the job in the body): the job gets the Dashboard\'s input as params', async (t) => {
  const response = await kit.request('POST', '/parse/jobs', {
    headers: masterHeaders,
    body: { description: 'Executing from job schedule web console.', input: { word: 'dashboard' }, jobName: 'echo', when: 0 }
  })
  t.equal(response.status, 200, response.text)
  const status = await finalStatus(response.headers.get('x-parse-job-status-id')!)
  t.equal(status.message, 'done: dashboard')
  t.same(status.params, { word: 'dashboard' })
})

t.test('without the master key a job is refused, never run', async (t) => {
  const response = await kit.request('POST', '/parse/jobs/echo', { headers: { 'x-parse-application-id': APP_ID }, body: { word: 'x' } })
  t.not(response.status, 200)
  t.not(response.status, 500)
  t.type(response.json?.code, 'number', `{code, error}: ${response.text}`)
})

t.test('an unknown job answers {code, error}, not a 500', async (t) => {
  const response = await kit.request('POST', '/parse/jobs/noSuchJob', { headers: masterHeaders, body: {} })
  t.equal(response.status, 400)
  t.match(response.json, { code: Parse.Error.SCRIPT_FAILED, error: 'Invalid job.' })
})

t.test('the SDK in another process: Parse.Cloud.startJob returns the status id, and the run ends as the job does', async (t) => {
  const serverURL = `${kit.origin}/parse`
  const call = async (name: string, params: object) => {
    const { stdout } = await run(process.execPath, [path.join(here, 'helpers', 'sdk-start-job.mjs'), serverURL, APP_ID, MASTER_KEY, name, JSON.stringify(params)], { timeout: scaled(120_000) })
    return JSON.parse(stdout) as { ok: boolean, id?: string, headerId?: string, message?: string }
  }
  const started = await call('echo', { word: 'sdk' })
  t.ok(started.ok, `startJob resolved (${started.message ?? ''})`)
  // The SDK reads the id from a header CORS must expose; the same request's raw header always has it.
  const id = started.id ?? started.headerId
  t.match(id, /^[A-Za-z0-9]{10}$/, 'a _JobStatus id')
  t.equal((await finalStatus(id!)).status, 'succeeded')

  const failed = await call('explode', {})
  const failedId = failed.id ?? failed.headerId
  const status = await finalStatus(failedId!)
  t.equal(status.status, 'failed')
  t.equal(status.message, 'the chore exploded', 'the error message is recorded')
})

t.test('retries: a job that fails twice then succeeds ends succeeded after 3 attempts', async (t) => {
  const status = await finalStatus(await startJob('flaky'))
  t.equal(status.status, 'succeeded')
  t.equal(seen.flakyAttempts, 3)
  t.equal(status.message, 'succeeded on attempt 3')
})

t.test('retries spent: the run fails with the last error, after 1 + retries attempts', async (t) => {
  const status = await finalStatus(await startJob('failing'))
  t.equal(status.status, 'failed')
  t.equal(status.message, 'failure 2')
  t.equal(seen.failingAttempts, 2)
})

t.test('timeoutMs: an attempt that runs too long fails with "timed out"', async (t) => {
  const status = await finalStatus(await startJob('slow'))
  t.equal(status.status, 'failed')
  t.equal(status.message, 'timed out after 300 ms')
})

t.test('timeoutMs: a timed-out attempt is aborted, and its retry starts only once it has stopped', async (t) => {
  const status = await finalStatus(await startJob('stubborn'))
  t.equal(status.status, 'failed')
  t.equal(status.message, 'timed out after 200 ms')
  t.equal(seen.stubborn.length, 2, 'two attempts')
  const [first, second] = seen.stubborn
  t.ok(first.stopped, 'the first attempt stopped')
  t.ok(second.started >= first.stopped!, 'the retry began after the first attempt stopped, never beside it')
})

t.test('a failing job logs its start (debug), each retry (warn) and its failure (error, with the stack), and counts in the metrics', async (t) => {
  const id = await startJob('failing')
  t.equal((await finalStatus(id)).status, 'failed')
  const mine = () => logLines.filter((line) => typeof line.msg === 'string' && line.msg.includes(`run ${id}`))
  await until('the failure line', () => mine().some((line) => line.level === 50))
  const started = mine().find((line) => line.msg.includes('started'))
  t.equal(started?.level, 20, `the start at debug: ${started?.msg}`)
  const retried = mine().filter((line) => line.level === 40)
  t.equal(retried.length, 1, 'one warning for the one retry')
  t.match(retried[0]?.msg, /\[jobs\] failing: attempt 1 of 2 of run \w+ failed: failure \d+; retrying in 50 ms/)
  const failed = mine().filter((line) => line.level === 50)
  t.equal(failed.length, 1, 'one error for the failure')
  t.match(failed[0]?.msg, /\[jobs\] failing: run \w+ failed: failure \d+/)
  t.match(failed[0]?.err?.stack, /Error: failure \d+\n\s+at /, 'with the stack')

  await finalStatus(await startJob('echo', { word: 'metrics' }))
  const metrics = await kit.request('GET', '/metrics')
  t.equal(metrics.status, 200)
  const value = (pattern: RegExp) => Number(pattern.exec(metrics.text)?.[1])
  t.ok(value(/^fpk_job_runs_total\{job="failing",status="failed"\} (\d+)$/m) >= 1, 'fpk_job_runs_total counts the failed run')
  t.ok(value(/^fpk_job_runs_total\{job="echo",status="succeeded"\} (\d+)$/m) >= 1, 'and the succeeded ones')
  t.ok(value(/^fpk_job_duration_seconds_count\{job="failing",status="failed"\} (\d+)$/m) >= 1, 'fpk_job_duration_seconds observes each run')
  t.ok(value(/^fpk_job_last_success_timestamp_seconds\{job="echo"\} ([\d.e+]+)$/m) * 1000 > Date.now() - 600_000, 'fpk_job_last_success_timestamp_seconds says when echo last succeeded')
  t.notOk(/fpk_job_last_success_timestamp_seconds\{job="failing"\}/.test(metrics.text), 'never for a job that never succeeded')
})

t.test('a job may use withTransaction and afterCommit', async (t) => {
  const status = await finalStatus(await startJob('transactional', { text: 'in a transaction' }))
  t.equal(status.status, 'succeeded', status.message)
  const found = await kit.request('GET', `/parse/classes/JobNote?where=${encodeURIComponent(JSON.stringify({ text: 'in a transaction' }))}`, { headers: masterHeaders })
  t.equal(found.json.results.length, 1, 'the row was committed')
  t.equal(seen.afterCommit, 1, 'afterCommit ran once')
})

t.test('Parse Dashboard: a _JobSchedule row makes the job run on its schedule; deleting it stops it', async (t) => {
  const listed = await kit.request('GET', '/parse/cloud_code/jobs/data', { headers: masterHeaders })
  t.ok(listed.json.jobs.includes('fromDashboard'), 'the Dashboard lists the declared job')
  // As the Dashboard writes it; repeatMinutes 0.05 is every 3 seconds (the Dashboard's own form offers whole minutes).
  const created = await kit.request('POST', '/parse/cloud_code/jobs', {
    headers: masterHeaders,
    body: { job_schedule: { jobName: 'fromDashboard', description: 'test', params: '{"color":"blue"}', daysOfWeek: [1, 1, 1, 1, 1, 1, 1], timeOfDay: '00:00:00.000Z', repeatMinutes: 0.05 } }
  })
  t.equal(created.status, 201, created.text)
  await until('two scheduled runs', () => seen.scheduled.length >= 2, scaled(60_000))
  t.same(seen.scheduled[0].params, { color: 'blue' }, 'the schedule\'s params')
  t.equal(seen.scheduled[0].source, 'schedule')
  t.equal(new Date(seen.scheduled[0].at!).getTime() % 3000, 0, 'ticks fall on the schedule (every 3 s from midnight)')
  t.equal(new Set(seen.scheduled.map((entry) => entry.at)).size, seen.scheduled.length, 'no tick runs twice')

  const deleted = await kit.request('DELETE', `/parse/cloud_code/jobs/${created.json.objectId}`, { headers: masterHeaders })
  t.equal(deleted.status, 200)
  await sleep(1_000) // a run already started may finish
  const after = seen.scheduled.length
  await sleep(7_000)
  t.equal(seen.scheduled.length, after, 'no run after the row is gone')
})

t.test('a one-off Dashboard schedule ("run immediately") runs once', async (t) => {
  const before = seen.scheduled.length
  const created = await kit.request('POST', '/parse/cloud_code/jobs', {
    headers: masterHeaders,
    body: { job_schedule: { jobName: 'fromDashboard', params: '{"once":true}', daysOfWeek: [1, 1, 1, 1, 1, 1, 1] } }
  })
  t.equal(created.status, 201, created.text)
  await until('the one-off run', () => seen.scheduled.length > before, scaled(60_000))
  await sleep(2_000)
  t.equal(seen.scheduled.length, before + 1, 'once')
  t.same(seen.scheduled.at(-1)!.params, { once: true })
})

t.test('ttlSeconds on PostgreSQL: the built-in sweep deletes expired rows in the background', { skip: lane.kind !== 'postgres' && 'MongoDB expires rows with its own TTL index' }, async (t) => {
  const past = new Date(Date.now() - 60_000)
  const future = new Date(Date.now() + 3_600_000)
  for (const [label, expiresAt] of [['old-1', past], ['old-2', past], ['fresh', future]] as const) {
    const saved = await kit.request('POST', '/parse/classes/Token', { headers: masterHeaders, body: { label, expiresAt: { __type: 'Date', iso: expiresAt.toISOString() } } })
    t.equal(saved.status, 201, saved.text)
  }
  const labels = async () => {
    const found = await kit.request('GET', `/parse/classes/Token?where=${encodeURIComponent(JSON.stringify({ label: { $exists: true } }))}`, { headers: masterHeaders })
    return (found.json.results as Array<{ label: string }>).map((row) => row.label).sort()
  }
  await until('expired rows to go', async () => (await labels()).length === 1, scaled(60_000))
  t.same(await labels(), ['fresh'], 'rows past their ttl are gone; the others stay')
  const statuses = await kit.request('GET', `/parse/classes/_JobStatus?where=${encodeURIComponent(JSON.stringify({ jobName: 'kitExpireRows', status: 'succeeded' }))}`, { headers: masterHeaders })
  t.ok(statuses.json.results.length > 0, 'the sweep runs as a job, recorded in _JobStatus')
})

t.test('jobs stay out of the API document', async (t) => {
  const document = await kit.request('GET', '/api-docs/json')
  t.equal(document.status, 200)
  t.notMatch(Object.keys(document.json.paths).join(' '), /jobs|cloud_code/, 'no job paths')
  t.notMatch(document.text, /fromDashboard|flaky|explode/, 'no job names')
})

t.test('declaration mistakes fail at import with an FPK_ERR_* code', async (t) => {
  t.throws(() => {
    class Bad { @Cron('every minute') static tick () {} }
    return Bad
  }, { code: 'FPK_ERR_CRON_EXPRESSION', message: /@Cron on Bad\.tick: "every minute" is not a cron expression/ })
  t.throws(() => {
    class Bad { @Cron('* * * * * * *') static tick () {} }
    return Bad
  }, { code: 'FPK_ERR_CRON_EXPRESSION' }, 'seven fields (years) are not standard')
  t.throws(() => {
    class Bad { @Cron('0 3 * * *', { timezone: 'Mars/Olympus_Mons' }) static tick () {} }
    return Bad
  }, { code: 'FPK_ERR_CRON_TIMEZONE', message: /timezone "Mars\/Olympus_Mons" is not an IANA timezone/ })
  t.throws(() => {
    class Bad { @Cron('0 3 * * *') tick () {} }
    return Bad
  }, { code: 'FPK_ERR_JOB_DECLARATION', message: /@Cron on Bad\.tick: jobs must be static methods/ })
  t.throws(() => {
    class Bad { @Job({ retries: -1 }) static tick () {} }
    return Bad
  }, { code: 'FPK_ERR_JOB_DECLARATION', message: /option "retries" must be a whole number ≥ 0/ })
  t.throws(() => {
    class Bad { @Job({ timeout: 5 } as never) static tick () {} }
    return Bad
  }, { code: 'FPK_ERR_JOB_DECLARATION', message: /option "timeout" is not supported/ })
  t.throws(() => {
    class Bad { @Job() static echo () {} }
    return Bad
  }, { code: 'FPK_ERR_JOB_DECLARATION', message: /job "echo" is declared twice \(Chores\.echo and Bad\.echo\)/ })
})

// From the former job-lease.test.ts: the lease functions on the running kit's database.
const tick = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second))
const openLeases = () => openJobLeases(kit.app.kit.state)

t.test('one claim per tick; a held lease makes later ticks busy until its holder releases it', async (t) => {
  const leases = await openLeases()
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
  const leases = await openLeases()
  const key = 'test:expiry'
  t.equal(await leases.claim(key, tick(1), 'crashed', 1_000), 'claimed')
  await sleep(1_500)
  t.equal(await leases.claim(key, tick(2), 'b', 60_000), 'claimed')
})

t.test('many instances at once: exactly one claims the tick', async (t) => {
  const leases = await openLeases()
  const key = 'test:race'
  const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.claim(key, tick(10), `holder-${i}`, 60_000)))
  t.equal(claims.filter((claim) => claim === 'claimed').length, 1, claims.join(', '))
  t.equal(claims.filter((claim) => claim === 'busy').length, 0, 'nobody else moves the tick on')
})

t.test('running rows without a lease: listed only while so, and each taken (marked failed) by one taker only while still so', async (t) => {
  const leases = await openLeases()
  const id = await startJob('held')
  // Parse marks the row running a few awaits before the handler writes the lease.
  await until('the run to hold its lease', async () => (await jobStatus(id)).status === 'running' && !(await leases.findUnleasedRuns(['held'], 100)).includes(id), scaled(30_000))
  t.same(await leases.takeUnleasedRuns([id], 'instance lost'), [], 'a run holding its lease is not taken')
  await leases.dropRun(id)
  t.ok((await leases.findUnleasedRuns(['held'], 100)).includes(id), 'without its lease it is listed')
  t.same(await leases.findUnleasedRuns(['echo'], 100), [], 'only under its own job')
  t.same(await leases.findUnleasedRuns([], 100), [], 'and not at all for no jobs')
  const takes = await Promise.all([leases.takeUnleasedRuns([id], 'instance lost'), leases.takeUnleasedRuns([id], 'instance lost')])
  t.same(takes.flat().map((run) => run.jobId), [id], 'two takers at once: one takes it')
  t.match(takes.flat()[0], { jobName: 'held', params: {} })
  t.match(await jobStatus(id), { status: 'failed', message: 'instance lost' }, 'its row says failed "instance lost"')
  t.same(await leases.findUnleasedRuns(['held'], 100), [], 'and it is listed no more')
  seen.release()
})

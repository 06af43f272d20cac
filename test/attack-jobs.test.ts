// Jobs, queued work and handler results attacked as an application would:
// what a job throws or returns (an object without a prototype, an Error whose
// message is not text or holds a NUL character), a handler's `throw null`,
// enqueue options past what the queue's columns hold, params JSON cannot
// write, and ids that are not the queue's. Before: a run left its _JobStatus
// row "running" (or ended the process), `throw null` answered Fastify's own
// 500 shape, and enqueue failed with PostgreSQL's bare errors. One kit.
import t from 'tap'
import Parse from 'parse/node'
import { CloudFunction, Job, Route, Transactional, Type, afterCommit, enqueue, listDeadJobs, rerunDeadJob, type CloudRequest, type JobRequest } from '../lib/index.js'
import { CONFLICT } from '../lib/errors.js'
import { dashboardTicks } from '../lib/jobs/ticks.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'
import { appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

/** What the job `odd` does, by its params' `kind`. */
const outcomes: Record<string, () => unknown> = {
  bareObject: () => { throw Object.create(null) },
  objectMessage: () => { const error = new Error('x'); (error as { message: unknown }).message = { a: 1 }; throw error },
  nulMessage: () => { throw new Error('bad\u0000text') },
  nulResult: () => 'done\u0000',
  fine: () => 'fine'
}

class OddJobs {
  @Job()
  static odd (request: JobRequest<{ kind: string }>) { return outcomes[request.params.kind]() }

  @Job()
  static bounded () {}

  @Job()
  static doomed () { throw new Error('always fails') }

  /** Its retry waits 3e9 ms, longer than a timer takes (it was retried at once). */
  @Job({ retries: 1, backoffMs: 3e9 })
  static patient () {
    patientAttempts.count++
    throw new Error('not yet')
  }

  /** A day's limit: longer than the queue's engine keeps a run active (it failed the boot). */
  @Job({ timeoutMs: 24 * 60 * 60_000 })
  static daily () {}

  /** Written to its declaration: fails on every attempt unless its Dates are Dates. */
  @Job({ params: Type.Object({ at: Type.Date(), later: Type.Optional(Type.Object({ list: Type.Array(Type.Date()) })), note: Type.String() }) })
  static dated (request: JobRequest<{ at: Date, later?: { list: Date[] }, note: string }>) {
    const { at, later, note } = request.params
    datedRuns.push([at.getTime(), ...(later?.list ?? []).map((date) => date.getTime()), note])
  }
}

const datedRuns: unknown[][] = []
const patientAttempts = { count: 0 }

@Route('odd')
class OddFunctions {
  @CloudFunction({ methods: ['POST'] })
  static throws (request: CloudRequest) {
    throw (request.params.what === 'null' ? null : undefined)
  }

  /** Saves one row, then an afterCommit callback throws a conflict: the committed body must not run again. */
  @CloudFunction({ methods: ['POST'] })
  @Transactional()
  static async lateConflict (request: CloudRequest) {
    bodies.push(request.params.tag as string)
    await new Parse.Object('LateConflict').save({ tag: request.params.tag }, { useMasterKey: true })
    await afterCommit(() => { throw new Parse.Error(CONFLICT, 'the email service said conflict') })
    return 'saved'
  }
}

const bodies: string[] = []
/** The drain of the kit's close (the last case closes it): requests are still served, and may enqueue. */
const DRAIN_MS = scaled(2_000)
void OddJobs
void OddFunctions

t.test('a Dashboard schedule repeating more often than once a second ticks once a second', async (t) => {
  const after = new Date('2026-03-04T05:06:07.000Z')
  for (const [repeatMinutes, stepMs] of [[0.0001, 1000], [1 / 120, 1000], [0.05, 3000], [1, 60_000]]) {
    const next = dashboardTicks({ objectId: 'x', jobName: 'x', repeatMinutes })
    const first = next(after)!
    t.equal(next(first)!.getTime() - first.getTime(), stepMs, `repeatMinutes ${repeatMinutes}: ${stepMs} ms between ticks`)
  }
})

t.test('@Job retries and backoffMs past what the queue\'s columns hold, and timeoutMs past what a timer holds, fail at import', async (t) => {
  const declare = (options: Record<string, unknown>) => () => { Job(options)(class {}, 'x', { value: () => {} }) }
  t.throws(declare({ retries: 1e10 }), { code: 'FPK_ERR_JOB_DECLARATION', message: /option "retries" must be at most 2147483647 \(got 10000000000\)/ })
  t.throws(declare({ timeoutMs: 30 * 86_400_000 }), { code: 'FPK_ERR_JOB_DECLARATION', message: /option "timeoutMs" must be at most 2147483647 \(got 2592000000\)/ })
  t.throws(declare({ backoffMs: 1e15 }), { code: 'FPK_ERR_JOB_DECLARATION', message: /option "backoffMs" must be at most 2147483647000/ })
})

t.test('jobs, queued work and handler results at their edges', async (t) => {
  const unhandled: unknown[] = []
  const record = (reason: unknown) => { unhandled.push(reason) }
  process.on('unhandledRejection', record)
  t.teardown(() => { process.off('unhandledRejection', record) })
  // Jobs of the application's own cloud code, which Parse runs and records without the kit's wrapper.
  const cloud = (parse: typeof Parse) => {
    parse.Cloud.job('rawNulError', () => { throw new Error('bad\u0000text') })
    parse.Cloud.job('rawNulResult', () => 'done\u0000')
  }
  const kit: Kit = await startKit(t, { ...await sharedPostgres(t), parseServerOptions: { cloud }, functions: [OddJobs, OddFunctions], shutdown: { drainDelayMs: DRAIN_MS }, jobs: { shutdownGraceMs: 500, queue: { pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1 } } })
  const master = { useMasterKey: true } as const
  const rowEnd = async (jobId: string) => {
    const row = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
    await until(`run ${jobId} to end`, async () => (await row.fetch(master)).get('status') !== 'running', scaled(20_000))
    return [row.get('status'), row.get('message')]
  }

  t.test('a job that throws or returns what its row cannot hold as is: the run ends, recorded, and the process lives', async (t) => {
    const expected: Record<string, [string, string]> = {
      bareObject: ['failed', 'threw a value that cannot be written as text'],
      objectMessage: ['failed', '[object Object]'],
      nulMessage: ['failed', 'bad\uFFFDtext'],
      nulResult: ['succeeded', 'done\uFFFD']
    }
    for (const [kind, end] of Object.entries(expected)) {
      const started = await kit.request('POST', '/parse/jobs/odd', { headers: masterHeaders, body: { kind } })
      t.equal(started.status, 200, started.text)
      t.same(await rowEnd(started.headers.get('x-parse-job-status-id')!), end, `started by hand, ${kind}: ${end.join(', ')}`)
    }
    // Queued: each run ends on its row, and the queue's worker goes on to the next job.
    for (const kind of [...Object.keys(expected), 'fine']) await enqueue('odd', { kind })
    const runs = () => new Parse.Query('_JobStatus').equalTo('jobName', 'odd').startsWith('source', 'queue').limit(100).find(master)
    await until('the queued runs to end', async () => (await runs()).filter((row) => row.get('status') !== 'running').length === 5, scaled(30_000))
    t.same((await runs()).map((row) => row.get('params').kind + ' ' + row.get('status')).sort(), [
      'bareObject failed', 'fine succeeded', 'nulMessage failed', 'nulResult succeeded', 'objectMessage failed'
    ])
    t.same(unhandled, [], 'no unhandled rejection')
  })

  t.test('a job of the application\'s own cloud code whose end holds NUL: Parse\'s row ends, and the process lives', async (t) => {
    for (const [name, end] of [['rawNulError', 'failed'], ['rawNulResult', 'succeeded']]) {
      const started = await kit.request('POST', `/parse/jobs/${name}`, { headers: masterHeaders, body: {} })
      const [status, message] = await rowEnd(started.headers.get('x-parse-job-status-id')!)
      t.equal(status, end, `${name}: ${end} (${JSON.stringify(message)})`)
    }
    t.same(unhandled, [], 'no unhandled rejection')
  })

  t.test('a retry whose pause is longer than a timer takes waits, and is not run at once', async (t) => {
    const started = await kit.request('POST', '/parse/jobs/patient', { headers: masterHeaders, body: {} })
    const row = Parse.Object.fromJSON({ className: '_JobStatus', objectId: started.headers.get('x-parse-job-status-id')! })
    await until('the first attempt to fail', async () => /retrying in 3000000000 ms/.test((await row.fetch(master)).get('message') ?? ''), scaled(10_000))
    await new Promise((resolve) => setTimeout(resolve, scaled(300)))
    t.equal(patientAttempts.count, 1, 'one attempt so far')
    t.equal(row.get('status'), 'running', 'the run waits for its retry')
  })

  t.test('a handler that throws null or undefined answers the kit\'s 500 shape, on both routes', async (t) => {
    for (const what of ['null', 'undefined']) {
      for (const url of ['/parse/odd/throws', '/parse/functions/throws']) {
        const answer = await kit.request('POST', url, { headers: appHeaders, body: { what } })
        t.equal(answer.status, 500, `${url} throw ${what}`)
        t.same(answer.json, { code: Parse.Error.INTERNAL_SERVER_ERROR, error: 'Internal server error' }, `${url} throw ${what}: ${answer.text}`)
      }
    }
  })

  t.test('an afterCommit callback that throws a conflict: the committed body runs once, and its error is the answer', async (t) => {
    const answer = await kit.request('POST', '/parse/odd/lateConflict', { headers: appHeaders, body: { tag: 'once' } })
    t.same([answer.status, answer.json], [409, { code: CONFLICT, error: 'the email service said conflict' }])
    t.same(bodies, ['once'], 'one run of the body')
    t.equal(await new Parse.Query('LateConflict').equalTo('tag', 'once').count({ useMasterKey: true }), 1, 'one row committed')
  })

  t.test('enqueue options past what the queue holds, and params JSON cannot write, are refused naming the option; nothing is queued', async (t) => {
    const circular: Record<string, unknown> = {}
    circular.self = circular
    const refused: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
      ['priority 1e10', {}, { priority: 1e10 }, /option "priority" must be a whole number from -2147483648 to 2147483647/],
      ['priority 1.5', {}, { priority: 1.5 }, /option "priority"/],
      ['retries 1e10', {}, { retries: 1e10 }, /option "retries" must be a whole number from 0 to 2147483647/],
      ['retries -1', {}, { retries: -1 }, /option "retries"/],
      ['backoffMs NaN', {}, { backoffMs: Number.NaN }, /option "backoffMs" must be a number of milliseconds/],
      ['backoffMs -5000', {}, { backoffMs: -5000 }, /option "backoffMs"/],
      ['backoffMs 1e15', {}, { backoffMs: 1e15 }, /option "backoffMs"/],
      ['backoffMs "5"', {}, { backoffMs: '5' }, /option "backoffMs"/],
      ['delayMs 1e15', {}, { delayMs: 1e15 }, /option "delayMs" must be a number of milliseconds ≥ 0 that ends before the year 10000/],
      ['delayMs 1e16', {}, { delayMs: 1e16 }, /option "delayMs"/],
      ['delayMs -1', {}, { delayMs: -1 }, /option "delayMs"/],
      ['runAt year 275760', {}, { runAt: new Date(8.64e15) }, /option "runAt" must be a valid Date before the year 10000/],
      ['runAt text', {}, { runAt: '2030-01-01' }, /option "runAt"/],
      ['dedupeKey with NUL', {}, { dedupeKey: 'a\u0000b' }, /option "dedupeKey" must be a non-empty string of at most 512 characters without the NUL character/],
      ['dedupeKey 10 kB', {}, { dedupeKey: 'k'.repeat(10_000) }, /option "dedupeKey".*\(got 10000 characters\)/],
      ['dedupeKey object', {}, { dedupeKey: {} }, /option "dedupeKey"/],
      ['params BigInt', { n: 1n }, {}, /^bounded: params must be JSON \(Do not know how to serialize a BigInt\)$/],
      ['params circular', circular, {}, /^bounded: params must be JSON \(Converting circular structure to JSON/],
      ['params NUL', { deep: [{ text: 'a\u0000' }] }, {}, /^bounded: param deep\/0\/text must not contain the NUL character/],
      ['params NUL key', { 'k\u0000': 1 }, {}, /^bounded: param k\\u0000 must not contain the NUL character/]
    ]
    for (const [what, params, options, message] of refused) {
      const error = await enqueue('bounded', params, options).then(() => undefined, (caught: unknown) => caught as { code?: unknown, message?: string })
      t.match(error, { message }, `${what}: ${error?.message}`)
      t.ok(error?.code === 'FPK_ERR_JOB_UNKNOWN' || error?.code === Parse.Error.VALIDATION_ERROR, `${what}: FPK_ERR_JOB_UNKNOWN or 142 (${String(error?.code)})`)
    }
    for (const options of [5, 'delayMs', [1]]) {
      const error = await enqueue('bounded', {}, options as never).then(() => undefined, (caught: unknown) => caught as { code?: unknown, message?: string })
      t.match(error, { code: 'FPK_ERR_JOB_UNKNOWN', message: /^enqueue\("bounded"\): options must be an object such as \{ delayMs: 1000 \} \(got (number|string|a list)\)$/ }, `options ${JSON.stringify(options)}: ${error?.message}`)
    }
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    t.same(await client.any('SELECT id FROM pgboss.job WHERE name = $1', ['bounded']), [], 'nothing queued')
    // Options null are no options (were a bare TypeError reading delayMs of null).
    const plain = await enqueue('bounded', { options: 'null' }, null)
    t.same((await client.one('SELECT data FROM pgboss.job WHERE id = $1', [plain.id])).data, { params: { options: 'null' } }, 'options null: queued as with none')
    // At the bounds: stored, and a past runAt runs now.
    const text = { text: 'a \\u0000 that is text', n: Number.NaN }
    await enqueue('bounded', text, { priority: -2_147_483_648, retries: 2_147_483_647, dedupeKey: 'k'.repeat(512), delayMs: 60_000 })
    const past = await enqueue('bounded', {}, { runAt: new Date(-1e15) })
    const [stored] = await client.any('SELECT data FROM pgboss.job WHERE name = $1 AND singleton_key = $2', ['bounded', `dedupe:${'k'.repeat(512)}`])
    t.same(stored.data, { params: { text: 'a \\u0000 that is text', n: null } }, 'the text "\\u0000" is no NUL character')
    await until('the past runAt to run', async () => (await client.any('SELECT 1 FROM pgboss.job WHERE id = $1 AND state = \'completed\' UNION ALL SELECT 1 FROM pgboss.archive WHERE id = $1', [past.id])).length > 0, scaled(30_000))
  })

  t.test('a queued run of a job that declares Date params gets them as Dates, as its declaration says', async (t) => {
    const at = new Date('2026-05-06T07:08:09.010Z')
    const queued = await enqueue('dated', { at, later: { list: [at] }, note: '2026-05-06T07:08:09.010Z' })
    await until('the dated run', () => datedRuns.length > 0, scaled(30_000))
    t.same(datedRuns, [[at.getTime(), at.getTime(), '2026-05-06T07:08:09.010Z']], 'Dates where declared, text where declared')
    const [row] = await new Parse.Query('_JobStatus').equalTo('jobName', 'dated').find(master)
    t.same([row.get('source'), row.get('params')], [`queue ${queued.id} (attempt 1 of 1)`, { at: at.toISOString(), later: { list: [at.toISOString()] }, note: '2026-05-06T07:08:09.010Z' }], 'its row keeps the params as queued')
  })

  t.test('Parse\'s job routes with a job name or schedule of another shape answer 400 (107), a schedule of a job that is not there 400 (141), not 500', async (t) => {
    const refused: Array<[string, string, unknown, string]> = [
      ['POST', '/parse/jobs', { jobName: {} }, 'jobName must be the name of a job, as text (got object)'],
      ['POST', '/parse/jobs', { jobName: 5 }, 'jobName must be the name of a job, as text (got number)'],
      ['POST', '/parse/jobs', {}, 'jobName must be the name of a job, as text (got none)'],
      ['POST', '/parse/cloud_code/jobs', {}, 'job_schedule must be an object such as {"jobName": "…"} (got none)'],
      ['POST', '/parse/cloud_code/jobs', { job_schedule: null }, 'job_schedule must be an object such as {"jobName": "…"} (got null)'],
      ['POST', '/parse/cloud_code/jobs', { job_schedule: { jobName: ['odd'] } }, 'job_schedule.jobName must be the name of a job, as text (got a list)'],
      ['PUT', '/parse/cloud_code/jobs/abc', { job_schedule: 'x' }, 'job_schedule must be an object such as {"jobName": "…"} (got string)'],
      ['PUT', '/parse/cloud_code/jobs/abc', { job_schedule: { jobName: {} } }, 'job_schedule.jobName must be the name of a job, as text (got object)']
    ]
    for (const [method, url, body, message] of refused) {
      const answer = await kit.request(method, url, { headers: masterHeaders, body })
      t.same([answer.status, answer.json], [400, { code: Parse.Error.INVALID_JSON, error: `Request refused: ${message}.` }], `${method} ${url} ${JSON.stringify(body)}`)
    }
    for (const [method, url] of [['POST', '/parse/cloud_code/jobs'], ['PUT', '/parse/cloud_code/jobs/abc']]) {
      const unknown = await kit.request(method, url, { headers: masterHeaders, body: { job_schedule: { jobName: 'undeclared' } } })
      t.same([unknown.status, unknown.json], [400, { code: Parse.Error.SCRIPT_FAILED, error: 'Request refused: job_schedule.jobName names no job of this application ("undeclared").' }], `${method} ${url}: a schedule of a job that is not there`)
    }
    const inBatch = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'POST', path: '/parse/cloud_code/jobs', body: { job_schedule: { jobName: 'undeclared' } } }] } })
    t.same([inBatch.status, inBatch.json?.code], [400, Parse.Error.SCRIPT_FAILED], `inside a /batch too: ${inBatch.text}`)
    const run = await kit.request('POST', '/parse/jobs', { headers: masterHeaders, body: { jobName: 'odd', input: { kind: 'fine' }, when: 0 } })
    t.same([run.status, await rowEnd(run.headers.get('x-parse-job-status-id')!)], [200, ['succeeded', 'fine']], 'the Dashboard\'s run of a job still runs it')
    const scheduled = await kit.request('POST', '/parse/cloud_code/jobs', { headers: masterHeaders, body: { job_schedule: { jobName: 'odd', params: '{"kind":"fine"}', startAfter: '2099-01-01T00:00:00.000Z' } } })
    t.match([scheduled.status, scheduled.json], [201, { objectId: /./ }], 'and a schedule is written')
    const raw = await kit.request('POST', '/parse/cloud_code/jobs', { headers: masterHeaders, body: { job_schedule: { jobName: 'rawNulResult', startAfter: '2099-01-01T00:00:00.000Z' } } })
    t.equal(raw.status, 201, 'so is one of a job of the application\'s own cloud code')
  })

  t.test('a dead job id that is not the queue\'s is no dead job, by hand and through kitRerunDeadJobs', async (t) => {
    t.equal(await rerunDeadJob('bounded', 'not-a-uuid'), undefined)
    t.equal(await rerunDeadJob('bounded', {} as unknown as string), undefined)
    const started = await kit.request('POST', '/parse/jobs/kitRerunDeadJobs', { headers: masterHeaders, body: { job: 'bounded', id: 'not-a-uuid' } })
    t.same(await rowEnd(started.headers.get('x-parse-job-status-id')!), ['succeeded', 'no dead job not-a-uuid of bounded'])
  })

  t.test('kitRerunDeadJobs with a dryRun or id it cannot read re-runs nothing; one dead job re-run twice at once is queued once', async (t) => {
    for (const item of ['a', 'b']) await enqueue('doomed', { item })
    let dead: Array<{ id: string }> = []
    await until('two dead jobs', async () => { dead = await listDeadJobs('doomed'); return dead.length === 2 }, scaled(30_000))
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ job: 'doomed', dryRun: 'true' }, '"dryRun" must be true or false (got "true"): nothing was re-run'],
      [{ job: 'doomed', id: 5 }, '"id" must be a dead job\'s id, as text (got 5): nothing was re-run']
    ]
    for (const [body, message] of refused) {
      const started = await kit.request('POST', '/parse/jobs/kitRerunDeadJobs', { headers: masterHeaders, body })
      t.same(await rowEnd(started.headers.get('x-parse-job-status-id')!), ['failed', message], JSON.stringify(body))
    }
    t.equal((await listDeadJobs('doomed')).length, 2, 'both still dead')
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    // A page at a time (all at once was one unbounded read), each once though both died in one millisecond
    // (the queue keeps microseconds; a Date, and so the position after, keeps the millisecond).
    await client.none('UPDATE pgboss.job SET created_on = $2::timestamptz WHERE id = $1', [dead[0].id, '2026-01-01T00:00:00.000789Z'])
    await client.none('UPDATE pgboss.job SET created_on = $2::timestamptz WHERE id = $1', [dead[1].id, '2026-01-01T00:00:00.000123Z'])
    const first = await listDeadJobs('doomed', { limit: 1 })
    const second = await listDeadJobs('doomed', { limit: 1, after: first[0] })
    t.same([first.length, second.length], [1, 1], 'one a page')
    t.same([first[0].id, second[0].id].sort(), dead.map((entry) => entry.id).sort(), 'each once')
    t.same(await listDeadJobs('doomed', { limit: 1, after: second[0] }), [], 'then none')
    for (const options of [{ limit: 0 }, { limit: 1001 }, { limit: 1.5 }, { after: { id: dead[0].id } }, { after: { id: 5, diedAt: new Date() } }]) {
      await t.rejects(listDeadJobs('doomed', options as never), { code: 'FPK_ERR_JOB_UNKNOWN', message: /^listDeadJobs\("doomed"\): option "(limit|after)" must be/ }, JSON.stringify(options))
    }
    t.same(await listDeadJobs('doomed', { after: { id: 'not-a-uuid', diedAt: new Date() } }), [], 'after an id that is not the queue\'s: none')
    const listedByJob = await kit.request('POST', '/parse/jobs/kitRerunDeadJobs', { headers: masterHeaders, body: { job: 'doomed', dryRun: true } })
    t.match(await rowEnd(listedByJob.headers.get('x-parse-job-status-id')!), ['succeeded', /^2 dead job\(s\) of doomed: /], 'kitRerunDeadJobs pages through them')
    const [{ now }] = await client.any('SELECT now() AS now')
    const again = await Promise.all([rerunDeadJob('doomed', dead[0].id), rerunDeadJob('doomed', dead[0].id)])
    t.equal(again.filter((queued) => queued !== undefined).length, 1, 'one of the two re-runs queued it')
    t.same(await client.any('SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND created_on >= $2', ['doomed', now]), [{ n: 1 }], 'one job queued')
  })
  t.test('during the drain of a close, enqueue still queues: an order placed then keeps its job (run by the next instance)', async (t) => {
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const began = Date.now()
    const closing = kit.app.close()
    const failures: string[] = []
    let sent = 0
    // Through the drain, as requests still served would: once the queue's workers had stopped, each was FPK_ERR_QUEUE_OFF.
    while (Date.now() - began < DRAIN_MS * 0.8) {
      await enqueue('bounded', { during: 'drain', n: sent++ }).catch((error: Error) => { failures.push(error.message) })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.same(failures.slice(0, 1), [], `none of ${sent} refused`)
    t.same(await client.any("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'bounded' AND data->'params'->>'during' = 'drain'"), [{ n: sent }], 'each one queued')
    await closing
  })
})

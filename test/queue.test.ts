// Queued jobs on one kit (jobs.queue on PostgreSQL): enqueue() runs a declared
// @Job as a Parse job run with its own _JobStatus row; inside a transaction
// the job commits or rolls back with it (a re-run body leaves one job); dedupe
// keys, delays, priorities, per-job concurrency, dead letters that can be
// re-run, retention of finished jobs, and the refusals. On the MongoDB lane,
// the refusal at boot.
import t from 'tap'
import { createRequire } from 'node:module'
import Parse from 'parse/node'
import { CONFLICT } from '../lib/errors.js'
import { Job, Type, enqueue, listDeadJobs, rerunDeadJob, withTransaction, type JobRequest } from '../lib/index.js'
import { queuePart } from '../lib/jobs/queue.js'
import { jobRunsPart } from '../lib/jobs/runs.js'
import { statementNames } from '../lib/storage/queue.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'
import { appHeaders, lane, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

/** The pg the kit's pool runs on (pg-promise's). */
const pg = createRequire(createRequire(import.meta.url).resolve('pg-promise'))('pg') as { Client: { prototype: object } }

const seen = {
  confirmed: [] as string[],
  recorded: [] as string[],
  failing: true,
  failures: 0,
  crowd: { running: 0, most: 0, done: [] as number[] },
  /** Runs of `gated` waiting for the gate, and the gate. */
  gated: { waiting: 0, open: Promise.resolve(), release: () => {} }
}

class QueueJobs {
  @Job({ params: Type.Object({ orderId: Type.String() }) })
  static async confirm (request: JobRequest<{ orderId: string }>) {
    seen.confirmed.push(request.params.orderId)
    return `confirmed ${request.params.orderId}`
  }

  @Job()
  static async record (request: JobRequest<{ n: string }>) {
    seen.recorded.push(request.params.n)
  }

  @Job({ retries: 1, backoffMs: 0 })
  static async brittle () {
    if (seen.failing) {
      seen.failures++
      throw new Error(`brittle failure ${seen.failures}`)
    }
    return 'mended'
  }

  @Job({ concurrency: 3 })
  static async crowded (request: JobRequest<{ i: number }>) {
    seen.crowd.running++
    seen.crowd.most = Math.max(seen.crowd.most, seen.crowd.running)
    await new Promise((resolve) => setTimeout(resolve, 5))
    seen.crowd.done.push(request.params.i)
    seen.crowd.running--
  }

  /** Waits for the test's gate; with `fail`, its first attempt then fails. */
  @Job({ concurrency: 3 })
  static async gated (request: JobRequest<{ i: number, fail?: boolean }>) {
    seen.gated.waiting++
    await seen.gated.open
    seen.gated.waiting--
    if (request.params.fail && request.attempt === 1) throw new Error('gated failure')
  }
}

const queueOptions = { pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1, keepFinishedSeconds: 1, deleteAfterSeconds: 1 }

if (lane.kind === 'mongo') {
  t.test('on MongoDB, jobs.queue fails boot naming that queued jobs need PostgreSQL', async (t) => {
    await t.rejects(startKit(t, { functions: [QueueJobs], jobs: { queue: true } }), { code: 'FPK_ERR_QUEUE_DATABASE', message: /queued jobs \(enqueue\) need PostgreSQL/ })
  })
} else {
  let kit: Kit
  const master = { useMasterKey: true } as const
  const runsOf = (job: string) => new Parse.Query('_JobStatus').equalTo('jobName', job).ascending('createdAt').limit(1000).find(master)

  t.before(async () => {
    kit = await startKit(t, { functions: [QueueJobs], jobs: { queue: queueOptions, leaseMs: 1000 } })
  })

  t.test('enqueue runs the job once as a Parse job run: its _JobStatus row names the queue\'s job and the params without the queue\'s own', async (t) => {
    const queued = await enqueue('confirm', { orderId: 'plain' })
    t.equal(queued.deduplicated, false)
    await until('the queued run', () => seen.confirmed.includes('plain'), scaled(30_000))
    const [row] = (await runsOf('confirm')).filter((run) => run.get('params')?.orderId === 'plain')
    await until('its row to end', async () => (await row.fetch(master)).get('status') === 'succeeded', scaled(10_000))
    t.equal(row.get('source'), `queue ${queued.id} (attempt 1 of 1)`)
    t.same(row.get('params'), { orderId: 'plain' })
    t.equal(row.get('message'), 'confirmed plain')
    // Written as Parse writes a job's row: its times as Dates, locked to the master key (ACL {}).
    t.ok(row.createdAt instanceof Date && row.get('finishedAt') instanceof Date, 'createdAt and finishedAt are Dates')
    t.same(row.getACL()?.toJSON(), {}, 'the row\'s ACL is {}')
  })

  t.test('a queued run\'s row reads back through Parse\'s REST /classes/_JobStatus in the shape of a run started by POST /jobs', async (t) => {
    const byHand = await kit.request('POST', '/parse/jobs/record', { headers: masterHeaders, body: { n: 'by-hand' } })
    t.equal(byHand.status, 200, byHand.text)
    const queued = await enqueue('record', { n: 'queued-shape' })
    await until('both runs', () => ['by-hand', 'queued-shape'].every((n) => seen.recorded.includes(n)), scaled(30_000))
    const rowOf = async (n: string) => {
      const where = encodeURIComponent(JSON.stringify({ jobName: 'record', 'params.n': n }))
      let row: Record<string, unknown> = {}
      await until(`the ${n} row to end`, async () => {
        const answer = await kit.request('GET', `/parse/classes/_JobStatus?where=${where}`, { headers: masterHeaders })
        row = answer.json.results?.[0] ?? {}
        return row.status === 'succeeded'
      }, scaled(10_000))
      return row
    }
    const [handRow, queuedRow] = [await rowOf('by-hand'), await rowOf('queued-shape')]
    const shape = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, (value as { __type?: string })?.__type ?? typeof value]))
    t.same(shape(queuedRow), shape(handRow), 'the same fields, of the same types')
    t.same([queuedRow.params, queuedRow.source, queuedRow.ACL], [{ n: 'queued-shape' }, `queue ${queued.id} (attempt 1 of 1)`, {}], 'its params, its source, locked to the master key')
  })

  t.test('outbox: a committed transaction leaves one job, a rolled-back one none, a body run three times on conflicts one', async (t) => {
    await withTransaction(async () => { await enqueue('confirm', { orderId: 'committed' }) })
    await t.rejects(withTransaction(async () => {
      await enqueue('confirm', { orderId: 'rolled-back' })
      throw new Error('the order was refused')
    }), /the order was refused/)
    let bodies = 0
    await withTransaction(async () => {
      bodies++
      await enqueue('confirm', { orderId: 'conflicted' })
      if (bodies < 3) throw new Parse.Error(CONFLICT, 'a concurrent change')
    }, { attempts: 3 })
    t.equal(bodies, 3, 'the body ran three times')
    // Enqueued last, runs last (one worker, first in first out): every earlier job has run by then.
    await enqueue('confirm', { orderId: 'marker' })
    await until('the marker job', () => seen.confirmed.includes('marker'), scaled(30_000))
    t.same(seen.confirmed.filter((id) => id === 'committed'), ['committed'])
    t.same(seen.confirmed.filter((id) => id === 'conflicted'), ['conflicted'], 'one job from three bodies')
    t.notOk(seen.confirmed.includes('rolled-back'), 'no job from the rolled-back transaction')
  })

  t.test('a dedupe key: the second enqueue while the first waits adds nothing and says so', async (t) => {
    const first = await enqueue('record', { n: 'dedupe' }, { dedupeKey: 'order-1', delayMs: 1500 })
    const second = await enqueue('record', { n: 'dedupe' }, { dedupeKey: 'order-1' })
    t.same(second, { id: first.id, deduplicated: true })
    await until('the deduplicated job', () => seen.recorded.includes('dedupe'), scaled(30_000))
    const later = await enqueue('record', { n: 'dedupe-again' }, { dedupeKey: 'order-1' })
    t.equal(later.deduplicated, false, 'once it has run, the key queues a new job')
    await until('the later job', () => seen.recorded.includes('dedupe-again'), scaled(30_000))
    t.equal(seen.recorded.filter((n) => n === 'dedupe').length, 1)
  })

  t.test('a delayed job starts no sooner than its delay; waiting jobs run highest priority first', async (t) => {
    const before = Date.now()
    await enqueue('record', { n: 'delayed' }, { delayMs: 1200 })
    await until('the delayed job', () => seen.recorded.includes('delayed'), scaled(30_000))
    const [row] = (await runsOf('record')).filter((run) => run.get('params')?.n === 'delayed')
    t.ok(row.createdAt!.getTime() >= before + 1200, 'its run began after the delay')

    const runAt = new Date(Date.now() + 1500)
    for (const [n, priority] of [['low', 1], ['high', 9], ['middle', 5]] as const) await enqueue('record', { n }, { runAt, priority })
    await until('the three', () => ['low', 'high', 'middle'].every((n) => seen.recorded.includes(n)), scaled(30_000))
    t.same(seen.recorded.filter((n) => ['low', 'high', 'middle'].includes(n)), ['high', 'middle', 'low'])
  })

  t.test('a job that always fails is dead after its retries, listed, and re-run with its params', async (t) => {
    const queued = await enqueue('brittle', { item: 'vase' })
    let dead: Awaited<ReturnType<typeof listDeadJobs>> = []
    await until('the dead job', async () => { dead = await listDeadJobs('brittle'); return dead.length > 0 }, scaled(30_000))
    t.equal(seen.failures, 2, 'the first run and its one retry')
    t.same(dead.map((job) => job.params), [{ item: 'vase' }])
    const runs = await runsOf('brittle')
    t.same(runs.map((run) => [run.get('status'), run.get('source')]), [
      ['failed', `queue ${queued.id} (attempt 1 of 2)`],
      ['failed', `queue ${queued.id} (attempt 2 of 2)`]
    ], 'each attempt is a run of its own, failed')
    seen.failing = false
    // With the master key: the kit's built-in job lists them (dryRun) and re-runs them.
    const runBuiltIn = async (body: Record<string, unknown>) => {
      const started = await kit.request('POST', '/parse/jobs/kitRerunDeadJobs', { headers: masterHeaders, body })
      t.equal(started.status, 200, started.text)
      const row = Parse.Object.fromJSON({ className: '_JobStatus', objectId: started.headers.get('x-parse-job-status-id')! })
      await until('the built-in run', async () => ['succeeded', 'failed'].includes((await row.fetch(master)).get('status')), scaled(30_000))
      return row.get('message') as string
    }
    t.equal(await runBuiltIn({ job: 'brittle', dryRun: true }), `1 dead job(s) of brittle: ${dead[0].id} {"item":"vase"}`)
    const noKey = await kit.request('POST', '/parse/jobs/kitRerunDeadJobs', { headers: appHeaders, body: { job: 'brittle' } })
    t.not(noKey.status, 200, 'not without the master key')
    t.equal(await runBuiltIn({ job: 'brittle', id: dead[0].id }), `re-ran 1 dead job(s) of brittle: ${dead[0].id} {"item":"vase"}`)
    await until('the re-run', async () => (await runsOf('brittle')).some((run) => run.get('status') === 'succeeded'), scaled(30_000))
    t.same(await listDeadJobs('brittle'), [], 'no longer dead')
    t.equal(await rerunDeadJob('brittle', dead[0].id), undefined, 'a job re-run once is not dead any more')
  })

  t.test('per-job concurrency: never more runs of a job at once on an instance than it allows, each job once', async (t) => {
    const count = 60
    for (let i = 0; i < count; i++) await enqueue('crowded', { i })
    await until('every crowded job', () => seen.crowd.done.length >= count, scaled(120_000))
    t.ok(seen.crowd.most <= 3, `at most 3 at once (saw ${seen.crowd.most})`)
    t.same([...seen.crowd.done].sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i), 'each once')
  })

  t.test('a batch: jobs waiting together are claimed together, their leases written in one statement, their ends in one more when they end together; one run failing retries that job alone', async (t) => {
    seen.gated.open = new Promise((resolve) => { seen.gated.release = resolve })
    const runAt = new Date(Date.now() + 1000)
    const queued = []
    for (const i of [0, 1, 2]) queued.push(await enqueue('gated', { i, ...(i === 1 ? { fail: true } : {}) }, { runAt, retries: 1, backoffMs: 0 }))
    await until('the three runs to wait at the gate', () => seen.gated.waiting === 3, scaled(30_000))
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const leases = await client.any('SELECT started_at FROM fpk_job_run_leases WHERE job_name = $1', ['gated'])
    t.equal(leases.length, 3, 'three runs hold leases')
    t.equal(new Set(leases.map((lease) => (lease.started_at as Date).getTime())).size, 1, 'written by one statement')
    const together = await client.one('SELECT count(*)::int AS rows FROM "_JobStatus" AS run JOIN fpk_job_run_leases AS lease ON lease.job_id = run."objectId" WHERE lease.job_name = $1 AND run.status = \'running\' AND run."createdAt" = lease.started_at', ['gated'])
    t.equal(together.rows, 3, 'their "running" rows written by the same statement as their leases')
    seen.gated.release()
    const ended = async () => (await runsOf('gated')).filter((run) => run.get('status') !== 'running')
    await until('four ended runs', async () => (await ended()).length === 4, scaled(30_000))
    const rows = (await ended()).map((run) => [run.get('params').i, run.get('status'), run.get('source')])
    t.same(rows.sort((a, b) => String(a).localeCompare(String(b))), [
      [0, 'succeeded', `queue ${queued[0].id} (attempt 1 of 2)`],
      [1, 'failed', `queue ${queued[1].id} (attempt 1 of 2)`],
      [1, 'succeeded', `queue ${queued[1].id} (attempt 2 of 2)`],
      [2, 'succeeded', `queue ${queued[2].id} (attempt 1 of 2)`]
    ], 'the two that succeeded ran once; the failed one was retried once')
    const firstEnds = await client.one('SELECT count(DISTINCT xmin::text)::int AS writes FROM "_JobStatus" WHERE "jobName" = $1 AND source LIKE $2', ['gated', '%(attempt 1 of 2)'])
    t.equal(firstEnds.writes, 1, 'the three first runs, ending together, had their ends written by one statement')
    await until('the leases to go', async () => (await client.any('SELECT 1 FROM fpk_job_run_leases WHERE job_name = $1', ['gated'])).length === 0, scaled(10_000))
  })

  t.test('a run recorded as succeeded has its job completed by the same write: an instance gone before the queue\'s own completion leaves no job to run again', async (t) => {
    // The queue's own completion after the batch, as an instance killed just after the runs' ends would never send it.
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }
    const original = proto.query
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const query = config as { text?: string, values?: unknown[] } | undefined
      if (query?.text?.includes('SET completed_on = now(),') && query.values?.[0] === 'record') return original.call(this, 'SELECT 0 AS count', ...rest)
      return original.call(this, config, ...rest)
    }
    t.teardown(() => { proto.query = original })
    const queued = await enqueue('record', { n: 'completed-with-its-end' })
    const mine = async () => (await runsOf('record')).filter((run) => run.get('params')?.n === 'completed-with-its-end')
    await until('its row', async () => (await mine()).length === 1, scaled(30_000))
    const [row] = await mine()
    await until('its row to end', async () => (await row.fetch(master)).get('status') === 'succeeded', scaled(10_000))
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const found = await client.any('SELECT state FROM pgboss.job WHERE id = $1 UNION ALL SELECT state FROM pgboss.archive WHERE id = $1', [queued.id])
    t.same(found.map((job) => job.state), ['completed'], 'completed, not left active for its expiry to run again')
  })

  t.test('a batch whose runs\' ends completed their jobs sends no completion of the queue\'s own after it (it would find nothing to complete)', async (t) => {
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }
    const original = proto.query
    const sent: Array<{ text: string, values: unknown[] }> = []
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const query = config as { text?: string, values?: unknown[] } | undefined
      if (query?.text) sent.push({ text: query.text, values: query.values ?? [] })
      return original.call(this, config, ...rest)
    }
    t.teardown(() => { proto.query = original })
    const queued = await enqueue('record', { n: 'no-second-completion' })
    const ended = () => sent.findIndex((query) => query.text.includes('DELETE FROM fpk_job_run_leases AS lease USING run') && String(query.values[0]).includes(queued.id))
    // The worker's next claim of the job's queue comes after pg-boss has handled the batch's end.
    const claimAfter = () => sent.slice(ended() + 1).some((query) => query.text.includes('FOR UPDATE SKIP LOCKED') && query.values[0] === 'record')
    await until('the run\'s end and the next claim after it', () => ended() >= 0 && claimAfter(), scaled(30_000))
    proto.query = original
    const completions = sent.filter((query) => query.text.includes('SET completed_on = now(),') && query.text.includes('UNNEST') && JSON.stringify(query.values[1] ?? null).includes(queued.id))
    t.same(completions.length, 0, 'no completion statement for the job')
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const found = await client.any('SELECT state FROM pgboss.job WHERE id = $1 UNION ALL SELECT state FROM pgboss.archive WHERE id = $1', [queued.id])
    t.same(found.map((job) => job.state), ['completed'], 'completed by its run\'s end')
  })

  t.test('a batch\'s ends find their _JobStatus rows by key, not by reading every run the table holds', async (t) => {
    // The statement writing the ends, as sent, then planned against a _JobStatus holding a long history of runs.
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }
    const original = proto.query
    let end: { text: string, values: unknown[] } | undefined
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const query = config as { text?: string, values?: unknown[] } | undefined
      if (!end && query?.text?.includes('DELETE FROM fpk_job_run_leases AS lease USING run')) end = { text: query.text, values: query.values ?? [] }
      return original.call(this, config, ...rest)
    }
    t.teardown(() => { proto.query = original })
    await enqueue('record', { n: 'ends-by-key' })
    await until('the run\'s end', () => end !== undefined, scaled(30_000))
    proto.query = original
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const scans: string[] = []
    const walk = (node: { 'Node Type': string, 'Relation Name'?: string, Plans?: unknown[] }) => {
      if (node['Relation Name'] === '_JobStatus') scans.push(node['Node Type'])
      for (const child of node.Plans ?? []) walk(child as typeof node)
    }
    const rolledBack = new Error('rolled back')
    type Node = Parameters<typeof walk>[0]
    await client.tx(async (tx) => {
      await tx.none('INSERT INTO "_JobStatus" ("objectId", "jobName", status) SELECT \'history\' || n, \'record\', \'succeeded\' FROM generate_series(1, 5000) AS n')
      await tx.none('ANALYZE "_JobStatus"')
      const [row] = await tx.any(`EXPLAIN (FORMAT JSON) ${end!.text}`, end!.values) as Array<{ 'QUERY PLAN': Array<{ Plan: Node }> }>
      walk(row['QUERY PLAN'][0].Plan)
      throw rolledBack
    }).catch((error: unknown) => { if (error !== rolledBack) throw error })
    t.ok(scans.length > 0, 'the plan reads _JobStatus')
    t.notOk(scans.includes('Seq Scan'), `by key, not by a sequential scan (${scans.join(', ')})`)
  })

  t.test('a batch taken while the instance has no run leases (its jobs not started) still runs each job once, its row written through Parse\'s storage adapter', async (t) => {
    const runs = kit.app.kit.state.get(jobRunsPart)
    const context = runs.context
    runs.context = undefined
    t.teardown(() => { runs.context = context })
    const queued = await enqueue('record', { n: 'no-leases' })
    await until('the run', () => seen.recorded.includes('no-leases'), scaled(30_000))
    const [row] = (await runsOf('record')).filter((run) => run.get('params')?.n === 'no-leases')
    await until('its row to end', async () => (await row.fetch(master)).get('status') === 'succeeded', scaled(10_000))
    t.equal(row.get('source'), `queue ${queued.id} (attempt 1 of 1)`)
    t.same(row.getACL()?.toJSON(), {}, 'locked to the master key')
    const client = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
    const state = async () => (await client.any('SELECT state FROM pgboss.job WHERE id = $1 UNION ALL SELECT state FROM pgboss.archive WHERE id = $1', [queued.id])).map((job) => job.state)
    await until('its job to be completed by the queue\'s own completion', async () => (await state()).includes('completed'), scaled(10_000))
  })

  t.test('finished jobs are swept after keepFinishedSeconds and deleteAfterSeconds', async (t) => {
    const queued = await enqueue('record', { n: 'swept' })
    const engine = kit.app.kit.state.get(queuePart).engine!
    await until('the job to finish', async () => (await engine.state('record', queued.id)) === 'completed', scaled(30_000))
    await until('the sweep', async () => (await engine.state('record', queued.id)) === undefined, scaled(60_000))
    t.pass('gone from the queue\'s tables and its archive')
  })

  t.test('enqueue refuses an undeclared job (FPK_ERR_JOB_UNKNOWN), params that do not fit (142 naming the param) and bad options', async (t) => {
    await t.rejects(enqueue('noSuchJob', {}), { code: 'FPK_ERR_JOB_UNKNOWN', message: /no @Job declares a job named "noSuchJob"/ })
    await t.rejects(enqueue('confirm', { orderId: 42 }), { code: Parse.Error.VALIDATION_ERROR, message: /confirm: param orderId/ })
    await t.rejects(enqueue('confirm', {}), { code: Parse.Error.VALIDATION_ERROR, message: /param orderId/ })
    await t.rejects(enqueue('record', {}, { delayMs: -1 }), { code: 'FPK_ERR_JOB_UNKNOWN', message: /delayMs/ })
  })

  t.test('without jobs.queue, enqueue is refused with FPK_ERR_QUEUE_OFF', async (t) => {
    // The state of a kit that runs no queue: the engine slot is empty.
    const part = kit.app.kit.state.get(queuePart)
    const engine = part.engine
    part.engine = undefined
    t.teardown(() => { part.engine = engine })
    await t.rejects(enqueue('record', {}), { code: 'FPK_ERR_QUEUE_OFF', message: /jobs: \{ queue: true \}/ })
  })
}

t.test('the queue names its statements by their text: one plan per connection, a bounded set', async (t) => {
  const nameOf = statementNames()
  const insert = 'INSERT INTO pgboss.job (id) VALUES ($1)'
  t.equal(nameOf(insert), nameOf(insert), 'the same text, the same name')
  t.not(nameOf(insert), nameOf('SELECT $1'), 'another text, another name')
  for (let i = 0; i < 300; i++) nameOf(`SELECT ${i} + $1`)
  t.equal(nameOf('SELECT 1000 + $1'), undefined, 'past the bound a new text runs unnamed (planned per call)')
  t.ok(nameOf(insert), 'a text named before the bound keeps its name')
})

// Queued jobs across processes on one PostgreSQL (test/helpers/queue-node.ts):
// instances booting together install the queue once;
// a job committed with its order survives a SIGKILL before it ran and runs
// once after the restart; a run whose instance is SIGKILLed is marked lost in
// _JobStatus and retried on the other instance; two instances drain 1,000
// jobs, each once, never more at once on an instance than the job allows.
import t from 'tap'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { APP_ID, MASTER_KEY, httpRequest } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { openDatabase } from '../lib/storage/database.js'
import { openQueueEngine } from '../lib/storage/queue.js'
import { KitState } from '../lib/kit-state.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const headers = { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY }
const start = (name: string, env: Record<string, string>) => startJobsInstance(name, env, 'queue-node.ts', { compiled: true })

async function call (origin: string, fn: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await httpRequest(origin, 'POST', `/parse/functions/${fn}`, { headers, body })
  if (response.status !== 200) throw new Error(`${fn} answered ${response.status}: ${response.text}`)
  return response.json.result
}

async function rows (origin: string, className: string, where: Record<string, unknown>): Promise<Array<Record<string, any>>> {
  const query = new URLSearchParams({ where: JSON.stringify(where), limit: '2000', order: 'createdAt' })
  const response = await httpRequest(origin, 'GET', `/parse/classes/${className}?${query}`, { headers })
  if (response.status !== 200) throw new Error(`${className} answered ${response.status}: ${response.text}`)
  return response.json.results
}

/** How many rows match: the drain's wait asks this, not for the rows (up to 1,000 of them, every 50 ms). */
async function count (origin: string, className: string, where: Record<string, unknown>): Promise<number> {
  const query = new URLSearchParams({ where: JSON.stringify(where), count: '1', limit: '0' })
  const response = await httpRequest(origin, 'GET', `/parse/classes/${className}?${query}`, { headers })
  if (response.status !== 200) throw new Error(`${className} answered ${response.status}: ${response.text}`)
  return response.json.count
}

t.test('instances booting together on a fresh database install the queue once, and both start', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('queue_install')
  const settings = { pollingIntervalSeconds: 1, maintenanceIntervalSeconds: 60, keepFinishedSeconds: 60, deleteAfterSeconds: 60, deadLetterDays: 1 }
  const databases = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseURI }, new KitState())))
  t.teardown(() => Promise.all(databases.map((database) => database.close())))
  const engines = await Promise.all(databases.map((database) => openQueueEngine(database, settings, (error) => t.fail(error.message))))
  await Promise.all(engines.map((engine) => engine.define('installed', { retries: 0, backoffSeconds: 0, expireSeconds: 60 })))
  const sent = await engines[1].send('installed', { params: {} }, { retries: 0, backoffSeconds: 0 })
  t.equal(await engines[2].state('installed', sent.id), 'created', 'one queue, seen by every instance')
  await Promise.all(engines.map((engine) => engine.stop()))
})

t.test('SIGKILL after the commit, before the job ran: it runs once after the restart', async (t) => {
  const postgres = await sharedPostgres(t)
  const env = { DATABASE_URI: await postgres.database('queue_commit'), LEASE_MS: '1000' }
  const first = await start('A', env)
  t.teardown(() => first.stop())
  // Delayed past the kill: no worker can have taken it.
  await call(first.origin, 'placeOrder', { key: 'order-1', delayMs: 3000 })
  first.child.kill('SIGKILL')
  await first.exited
  const second = await start('B', env)
  t.teardown(() => second.stop())
  await until('the delivery after the restart', async () => (await rows(second.origin, 'QueueDelivery', { key: 'order-1', phase: 'finished' })).length > 0, scaled(60_000))
  const deliveries = await rows(second.origin, 'QueueDelivery', { key: 'order-1' })
  t.same(deliveries.map((row) => [row.phase, row.instance]), [['started', 'B'], ['finished', 'B']], 'run once, on the restarted instance')
})

t.test('SIGKILL during a run: the run is marked lost in _JobStatus and retried on the other instance', async (t) => {
  const postgres = await sharedPostgres(t)
  const env = { DATABASE_URI: await postgres.database('queue_lost'), LEASE_MS: '1000' }
  // One after the other: Parse Server's own first boot on an empty database is not safe to race.
  const a = await start('A', env)
  const b = await start('B', env)
  t.teardown(() => Promise.all([a.stop(), b.stop()]))
  const instances = { A: a, B: b }
  await call(a.origin, 'enqueueDelivery', { key: 'order-2', hangFirst: true })
  let started: Record<string, any> | undefined
  await until('the first attempt to start', async () => {
    started = (await rows(a.origin, 'QueueDelivery', { key: 'order-2', phase: 'started' }))[0]
    return started !== undefined
  }, scaled(60_000))
  const doomed = instances[started!.instance as 'A' | 'B']
  const survivor = doomed === a ? b : a
  doomed.child.kill('SIGKILL')
  await doomed.exited
  await until('the retry to finish', async () => (await rows(survivor.origin, 'QueueDelivery', { key: 'order-2', phase: 'finished' })).length > 0, scaled(60_000))
  const finished = await rows(survivor.origin, 'QueueDelivery', { key: 'order-2', phase: 'finished' })
  t.same(finished.map((row) => [row.attempt, row.instance]), [[2, doomed === a ? 'B' : 'A']], 'the second attempt, on the surviving instance, once')
  const runs = await rows(survivor.origin, '_JobStatus', { jobName: 'deliver' })
  t.same(runs.map((run) => [run.status, run.message]), [['failed', 'instance lost'], ['succeeded', undefined]], 'the lost run says so; the retry succeeded')
  t.match(runs[1].source, /attempt 2 of 2/)
})

t.test('two instances drain 1,000 jobs: each once, never more than 5 at once on an instance', async (t) => {
  const postgres = await sharedPostgres(t)
  const env = { DATABASE_URI: await postgres.database('queue_bounded') }
  // One after the other: Parse Server's own first boot on an empty database is not safe to race.
  const a = await start('A', env)
  const b = await start('B', env)
  t.teardown(() => Promise.all([a.stop(), b.stop()]))
  const total = 1000
  await Promise.all([call(a.origin, 'enqueueBounded', { from: 0, to: total / 2 }), call(b.origin, 'enqueueBounded', { from: total / 2, to: total })])
  const succeeded = { jobName: 'bounded', status: 'succeeded' }
  await until('every job to run', async () => await count(a.origin, '_JobStatus', succeeded) >= total, scaled(300_000))
  const runs = await rows(a.origin, '_JobStatus', succeeded)
  const numbers = runs.map((run) => run.params.i as number).sort((x, y) => x - y)
  t.same(numbers, Array.from({ length: total }, (_, i) => i), 'each job ran once')
  const seen = await Promise.all([call(a.origin, 'crowdSeen', {}), call(b.origin, 'crowdSeen', {})])
  for (const instance of seen) t.ok(instance.most <= 5, `instance ${instance.instance}: at most 5 at once (saw ${instance.most})`)
  t.ok(seen.every((instance) => instance.most > 0), 'both instances took jobs')
})

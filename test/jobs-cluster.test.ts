// Jobs on a schedule and across instance processes of the generated server (fixtures/serve.ts
// through test/helpers/jobs-node.ts), on one embedded PostgreSQL for the file
// with a database per scenario. Each test keeps its name from the file it came from:
// - from the former jobs-cluster.test.ts: several instances, one schedule, no
//   Redis: two kit processes run a @Cron every second for 10 s, and each tick
//   runs once in all (the lease lives in the shared database);
// - from the former jobs-cluster-redis.test.ts: the same with Redis configured
//   (cluster mode). Redis shares caches and rate limits; the tick's lease still
//   lives in the database;
// - from the former jobs-shutdown.test.ts: SIGTERM in the middle of jobs. With
//   the default grace, a run that ends within it finishes and is recorded as
//   succeeded; one that does not is marked failed "interrupted by shutdown" when
//   the grace is spent; and the process exits 0 (the server's force exit leaves
//   room for the grace).
// - from the former jobs-schedules.test.ts: when schedules fire: the ticks of
//   Parse Dashboard's _JobSchedule rows; a tick that comes while the last run
//   still goes is skipped; and catch-up — a @Cron with catchUp runs the tick
//   missed while no instance ran, once, at start; one without it does not replay
//   anything (its kits boot in this process, with their functions named).
// A run whose instance is killed outright: test/jobs-lost.test.ts.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import pg from 'pg'
import { Cron, type JobRequest } from '../lib/index.js'
import { kitPlugin } from '../plugin.js'
import { resetKitConfig } from '../lib/config.js'
import { cronTicks, dashboardTicks } from '../lib/jobs/ticks.js'
import { resolveOptions } from '../lib/options.js'
import { APP_ID, MASTER_KEY, lane, startKit, tempDir } from './helpers/kit.js'
import { ownRedis, sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { cronScenario } from './helpers/cron-scenario.js'
import { jobStatuses, startJob } from './helpers/job-status.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const REDIS_SKIP = 'needs redis-server: apt-get install redis-server, or set REDIS_URL'
const redisOnPath = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0

let postgres: Awaited<ReturnType<typeof sharedPostgres>>
t.before(async () => { postgres = await sharedPostgres(t) })

// ── from the former jobs-schedules.test.ts ──
const at = (iso: string) => new Date(iso)
const iso = (date: Date | undefined) => date?.toISOString()

t.test('Dashboard schedules: one-off, every N minutes from a time of day, days of the week', async (t) => {
  const once = dashboardTicks({ objectId: 'a', jobName: 'j', startAfter: '2026-03-02T10:00:00.000Z' })
  t.equal(iso(once(at('2026-03-01T00:00:00Z'))), '2026-03-02T10:00:00.000Z', 'a one-off runs at startAfter')
  t.equal(once(at('2026-03-02T10:00:00Z')), undefined, 'and never again')

  const hourly = dashboardTicks({ objectId: 'b', jobName: 'j', startAfter: '2026-03-02T10:10:00.000Z', timeOfDay: '09:30:00.000Z', repeatMinutes: 60 })
  t.equal(iso(hourly(at('2026-03-02T10:10:00Z'))), '2026-03-02T10:30:00.000Z', 'every 60 minutes from 09:30, after startAfter')
  t.equal(iso(hourly(at('2026-03-02T23:30:00Z'))), '2026-03-03T09:30:00.000Z', 'each day starts again at the time of day')

  // 2026-03-02 is a Monday; the flags start on Sunday.
  const mondays = dashboardTicks({ objectId: 'c', jobName: 'j', startAfter: '2026-03-02T00:00:00.000Z', timeOfDay: '06:00:00.000Z', repeatMinutes: 1440, daysOfWeek: [0, 1, 0, 0, 0, 0, 0] })
  t.equal(iso(mondays(at('2026-03-02T07:00:00Z'))), '2026-03-09T06:00:00.000Z', 'daily, on Mondays only')
  const never = dashboardTicks({ objectId: 'd', jobName: 'j', repeatMinutes: 5, daysOfWeek: [0, 0, 0, 0, 0, 0, 0] })
  t.equal(never(at('2026-03-02T00:00:00Z')), undefined, 'no day ticked: never')
})

t.test('@Cron expressions: five fields, six with seconds, a timezone', async (t) => {
  t.equal(iso(cronTicks('0 3 * * *', 'UTC').next(at('2026-03-02T03:00:00Z'))), '2026-03-03T03:00:00.000Z', 'strictly after')
  t.equal(iso(cronTicks('*/10 * * * * *', 'UTC').next(at('2026-03-02T03:00:01Z'))), '2026-03-02T03:00:10.000Z')
  t.equal(iso(cronTicks('0 9 * * *', 'Europe/Paris').next(at('2026-07-01T00:00:00Z'))), '2026-07-01T07:00:00.000Z', '09:00 in Paris in summer is 07:00 UTC')
  t.equal(iso(cronTicks('0 3 * * *', 'UTC').previous(at('2026-03-02T10:00:00Z'))), '2026-03-02T03:00:00.000Z')
})

t.test('the kit\'s jobs option: mistakes fail at registration, naming the option', async (t) => {
  const resolve = (jobs: unknown) => () => resolveOptions({ appId: APP_ID, masterKey: MASTER_KEY, jobs } as never)
  t.throws(resolve({ shutdownGrace: 1 }), { code: 'FPK_ERR_OPTION_UNKNOWN', message: /option "jobs\.shutdownGrace": unknown option; did you mean "shutdownGraceMs"\?/ })
  t.throws(resolve({ leaseMs: 10 }), { code: 'FPK_ERR_OPTION_INVALID', message: /option "jobs\.leaseMs": must be a whole number of milliseconds ≥ 1000 \(got 10\)/ })
  t.throws(resolve({ ttlSweep: 'hourly' }), { code: 'FPK_ERR_CRON_EXPRESSION', message: /option "jobs\.ttlSweep": "hourly" is not a cron expression/ })
  t.same(resolveOptions({ appId: APP_ID, masterKey: MASTER_KEY }).jobs, { schedules: true, shutdownGraceMs: 10_000, dashboardPollMs: 10_000, leaseMs: 60_000, ttlSweep: '* * * * *', sessionSweep: '0 * * * *' }, 'the defaults')
})

const slowRuns: Array<{ start: number, end: number, at?: string }> = []

class Overlapping {
  /** Every second, but each run takes 2.5 s: the ticks that come while it runs are skipped, not run beside it. */
  @Cron('* * * * * *', { name: 'overlapping' })
  static async slow (request: JobRequest) {
    const start = Date.now()
    await sleep(2_500)
    slowRuns.push({ start, end: Date.now(), at: request.scheduledAt?.toISOString() })
  }
}

t.test('a tick that comes while the last run still goes is skipped and logged once per run, never run beside it', async (t) => {
  let logs = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logs += String(chunk); done() } })
  await startKit(t, { functions: [Overlapping] }, { logger: { level: 'info', stream } })
  await until('three runs', () => slowRuns.length >= 3, scaled(60_000))
  const runs = slowRuns.slice(0, 3)
  for (let i = 1; i < runs.length; i++) t.ok(runs[i].start >= runs[i - 1].end, `run ${i + 1} started after run ${i} ended`)
  t.equal(new Set(runs.map((run) => run.at)).size, runs.length, 'each run is its own tick')
  t.match(logs, /overlapping: skipped the tick of [^ ]+ \(cron:overlapping:\* \* \* \* \* \*@UTC\): the previous run is still going/, 'the skip is logged')
  // Each run of 2.5 s makes two or three ticks skip: one warning each time, and a count when the next run starts.
  const warnings = logs.match(/overlapping: skipped the tick of/g)?.length ?? 0
  const counts = [...logs.matchAll(/overlapping: (\d+) tick\(s\) of cron:overlapping:\* \* \* \* \* \*@UTC skipped while the previous run went on/g)].map((match) => Number(match[1]))
  t.ok(counts.length >= 1, 'the next run says how many ticks were skipped')
  t.ok(counts.every((count) => count >= 1), `counts: ${counts.join(', ')}`)
  t.ok(warnings <= counts.length + 1, `one warning per run that held the lease (${warnings} warnings, ${counts.reduce((a, b) => a + b, 0)} ticks skipped)`)
})

const caughtUp: Array<{ job: string, at?: string }> = []

class Nightly {
  @Cron('0 4 * * *', { catchUp: true })
  static async withCatchUp (request: JobRequest) { caughtUp.push({ job: 'withCatchUp', at: request.scheduledAt?.toISOString() }) }

  @Cron('0 5 * * *')
  static async withoutCatchUp (request: JobRequest) { caughtUp.push({ job: 'withoutCatchUp', at: request.scheduledAt?.toISOString() }) }
}

t.test('catchUp: the last missed tick runs once at start; without it nothing is replayed', { skip: lane.kind !== 'postgres' && 'runs on the PostgreSQL lane' }, async (t) => {
  const databaseURI = await postgres.database('jobs_catch_up')
  const boot = async () => {
    resetKitConfig()
    const dir = tempDir()
    const app = Fastify({ logger: { level: 'error' }, pluginTimeout: 120_000 })
    await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, databaseURI, dataDir: path.join(dir, 'postgres'), functions: [Nightly] })
    return app
  }
  // A first boot makes the lease table; then both schedules "last ran" three days ago.
  const first = await boot()
  await first.close()
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  for (const key of ['cron:withCatchUp:0 4 * * *@UTC', 'cron:withoutCatchUp:0 5 * * *@UTC']) {
    await client.query("INSERT INTO fpk_job_leases (key, last_tick) VALUES ($1, now() - interval '3 days') ON CONFLICT (key) DO UPDATE SET last_tick = excluded.last_tick", [key])
  }

  const second = await boot()
  t.teardown(() => second.close())
  await until('the missed tick to run', () => caughtUp.length > 0, scaled(60_000))
  await sleep(2_000)
  const missed = cronTicks('0 4 * * *', 'UTC').previous(new Date())!.toISOString()
  t.same(caughtUp, [{ job: 'withCatchUp', at: missed }], 'only the schedule with catchUp ran, for its last missed tick, once')
})

// ── from the former jobs-cluster.test.ts, jobs-cluster-redis.test.ts and jobs-shutdown.test.ts ──
t.test('a @Cron every second on two instances without Redis: each tick once', async (t) => {
  await cronScenario(t, await postgres.database('jobs_plain'))
})

t.test('a @Cron every second on two instances with Redis configured: each tick once', { skip: process.env.REDIS_URL || redisOnPath ? false : REDIS_SKIP }, async (t) => {
  await cronScenario(t, await postgres.database('jobs_redis'), await ownRedis(t))
})

const DEFAULT_GRACE_MS = 10_000

t.test('SIGTERM mid-job with the default grace: the brief run finishes, the endless one is "interrupted by shutdown", and the server exits 0', async (t) => {
  const databaseURI = await postgres.database('jobs_shutdown')
  const instance = await startJobsInstance('C', { DATABASE_URI: databaseURI, SCHEDULES: 'off' }, undefined, { compiled: true })
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
  // By the lines' own times, not their places in the captured output: pino's writes to
  // stdout are asynchronous, and on a loaded machine a line can reach the pipe after a later one.
  const loggedAt = (message: RegExp) => instance.output().split('\n').map((line) => { try { return JSON.parse(line) as { time?: number, msg?: string } } catch { return undefined } })
    .find((line) => typeof line?.msg === 'string' && message.test(line.msg))?.time
  const interruptedAt = loggedAt(/^\[jobs\] interrupted by shutdown after/)
  const closedAt = loggedAt(/^closed$/)
  t.ok(interruptedAt !== undefined && closedAt !== undefined && interruptedAt <= closedAt, `the jobs' grace ended before the application's onClose hook ran (${interruptedAt} <= ${closedAt})`)
  t.notMatch(instance.output(), /killed by timeout/, 'the force exit never fired')

  const briefStatus = await status.one(brief)
  t.equal(briefStatus.status, 'succeeded', 'the brief run finished within the grace')
  t.equal(briefStatus.message, 'brief finished')
  const endlessStatus = await status.one(endless)
  t.equal(endlessStatus.status, 'failed', 'the endless run is failed')
  t.equal(endlessStatus.message, 'interrupted by shutdown')
  t.ok(endlessStatus.finishedAt, 'with its finish time')
})

// Queued jobs (issue 50): two kit instances on one embedded PostgreSQL drain
// N queued jobs (default 10,000; each a Parse job run with its _JobStatus row,
// at most 5 at once per instance, the `bounded` job of test/helpers/queue-node.ts),
// and createOrder-like calls with the confirmation queued in the transaction
// (the outbox) against the same call sending it after commit. The orders go to
// a third instance that only enqueues (queue.workers: false), as a web tier
// beside workers would: the ratio is the outbox's cost on the request; the
// confirmations still run meanwhile on the two workers, on the same machine.
// The same pair on a worker instance is reported beside it: there each order
// also pays for a job run (its _JobStatus row) on the process that answers.
// The orders go in interleaved rounds after a warm-up, each arm running for the
// same time from an empty queue and idle workers, on every core (see
// onEveryCore); the ratio is the median of the rounds' paired ratios, req/s each
// arm's median round. The instances run the queue with the kit's default
// polling and maintenance unless BENCH_QUEUE_POLL_SECONDS /
// BENCH_QUEUE_MAINTENANCE_SECONDS say otherwise; BENCH_FSYNC=1 as the bench's
// other databases. Each round is logged with its CPU per order by process.
// `npm run bench` calls measureQueue (--no-queue skips it).
// Run alone: npx tsx test/bench/queue.ts [jobs] [arm seconds]
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { startJobsInstance } from '../helpers/jobs-processes.js'
import { APP_ID, MASTER_KEY, httpRequest } from '../helpers/kit.js'
import { pin } from './cpu.js'
import { queueRows, type QueueResult } from './report.js'

const headers = { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY }

/** Rounds of orders, each arm once a round, the arm that goes first alternating (odd: one median round). */
const ROUNDS = 9
/** Orders each way before the first round (not measured): both handlers compiled and their statements prepared. */
const WARMUP_ORDERS = 30
/** Each arm's time in a round: long enough that a poll, a maintenance pass or a scheduler hiccup is a small part of it. */
export const ARM_SECONDS = 2
/** How long the workers sit idle before each arm, once the queue is empty. */
const IDLE_MS = 600

/** One arm's totals over its rounds. */
interface ArmTotal { ms: number, orders: number, cpuMs: number, ownMs: number, workersMs: number, pgMs: number, statements: number }
const emptyArm = (): ArmTotal => ({ ms: 0, orders: 0, cpuMs: 0, ownMs: 0, workersMs: 0, pgMs: 0, statements: 0 })
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Boots two instances on a fresh database, drains `jobs` queued jobs, then times sequential orders each way, `armSeconds` per arm a round. */
export async function measureQueue (jobs: number, armSeconds: number, log: (line: string) => void = console.log): Promise<QueueResult> {
  const restoreCores = onEveryCore(log)
  try {
    return await measureOnCores(jobs, armSeconds * 1000, log)
  } finally {
    restoreCores()
  }
}

/**
 * The queue part runs its processes on every core, whoever starts it. `npm run bench` pins itself to the
 * load generator's core(s) (run.ts), and the instances and PostgreSQL started here would inherit that:
 * on one core every confirmation's CPU comes straight out of the orders' pace (a quiet run, same minutes:
 * 0.60× pinned against 0.85–0.87× on both cores). Answers what puts the mask back.
 */
function onEveryCore (log: (line: string) => void): () => void {
  const cores = os.cpus().length
  if (cores < 2) return () => {}
  let mask: string | undefined
  try {
    mask = execFileSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' }).split(':').pop()?.trim()
  } catch {
    return () => {} // no taskset: nothing was pinned either
  }
  const every = `0-${cores - 1}`
  if (!mask || mask === every || mask === [...Array(cores).keys()].join(',')) return () => {}
  log(`queue: this process was pinned to core(s) ${mask}; the queue part runs on cores ${every}`)
  pin(process.pid, every)
  return () => pin(process.pid, mask)
}

async function measureOnCores (jobs: number, armMs: number, log: (line: string) => void): Promise<QueueResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fpk-queue-bench-'))
  // fsync off unless BENCH_FSYNC=1, as the bench's other databases (both arms commit once an order; the workers' own
  // transactions pay for it too with fsync on).
  const fsync = process.env.BENCH_FSYNC === '1'
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: !fsync })
  const admin = new pg.Client({ connectionString: server.uri })
  await admin.connect()
  await admin.query('CREATE DATABASE queue_bench')
  const url = new URL(server.uri)
  url.pathname = '/queue_bench'
  // The queue's settings are the kit's defaults (polling 2 s, maintenance 60 s) unless these say otherwise:
  // the tests' fast ones (0.5 s, 1 s) put three instances' maintenance passes in every second of the orders.
  const poll = process.env.BENCH_QUEUE_POLL_SECONDS ?? '2'
  const maintenance = process.env.BENCH_QUEUE_MAINTENANCE_SECONDS ?? '60'
  log(`queue: polling every ${poll} s, maintenance every ${maintenance} s, PostgreSQL ${fsync ? 'with' : 'without'} fsync, ${ROUNDS} rounds of ${armMs / 1000} s per arm`)
  const env = { DATABASE_URI: url.toString(), QUEUE_POLL_SECONDS: poll, QUEUE_MAINTENANCE_SECONDS: maintenance }
  const [instances, web] = await Promise.all([
    Promise.all([startJobsInstance('A', env, 'queue-node.ts'), startJobsInstance('B', env, 'queue-node.ts')]),
    startJobsInstance('W', { ...env, QUEUE_WORKERS: 'false' }, 'queue-node.ts')
  ])
  const db = new pg.Client({ connectionString: env.DATABASE_URI })
  await db.connect()

  const call = async (origin: string, fn: string, body: Record<string, unknown> = {}): Promise<{ most: number }> => {
    const response = await httpRequest(origin, 'POST', `/parse/functions/${fn}`, { headers, body })
    if (response.status !== 200) throw new Error(`${fn} answered ${response.status}: ${response.text}`)
    return response.json.result
  }
  // Runs that finished, and how many distinct jobs (by their index param) they cover.
  const counts = async () => {
    const row = (await db.query('SELECT count(*) AS runs, count(DISTINCT params::text) AS distinct FROM "_JobStatus" WHERE "jobName" = \'bounded\' AND status = \'succeeded\'')).rows[0]
    return { runs: Number(row.runs), distinct: Number(row.distinct) }
  }

  try {
    // Transactions the database committed or rolled back so far (each statement outside a transaction is one).
    const transactions = async () => Number((await db.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0].n)
    const instancePids = instances.map((instance) => instance.child.pid ?? 0)
    // Drain: enqueue in slices from both instances, then wait for every run (or give up after a quiet minute).
    const drainCpuAt = { all: treeCpuMs(), instances: sum(instancePids.map((pid) => treeCpuMs(pid))), transactions: await transactions() }
    const started = performance.now()
    const slice = 500
    const slices: Array<[number, number]> = []
    for (let from = 0; from < jobs; from += slice) slices.push([from, Math.min(jobs, from + slice)])
    await Promise.all(slices.map(([from, to], i) => call(instances[i % 2].origin, 'enqueueBounded', { from, to })))
    const enqueuedMs = performance.now() - started
    let seen = await counts()
    let lastProgress = performance.now()
    let drainedMs = performance.now() - started
    while (seen.distinct < jobs && performance.now() - lastProgress < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const now = await counts()
      if (now.runs !== seen.runs) lastProgress = performance.now()
      seen = now
      drainedMs = performance.now() - started
    }
    // A short settle so that a late duplicate would still be counted.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    seen = await counts()
    const most = (await Promise.all(instances.map((instance) => call(instance.origin, 'crowdSeen')))).map((s) => s.most)
    log(`queue drain: ${jobs} jobs enqueued in ${Math.round(enqueuedMs)} ms, all run in ${Math.round(drainedMs)} ms; at most ${most.join(' and ')} at once`)
    // Per job (its enqueue and its run, idle polls and the settle included): what the queue's path costs, which the machine's other load barely moves.
    // The database's counters lag by up to a second or so; over thousands of jobs that is noise.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const perJob = (value: number) => (value / jobs).toFixed(2)
    log(`queue drain per job: ${perJob(treeCpuMs() - drainCpuAt.all)} CPU-ms of all processes, ${perJob(sum(instancePids.map((pid) => treeCpuMs(pid))) - drainCpuAt.instances)} of the two instances; ${perJob(await transactions() - drainCpuAt.transactions)} statements (transactions) in the database`)

    // The drained tables vacuumed and analysed now, so that autovacuum's pass over them does not land in one arm.
    await db.query('VACUUM ANALYZE')

    // createOrder with the outbox vs sending after commit: sequential calls in interleaved rounds (each arm
    // first in every other round), after a warm-up of both. Every arm runs for the same time (armMs) from an
    // empty queue and idle workers, and its CPU is counted until its confirmations have run (settled: at once
    // for afterCommit, whose confirmation ran before its answer; the workers' catch-up for the queued arm).
    const { id: product } = await call(web.origin, 'benchProduct') as unknown as { id: string }
    const workerPids = instances.map((instance) => instance.child.pid ?? 0)
    const instanceCpu = () => sum([...workerPids, web.child.pid ?? 0].map((pid) => treeCpuMs(pid)))
    // Every confirmation queued so far has run.
    const settled = async () => {
      for (let i = 0; i < 240; i++) {
        const row = (await db.query('SELECT count(*) AS waiting FROM pgboss.job WHERE name = \'confirmBench\' AND state < \'completed\'')).rows[0]
        if (Number(row.waiting) === 0) return
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    // Autovacuum's and autoanalyze's passes so far (any table): a pass inside an arm is logged with its round.
    const vacuums = async () => Number((await db.query('SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) AS n FROM pg_stat_all_tables')).rows[0].n)
    type Arm = 'queued' | 'afterCommit'
    const fnOf = (arm: Arm) => arm === 'queued' ? 'benchOrderQueued' : 'benchOrderAfterCommit'
    const pair = async (instance: { origin: string, child: { pid?: number } }, label: string) => {
      const own = instance.child.pid ?? 0
      const totals = { queued: emptyArm(), afterCommit: emptyArm() }
      const byRound: number[] = []
      const paced: Record<Arm, number[]> = { queued: [], afterCommit: [] }
      for (const arm of ['afterCommit', 'queued'] as const) for (let i = 0; i < WARMUP_ORDERS; i++) await call(instance.origin, fnOf(arm), { product })
      // The database's transactions of an arm: read when the next arm starts (its counters lag by up to a second,
      // and the idle pause between arms lets them catch up); the pause's few idle polls count with the arm before.
      let counting: { arm: Arm, at: number } | undefined
      const countTo = async (next?: Arm) => {
        const now = await transactions()
        if (counting) totals[counting.arm].statements += now - counting.at
        counting = next ? { arm: next, at: now } : undefined
      }
      for (let round = 0; round < ROUNDS; round++) {
        const paces: Record<Arm, number> = { queued: 0, afterCommit: 0 }
        const parts: string[] = []
        for (const arm of round % 2 === 0 ? ['afterCommit', 'queued'] as const : ['queued', 'afterCommit'] as const) {
          await settled()
          await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
          await countTo(arm)
          const vacuumsAt = await vacuums()
          const at = performance.now()
          const cpuAt = { all: treeCpuMs(), instances: instanceCpu(), self: selfCpuMs(), own: treeCpuMs(own), workers: sum(workerPids.map((pid) => treeCpuMs(pid))) }
          let orders = 0
          while (performance.now() - at < armMs) {
            await call(instance.origin, fnOf(arm), { product })
            orders++
          }
          const ms = performance.now() - at
          const ownMs = treeCpuMs(own) - cpuAt.own
          const settleAt = performance.now()
          await settled()
          const settleMs = performance.now() - settleAt
          const all = treeCpuMs() - cpuAt.all
          // PostgreSQL's processes: everything under this one less the three instances and this process itself.
          const pgMs = all - (instanceCpu() - cpuAt.instances) - (selfCpuMs() - cpuAt.self)
          const workersMs = sum(workerPids.map((pid) => treeCpuMs(pid))) - cpuAt.workers
          const total = totals[arm]
          total.ms += ms
          total.orders += orders
          total.ownMs += ownMs
          total.cpuMs += all
          total.workersMs += workersMs
          total.pgMs += pgMs
          paces[arm] = orders / (ms / 1000)
          paced[arm].push(paces[arm])
          const vacuumed = await vacuums() - vacuumsAt
          parts.push(`${arm} ${Math.round(paces[arm])} req/s, CPU-ms per order own ${(ownMs / orders).toFixed(2)} workers ${(workersMs / orders).toFixed(2)} pg ${(pgMs / orders).toFixed(2)}` +
            (arm === 'queued' ? `, caught up in ${Math.round(settleMs)} ms` : '') + (vacuumed ? `, ${vacuumed} autovacuum pass(es)` : ''))
        }
        byRound.push(paces.queued / paces.afterCommit)
        log(`queue ${label} round ${round + 1}: ${byRound[round].toFixed(2)}× (load ${os.loadavg()[0].toFixed(1)}): ${parts.join('; ')}`)
      }
      await settled()
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
      await countTo()
      // The two arms of a round ran in the same minute: the median of those paired ratios is the figure,
      // so that a round the machine's other load slowed weighs on neither arm more than one round.
      return { queued: median(paced.queued), afterCommit: median(paced.afterCommit), ratio: median(byRound), byRound, totals }
    }
    const onWeb = await pair(web, 'enqueue-only')
    const onWorker = await pair(instances[0], 'worker')
    const rounds = (byRound: number[]) => byRound.map((r) => r.toFixed(2)).join(', ')
    log(`orders on the enqueue-only instance: ${Math.round(onWeb.queued)} queued vs ${Math.round(onWeb.afterCommit)} afterCommit req/s (median rounds; ratio by round ${rounds(onWeb.byRound)}); on a worker instance: ${Math.round(onWorker.queued)} vs ${Math.round(onWorker.afterCommit)} (by round ${rounds(onWorker.byRound)})`)
    // CPU of every process of the bench (the instances, PostgreSQL, this one) per order, confirmation included: what a
    // shared machine's load does to the req/s above does not change it (pollers idle meanwhile count too).
    const cpuLine = ({ queued, afterCommit }: { queued: ArmTotal, afterCommit: ArmTotal }) => {
      const per = (arm: ArmTotal, part: keyof ArmTotal) => arm[part] / arm.orders
      return `${per(queued, 'cpuMs').toFixed(2)} queued vs ${per(afterCommit, 'cpuMs').toFixed(2)} afterCommit CPU-ms per order (${(per(afterCommit, 'cpuMs') / per(queued, 'cpuMs')).toFixed(2)}×), ` +
        `the instance's own process ${per(queued, 'ownMs').toFixed(2)} vs ${per(afterCommit, 'ownMs').toFixed(2)} (${(per(afterCommit, 'ownMs') / per(queued, 'ownMs')).toFixed(2)}×), ` +
        `the worker instances' processes ${per(queued, 'workersMs').toFixed(2)} vs ${per(afterCommit, 'workersMs').toFixed(2)}, ` +
        `PostgreSQL ${per(queued, 'pgMs').toFixed(2)} vs ${per(afterCommit, 'pgMs').toFixed(2)}; ` +
        `statements (transactions) in the database ${per(queued, 'statements').toFixed(2)} vs ${per(afterCommit, 'statements').toFixed(2)} per order; ` +
        `${queued.orders} vs ${afterCommit.orders} orders`
    }
    log(`CPU on the enqueue-only instance's orders: ${cpuLine(onWeb.totals)}; on a worker instance: ${cpuLine(onWorker.totals)}`)
    const ratio = (arms: { ratio: number }) => Math.round(arms.ratio * 100) / 100
    return {
      jobs,
      instances: 2,
      enqueuedMs: Math.round(enqueuedMs),
      drainedMs: Math.round(drainedMs),
      jobsPerSec: Math.round(seen.distinct / (drainedMs / 1000)),
      ranTwice: seen.runs - seen.distinct,
      lost: jobs - seen.distinct,
      mostAtOnce: most,
      afterCommitMsPerJob: Math.round((1000 / onWeb.afterCommit) * 10) / 10,
      orders: onWeb.totals.queued.orders + onWeb.totals.afterCommit.orders,
      armSeconds: armMs / 1000,
      ordersQueuedReqPerSec: Math.round(onWeb.queued),
      ordersAfterCommitReqPerSec: Math.round(onWeb.afterCommit),
      outboxRatio: ratio(onWeb),
      outboxRounds: { lowest: Math.min(...onWeb.byRound), highest: Math.max(...onWeb.byRound), count: onWeb.byRound.length },
      workerOrdersQueuedReqPerSec: Math.round(onWorker.queued),
      workerOrdersAfterCommitReqPerSec: Math.round(onWorker.afterCommit),
      workerOutboxRatio: ratio(onWorker)
    }
  } finally {
    await Promise.all([...instances, web].map((instance) => instance.stop()))
    await db.end()
    await admin.end()
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** This process's own CPU time (user + system), in ms. */
function selfCpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** CPU time (user + system, reaped children included) of a process (this one by default) and everything under it, in ms (Linux /proc; 0 elsewhere). */
function treeCpuMs (root = process.pid): number {
  const parents = new Map<number, number>()
  const ticks = new Map<number, number>()
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return 0
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parents.set(Number(pid), Number(fields[1]))
      ticks.set(Number(pid), Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]))
    } catch {} // gone meanwhile
  }
  const mine = (pid: number): boolean => {
    for (let at = pid, hops = 0; at >= 1 && hops < 64; at = parents.get(at) ?? 0, hops++) if (at === root) return true
    return false
  }
  let total = 0
  for (const [pid, used] of ticks) if (mine(pid)) total += used
  return total * 10 // clock ticks of 10 ms (USER_HZ 100)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await measureQueue(Number(process.argv[2] ?? 10_000), Number(process.argv[3] ?? ARM_SECONDS), (line) => console.log(line))
  console.log(queueRows(result).join('\n'))
}

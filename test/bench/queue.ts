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
// `npm run bench` calls measureQueue (--no-queue skips it).
// Run alone: npx tsx test/bench/queue.ts [jobs] [orders]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { startJobsInstance } from '../helpers/jobs-processes.js'
import { APP_ID, MASTER_KEY, httpRequest } from '../helpers/kit.js'
import { queueRows, type QueueResult } from './report.js'

const headers = { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY }

/** Boots two instances on a fresh database, drains `jobs` queued jobs, then times `orders` sequential orders each way. */
export async function measureQueue (jobs: number, orders: number, log: (line: string) => void = console.log): Promise<QueueResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fpk-queue-bench-'))
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
  const admin = new pg.Client({ connectionString: server.uri })
  await admin.connect()
  await admin.query('CREATE DATABASE queue_bench')
  const url = new URL(server.uri)
  url.pathname = '/queue_bench'
  const env = { DATABASE_URI: url.toString() }
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
    // Drain: enqueue in slices from both instances, then wait for every run (or give up after a quiet minute).
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

    // createOrder with the outbox vs sending after commit: sequential calls, req/s of each (afterCommit
    // before and after, its mean the baseline: the machine's pace drifts over a run).
    const { id: product } = await call(web.origin, 'benchProduct') as unknown as { id: string }
    const cpuPerOrder = { queued: 0, afterCommit: 0, ownQueued: 0, ownAfterCommit: 0 }
    const pace = async (origin: string, fn: string, own: number) => {
      // The last queued orders' confirmations finish before the next arm starts (their CPU is theirs).
      if (fn === 'benchOrderAfterCommit') await settled()
      const at = performance.now()
      const cpuAt = treeCpuMs()
      const ownAt = treeCpuMs(own)
      for (let i = 0; i < orders; i++) await call(origin, fn, { product })
      const reqPerSec = orders / ((performance.now() - at) / 1000)
      const ownMs = (treeCpuMs(own) - ownAt) / orders
      if (fn === 'benchOrderQueued') await settled()
      const cpuMs = (treeCpuMs() - cpuAt) / orders
      const mean = (earlier: number, now: number) => earlier ? (earlier + now) / 2 : now
      if (fn === 'benchOrderQueued') Object.assign(cpuPerOrder, { queued: cpuMs, ownQueued: ownMs })
      else Object.assign(cpuPerOrder, { afterCommit: mean(cpuPerOrder.afterCommit, cpuMs), ownAfterCommit: mean(cpuPerOrder.ownAfterCommit, ownMs) })
      return reqPerSec
    }
    // Every confirmation queued so far has run.
    const settled = async () => {
      for (let i = 0; i < 240; i++) {
        const row = (await db.query('SELECT count(*) AS waiting FROM pgboss.job WHERE name = \'confirmBench\' AND state < \'completed\'')).rows[0]
        if (Number(row.waiting) === 0) return
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    }
    const pair = async (instance: { origin: string, child: { pid?: number } }) => {
      Object.assign(cpuPerOrder, { queued: 0, afterCommit: 0, ownQueued: 0, ownAfterCommit: 0 })
      const own = instance.child.pid ?? 0
      const before = await pace(instance.origin, 'benchOrderAfterCommit', own)
      const queued = await pace(instance.origin, 'benchOrderQueued', own)
      const after = await pace(instance.origin, 'benchOrderAfterCommit', own)
      return { queued, afterCommit: (before + after) / 2, cpu: { ...cpuPerOrder } }
    }
    const onWeb = await pair(web)
    const onWorker = await pair(instances[0])
    log(`orders on the enqueue-only instance: ${Math.round(onWeb.queued)} queued vs ${Math.round(onWeb.afterCommit)} afterCommit req/s; on a worker instance: ${Math.round(onWorker.queued)} vs ${Math.round(onWorker.afterCommit)}`)
    // CPU of every process of the bench (the instances, PostgreSQL) per order, confirmation included: what a
    // shared machine's load does to the req/s above does not change it (pollers idle meanwhile count too).
    const cpuLine = (cpu: typeof cpuPerOrder) => `${cpu.queued.toFixed(1)} queued vs ${cpu.afterCommit.toFixed(1)} afterCommit CPU-ms per order (${(cpu.afterCommit / cpu.queued).toFixed(2)}×), the instance's own process ${cpu.ownQueued.toFixed(1)} vs ${cpu.ownAfterCommit.toFixed(1)} (${(cpu.ownAfterCommit / cpu.ownQueued).toFixed(2)}×)`
    log(`CPU on the enqueue-only instance's orders: ${cpuLine(onWeb.cpu)}; on a worker instance: ${cpuLine(onWorker.cpu)}`)
    const ratio = (arms: { queued: number, afterCommit: number }) => Math.round((arms.queued / arms.afterCommit) * 100) / 100
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
      orders,
      ordersQueuedReqPerSec: Math.round(onWeb.queued),
      ordersAfterCommitReqPerSec: Math.round(onWeb.afterCommit),
      outboxRatio: ratio(onWeb),
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
  const result = await measureQueue(Number(process.argv[2] ?? 10_000), Number(process.argv[3] ?? 500), (line) => console.log(line))
  console.log(queueRows(result).join('\n'))
}

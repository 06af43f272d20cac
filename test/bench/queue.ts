// Queued jobs (issue 50): two kit instances on one embedded PostgreSQL drain
// N queued jobs (default 10,000; each a Parse job run with its _JobStatus row,
// at most 4 at once per instance, the `bounded` job of test/helpers/queue-node.ts), and createOrder-like calls with the
// confirmation queued in the transaction (the outbox) against the same call
// sending it after commit. `npm run bench` calls measureQueue (--no-queue skips it).
// Run alone: npx tsx test/bench/queue.ts [jobs] [orders]
import { mkdtempSync, rmSync } from 'node:fs'
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
  const instances = await Promise.all([startJobsInstance('A', env, 'queue-node.ts'), startJobsInstance('B', env, 'queue-node.ts')])
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

    // createOrder with the outbox vs sending after commit: sequential calls, req/s of each.
    const reqPerSec: Record<string, number> = {}
    for (const fn of ['benchOrderAfterCommit', 'benchOrderQueued']) {
      const at = performance.now()
      for (let i = 0; i < orders; i++) await call(instances[0].origin, fn)
      reqPerSec[fn] = orders / ((performance.now() - at) / 1000)
    }
    // The same work done by afterCommit in memory: the orders' after-commit run, per job.
    const afterCommitMsPerJob = 1000 / reqPerSec.benchOrderAfterCommit
    return {
      jobs,
      instances: 2,
      enqueuedMs: Math.round(enqueuedMs),
      drainedMs: Math.round(drainedMs),
      jobsPerSec: Math.round(seen.distinct / (drainedMs / 1000)),
      ranTwice: seen.runs - seen.distinct,
      lost: jobs - seen.distinct,
      mostAtOnce: most,
      afterCommitMsPerJob: Math.round(afterCommitMsPerJob * 10) / 10,
      orders,
      ordersQueuedReqPerSec: Math.round(reqPerSec.benchOrderQueued),
      ordersAfterCommitReqPerSec: Math.round(reqPerSec.benchOrderAfterCommit),
      outboxRatio: Math.round((reqPerSec.benchOrderQueued / reqPerSec.benchOrderAfterCommit) * 100) / 100
    }
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()))
    await db.end()
    await admin.end()
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await measureQueue(Number(process.argv[2] ?? 10_000), Number(process.argv[3] ?? 500))
  console.log(queueRows(result).join('\n'))
}

// Queued jobs (issue 50): two kit instances on one embedded PostgreSQL drain
// N queued jobs (default 10,000; each a Parse job run with its _JobStatus row,
// at most 4 at once per instance), and createOrder-like calls with the
// confirmation queued in the transaction (the outbox) against the same call
// sending it after commit. Prints jobs/s and the calls' latency percentiles.
// Run: npx tsx test/bench/queue.ts [jobs] [orders]
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { startJobsInstance } from '../helpers/jobs-processes.js'
import { APP_ID, MASTER_KEY, httpRequest } from '../helpers/kit.js'

const JOBS = Number(process.argv[2] ?? 10_000)
const ORDERS = Number(process.argv[3] ?? 500)
const headers = { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY }

const dir = mkdtempSync(path.join(os.tmpdir(), 'fpk-queue-bench-'))
const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
const admin = new pg.Client({ connectionString: server.uri })
await admin.connect()
await admin.query('CREATE DATABASE queue_bench')
const url = new URL(server.uri)
url.pathname = '/queue_bench'
const env = { DATABASE_URI: url.toString() }
const instances = await Promise.all([startJobsInstance('A', env, 'queue-node.ts'), startJobsInstance('B', env, 'queue-node.ts')])

async function call (origin: string, fn: string, body: Record<string, unknown> = {}): Promise<{ most: number }> {
  const response = await httpRequest(origin, 'POST', `/parse/functions/${fn}`, { headers, body })
  if (response.status !== 200) throw new Error(`${fn} answered ${response.status}: ${response.text}`)
  return response.json.result
}

const db = new pg.Client({ connectionString: env.DATABASE_URI })
await db.connect()
const succeeded = async (jobName: string) => Number((await db.query('SELECT count(*) FROM "_JobStatus" WHERE "jobName" = $1 AND status = \'succeeded\'', [jobName])).rows[0].count)

try {
  // Drain: enqueue in slices from both instances, then wait for every run.
  const started = performance.now()
  const slice = 500
  const slices: Array<[number, number]> = []
  for (let from = 0; from < JOBS; from += slice) slices.push([from, Math.min(JOBS, from + slice)])
  await Promise.all(slices.map(([from, to], i) => call(instances[i % 2].origin, 'enqueueBounded', { from, to })))
  const enqueuedMs = performance.now() - started
  while (await succeeded('bounded') < JOBS) await new Promise((resolve) => setTimeout(resolve, 250))
  const drainedMs = performance.now() - started
  const seen = await Promise.all(instances.map((instance) => call(instance.origin, 'crowdSeen')))
  console.log(`drain: ${JOBS} jobs enqueued in ${Math.round(enqueuedMs)} ms, all run in ${Math.round(drainedMs)} ms (${Math.round(JOBS / (drainedMs / 1000))} jobs/s); at most ${seen.map((s) => s.most).join(' and ')} at once`)

  // createOrder with the outbox vs sending after commit: sequential calls, latency per call.
  for (const fn of ['benchOrderAfterCommit', 'benchOrderQueued']) {
    const times: number[] = []
    for (let i = 0; i < ORDERS; i++) {
      const at = performance.now()
      await call(instances[0].origin, fn)
      times.push(performance.now() - at)
    }
    times.sort((a, b) => a - b)
    const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1)
    console.log(`${fn}: ${ORDERS} calls, p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, p99 ${p(0.99)} ms`)
  }
} finally {
  await Promise.all(instances.map((instance) => instance.stop()))
  await db.end()
  await admin.end()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

// Writes during an index build on the filled Note table (issue 46): createNote
// sent every 50 ms, whether or not the one before has answered, from a second
// before the build to a second after it, while the statement the kit's boot
// issues for a newly declared index runs (CONCURRENTLY), then the same with a
// plain CREATE INDEX for comparison. What the writes wait is the lock the
// build holds.
import { setTimeout as sleep } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { postgresIndexCommand, createIndexSql } from '../../lib/storage/postgres/index-sql.js'
import type { IndexSpec } from '../../lib/storage/indexes/plan.js'
import { median, round } from './shared.js'

export interface IndexBuildRun { statement: string, buildMs: number, writes: number, failed: number, p50Ms: number, p99Ms: number, maxMs: number }
export interface IndexBuildResult { rows: number, intervalMs: number, concurrently: IndexBuildRun, plain: IndexBuildRun }

const INTERVAL_MS = 50
const MARGIN_MS = 1000

/** An index on a field no index covers yet, as a model declaring `index: true` on `views` after the fill would get. */
const SPEC: IndexSpec = { className: 'Note', name: 'Note_views_1_bench', kind: 'ordered', fields: [{ name: 'views', type: 'Number', direction: 1 }] }
/** The identifiers-only formatting these statements need (pg-promise's `$1:name`). */
const format = (query: string, values?: unknown) => query.replace(/\$(\d+):name/g, (_, i: string) => `"${String((values as unknown[])[Number(i) - 1]).replace(/"/g, '""')}"`)

function percentile (sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]
}

async function writesDuring (databaseUrl: string, statement: string, write: () => Promise<boolean>): Promise<IndexBuildRun> {
  const latencies: number[] = []
  let failed = 0
  const inFlight: Array<Promise<void>> = []
  const sending = { on: true }
  const loop = (async () => {
    while (sending.on) {
      const sent = performance.now()
      inFlight.push(write().then((ok) => { if (ok) latencies.push(performance.now() - sent); else failed++ }, () => { failed++ }))
      await sleep(INTERVAL_MS)
    }
  })()
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  let buildMs: number
  try {
    await client.query('SET statement_timeout = 0')
    await sleep(MARGIN_MS)
    const started = performance.now()
    await client.query(statement)
    buildMs = performance.now() - started
    await sleep(MARGIN_MS)
    await client.query(`DROP INDEX IF EXISTS "${SPEC.name}"`)
  } finally {
    sending.on = false
    await client.end()
  }
  await loop
  await Promise.all(inFlight)
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    statement,
    buildMs: round(buildMs),
    writes: latencies.length,
    failed,
    p50Ms: round(median(sorted), 1),
    p99Ms: round(percentile(sorted, 0.99), 1),
    maxMs: round(sorted[sorted.length - 1] ?? NaN, 1)
  }
}

export async function measureIndexBuild (databaseUrl: string, rows: number, write: () => Promise<boolean>): Promise<IndexBuildResult> {
  const concurrently = await writesDuring(databaseUrl, postgresIndexCommand(SPEC, format).command, write)
  const plain = await writesDuring(databaseUrl, createIndexSql(SPEC, format), write)
  return { rows, intervalMs: INTERVAL_MS, concurrently, plain }
}

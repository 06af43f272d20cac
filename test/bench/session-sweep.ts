// The expired-session sweep on a large _Session (issue 46): 1M sessions in
// Parse's row format with the session indexes, of which 100k are expired,
// either the oldest rows (as logins age out) or scattered; then the same table
// with nothing to sweep (what an idle hourly run costs). Each batch is the
// kit's own statement; the figures are the whole sweep and its slowest batch.
// Run: npx tsx test/bench/session-sweep.ts [total] [expired]
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { deleteExpiredPostgresSessions } from '../../lib/storage/postgres/session-sweep.js'
import { SESSION_SWEEP_BATCH, SESSION_SWEEP_PAUSE_MS } from '../../lib/storage/session-sweep.js'
import type { PgQueries } from '../../lib/parse/internals.js'

const TOTAL = Number(process.argv[2] ?? 1_000_000)
const EXPIRED = Number(process.argv[3] ?? 100_000)

const dir = mkdtempSync(path.join(os.tmpdir(), 'fpk-sweep-bench-'))
const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
const client = new pg.Client({ connectionString: server.uri })
await client.connect()
const queries = { one: async (query: string, values?: unknown[]) => (await client.query(query, values)).rows[0] } as unknown as PgQueries

async function fill (expiredWhere: string): Promise<void> {
  await client.query('DROP TABLE IF EXISTS "_Session"')
  await client.query(`CREATE TABLE "_Session" ("objectId" varchar(120) PRIMARY KEY, "createdAt" timestamptz, "updatedAt" timestamptz,
    "user" varchar(120), "sessionToken" text, "expiresAt" timestamptz, "installationId" text, "createdWith" jsonb, "_rperm" text[], "_wperm" text[])`)
  await client.query(`INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "user", "sessionToken", "expiresAt", "createdWith")
    SELECT 's' || i, now(), now(), 'u' || (i % 50000), 'r:' || md5(i::text),
           CASE WHEN ${expiredWhere} THEN now() - interval '1 day' ELSE now() + interval '1 year' END,
           '{"action": "login", "authProvider": "password"}'::jsonb
    FROM generate_series(1, $1::int) AS i`, [TOTAL])
  await client.query('CREATE UNIQUE INDEX "_Session_unique_sessionToken" ON "_Session" ("sessionToken")')
  await client.query('CREATE INDEX "_Session_user_1" ON "_Session" ("user")')
  await client.query('VACUUM ANALYZE "_Session"')
}

async function sweep (): Promise<{ deleted: number, batches: number, totalMs: number, slowestMs: number }> {
  let deleted = 0
  let batches = 0
  let slowestMs = 0
  const started = performance.now()
  for (;;) {
    const at = performance.now()
    const n = await deleteExpiredPostgresSessions(queries, SESSION_SWEEP_BATCH)
    slowestMs = Math.max(slowestMs, performance.now() - at)
    batches++
    deleted += n
    if (n < SESSION_SWEEP_BATCH) break
    await sleep(SESSION_SWEEP_PAUSE_MS)
  }
  return { deleted, batches, totalMs: Math.round(performance.now() - started), slowestMs: Math.round(slowestMs) }
}

const explain = async () => (await client.query(`EXPLAIN (ANALYZE, BUFFERS) WITH doomed AS (SELECT "objectId" FROM "_Session" WHERE "expiresAt" < now() LIMIT ${SESSION_SWEEP_BATCH} FOR UPDATE SKIP LOCKED),
  gone AS (DELETE FROM "_Session" AS target USING doomed WHERE target."objectId" = doomed."objectId" RETURNING 1) SELECT count(*) FROM gone`)).rows.map((row) => row['QUERY PLAN']).join('\n')

try {
  const every = Math.max(1, Math.round(TOTAL / EXPIRED))
  for (const [name, where] of [['oldest', `i <= ${EXPIRED}`], ['scattered', `i % ${every} = 0`], ['none', 'false']] as const) {
    await fill(where)
    const result = await sweep()
    const pauses = Math.max(0, result.batches - 1) * SESSION_SWEEP_PAUSE_MS
    console.log(`${name}: ${TOTAL} sessions, deleted ${result.deleted} in ${result.batches} statements, ${result.totalMs} ms (${result.totalMs - pauses} ms without the pauses), slowest statement ${result.slowestMs} ms`)
  }
  await fill(`i % ${every} = 0`)
  console.log(`one batch, scattered, fresh table:\n${await explain()}`)
} finally {
  await client.end()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

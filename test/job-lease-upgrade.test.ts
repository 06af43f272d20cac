// The run-lease table across a deploy: a table made by a kit before the
// `marking` column (the lost-run report's mark) gets the column at the next
// boot, its leases read as not marking, and the older shape's writes (which
// name no marking) still work beside the newer code's (PostgreSQL lane).
import t from 'tap'
import pg from 'pg'
import { ensurePostgresRunLeaseTable, holdPostgresRun, takeLostPostgresRuns } from '../lib/storage/postgres/job-run-lease.js'
import { lane } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'

type Queries = Parameters<typeof ensurePostgresRunLeaseTable>[0]

t.test('a lease table made before the marking column', { skip: lane.kind !== 'postgres' && 'runs on the embedded PostgreSQL lane' }, async (t) => {
  const { databaseURI } = await sharedPostgres(t)
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  const queries = {
    none: async (text: string, values?: unknown[]) => { await client.query(text, values) },
    any: async (text: string, values?: unknown[]) => (await client.query(text, values)).rows
  } as unknown as Queries

  // The shape an earlier version made, with a lease that has expired.
  await client.query('CREATE TABLE fpk_job_run_leases (job_id text PRIMARY KEY, job_name text NOT NULL, holder text NOT NULL, params jsonb NOT NULL, attempt integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz NOT NULL)')
  await client.query("INSERT INTO fpk_job_run_leases (job_id, job_name, holder, params, attempt, lease_until) VALUES ('old-run', 'resumable', 'H', '{}', 1, now() - interval '1 second')")

  await ensurePostgresRunLeaseTable(queries)
  await ensurePostgresRunLeaseTable(queries) // a second boot: nothing left to add
  const column = await client.query("SELECT column_default, is_nullable FROM information_schema.columns WHERE table_name = 'fpk_job_run_leases' AND column_name = 'marking'")
  t.match(column.rows, [{ column_default: 'false', is_nullable: 'NO' }], 'the column is added, not null, false by default')

  const taken = await takeLostPostgresRuns(queries, 10, 60_000)
  t.match(taken, [{ jobId: 'old-run', holder: 'H', marking: false }], "the older version's lease is taken as one not being reported")

  // An instance still on the older version writes its leases without the column.
  await client.query("INSERT INTO fpk_job_run_leases (job_id, job_name, holder, params, attempt, lease_until) VALUES ('older-writer', 'resumable', 'O', '{}', 1, now() + interval '1 minute')")
  await holdPostgresRun(queries, { jobId: 'new-run', jobName: 'resumable', holder: 'N', params: {}, attempt: 1, marking: true }, 60_000)
  const rows = await client.query('SELECT job_id, marking FROM fpk_job_run_leases ORDER BY job_id')
  t.same(rows.rows, [{ job_id: 'new-run', marking: true }, { job_id: 'old-run', marking: false }, { job_id: 'older-writer', marking: false }], 'both versions write their leases')
})

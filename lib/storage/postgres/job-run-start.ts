// A batch of queued runs begins and ends on PostgreSQL with as few statements
// as the guarantees allow: the runs' leases and their _JobStatus rows in one
// statement (both or neither: no row is ever "running" without its lease),
// and each run's end on its row with its lease dropped in one more. The rows
// hold what Parse's own job status handler writes (jobName, status "running",
// createdAt, ACL {} as empty _rperm/_wperm) plus the run's params and source.
import type { PgQueries } from '../../parse/internals.js'
import type { RunEndRow, RunStart } from '../lease-claim.js'

/** pg-promise's named statement: parsed and planned once per connection, not at every call. */
interface Named { name: string, text: string, values: unknown[] }
type NamedQueries = { none (query: Named): Promise<null> }

const START = `WITH run AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS run (job_id text, job_name text, holder text, params jsonb, attempt integer, row_params jsonb, source text)
  ), leased AS (
    INSERT INTO fpk_job_run_leases (job_id, job_name, holder, params, attempt, lease_until)
    SELECT job_id, job_name, holder, params, attempt, now() + $2 * interval '1 millisecond' FROM run
    ON CONFLICT (job_id) DO UPDATE SET holder = EXCLUDED.holder, attempt = EXCLUDED.attempt, lease_until = EXCLUDED.lease_until
  )
  INSERT INTO "_JobStatus" ("objectId", "jobName", status, source, params, "createdAt", _rperm, _wperm)
  SELECT job_id, job_name, 'running', source, row_params, now(), '{}', '{}' FROM run`

// As Parse's update of a job's end: status and finishedAt, the message only when there is one (else a progress message stays).
const END = `WITH ended AS (
    UPDATE "_JobStatus" SET status = $2, "finishedAt" = $3, message = COALESCE($4, message) WHERE "objectId" = $1
  )
  DELETE FROM fpk_job_run_leases WHERE job_id = $1`

/** Parse makes _JobStatus with its first job run: until then the leases go alone, and the rows are the caller's. */
const UNDEFINED_TABLE = '42P01'

/**
 * Writes the runs' leases and their "running" rows in one statement. Answers
 * false when _JobStatus does not exist yet: then nothing was written.
 */
export async function startPostgresRuns (client: PgQueries, runs: RunStart[], leaseMs: number): Promise<boolean> {
  if (runs.length === 0) return true
  const batch = runs.map((run) => ({
    job_id: run.jobId,
    job_name: run.jobName,
    holder: run.holder,
    params: run.params ?? {},
    attempt: run.attempt,
    row_params: run.row.params,
    source: run.row.source
  }))
  try {
    await (client as unknown as NamedQueries).none({ name: 'fpk_start_runs', text: START, values: [JSON.stringify(batch), leaseMs] })
    return true
  } catch (error) {
    if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error
    return false
  }
}

/** The run's end on its row and its lease dropped, in one statement (the lease never outlives a recorded end, nor goes without one). */
export async function endPostgresRun (client: PgQueries, jobId: string, end: RunEndRow): Promise<void> {
  await (client as unknown as NamedQueries).none({ name: 'fpk_end_run', text: END, values: [jobId, end.status, end.finishedAt, end.message ?? null] })
}

// A batch of queued runs begins and ends on PostgreSQL with as few statements
// as the guarantees allow: the runs' leases and their _JobStatus rows in one
// statement (both or neither: no row is ever "running" without its lease),
// and each run's end on its row with its lease dropped in one more (the ends
// that come together, as a batch of short runs' do, in one statement). The rows
// hold what Parse's own job status handler writes (jobName, status "running",
// createdAt, ACL {} as empty _rperm/_wperm) plus the run's params and source.
import type { PgQueries } from '../../parse/internals.js'
import type { RunEndRow, RunStart } from '../lease-claim.js'
import { QUEUE_SCHEMA } from '../queue-schema.js'

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

// As Parse's update of a job's end: status and finishedAt, the message only when there is one (else a progress message stays);
// several runs' ends at once, each row's end, its lease's drop and, for a run that succeeded, its queued job's
// completion (as pg-boss's complete: only while that job is active) in the same statement. The rows' ids come as an
// array too: PostgreSQL counts a JSON recordset as 100 rows and joined by it alone read all of _JobStatus (its whole
// history of runs) at every end up to tens of thousands of rows. Not the queues' names: a name known when the
// statement starts made each plan cheaper by the partitions it skips, so PostgreSQL planned it again at every call.
const END = `WITH run AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS run (job_id text, status text, finished_at timestamptz, message text, queue text, queue_id uuid)
  ), ended AS (
    UPDATE "_JobStatus" AS job SET status = run.status, "finishedAt" = run.finished_at, message = COALESCE(run.message, job.message)
    FROM run WHERE job."objectId" = ANY($2::text[]) AND job."objectId" = run.job_id
  ), completed AS (
    UPDATE ${QUEUE_SCHEMA}.job AS queued SET completed_on = now(), state = 'completed'
    FROM run WHERE run.status = 'succeeded' AND queued.name = run.queue AND queued.id = run.queue_id AND queued.state = 'active'
  )
  DELETE FROM fpk_job_run_leases AS lease USING run WHERE lease.job_id = ANY($2::text[]) AND lease.job_id = run.job_id`

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

/** One run's end, as the batch's writer takes it, with the queue's job it is an attempt of. */
export interface RunEndOf extends RunEndRow { jobId: string, queued?: { queue: string, id: string } }

/**
 * The runs' ends on their rows, their leases dropped and the queued jobs of
 * those that succeeded completed, in one statement: no lease outlives its
 * run's recorded end, nor goes without one, and a run recorded as succeeded
 * is never left active in the queue (an instance killed between the two
 * would have had it run again at its expiry).
 */
export async function endPostgresRuns (client: PgQueries, ends: RunEndOf[]): Promise<void> {
  const batch = ends.map((end) => ({ job_id: end.jobId, status: end.status, finished_at: end.finishedAt.toISOString(), message: end.message ?? null, queue: end.queued?.queue ?? null, queue_id: end.queued?.id ?? null }))
  await (client as unknown as NamedQueries).none({ name: 'fpk_end_runs', text: END, values: [JSON.stringify(batch), batch.map((end) => end.job_id)] })
}

/**
 * A batch's ends, written together: the ends that come in the same turn of the
 * event loop (a batch of short runs ends nearly at once) go in one statement,
 * each caller answered when it is written. A run that ends later gets a
 * statement of its own; none waits for another run to end.
 */
export function batchedEnds (write: (ends: RunEndOf[]) => Promise<void>): (jobId: string, end: RunEndRow) => Promise<void> {
  let pending: Array<{ end: RunEndOf, settle: (error?: unknown) => void }> = []
  const flush = () => {
    const taken = pending
    pending = []
    write(taken.map((entry) => entry.end)).then(() => { for (const entry of taken) entry.settle() }, (error: unknown) => { for (const entry of taken) entry.settle(error) })
  }
  return (jobId, end) => new Promise<void>((resolve, reject) => {
    if (pending.length === 0) setImmediate(flush)
    pending.push({ end: { jobId, ...end }, settle: (error) => error === undefined ? resolve() : reject(error) })
  })
}

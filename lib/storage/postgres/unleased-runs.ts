// Runs whose _JobStatus row says "running" but that hold no lease, on
// PostgreSQL: an instance killed between Parse marking the row running and the
// kit's handler writing the run's lease leaves such a row, and nothing else
// would ever end it. One statement lists them (the looking instance judges how
// long each has been so: ../../jobs/unleased-sightings.ts); another marks the
// due ones failed and returns them, rows locked by a concurrent taker skipped,
// so each is reported once.
import type { PgQueries } from '../../parse/internals.js'
import type { UnleasedRun } from '../lease-claim.js'

/** Partial: only the running rows, so the look stays cheap however many ended rows _JobStatus holds. */
const INDEX = 'fpk_job_status_running'

export async function ensurePostgresRunningIndex (client: PgQueries): Promise<void> {
  await client.none(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${INDEX} ON "_JobStatus" ("createdAt") WHERE status = 'running'`)
    // Another instance made it at the same moment.
    .catch((error: { code?: string }) => { if (error.code !== '23505' && error.code !== '42P07') throw error })
}

/** Up to `limit` running rows of these jobs with no lease, oldest first: only their ids (nothing is taken). */
export async function findUnleasedPostgresRuns (client: PgQueries, jobNames: string[], limit: number): Promise<string[]> {
  if (jobNames.length === 0) return []
  const rows = await client.any(
    `SELECT run."objectId" FROM "_JobStatus" AS run
     WHERE run.status = 'running' AND run."jobName" = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM fpk_job_run_leases AS lease WHERE lease.job_id = run."objectId")
     ORDER BY run."createdAt" LIMIT $2`,
    [jobNames, limit])
  return rows.map((row) => row.objectId as string)
}

/** Marks failed and returns those of these runs whose row still says "running" with no lease. */
export async function takeUnleasedPostgresRuns (client: PgQueries, jobIds: string[], message: string): Promise<UnleasedRun[]> {
  const rows = await client.any(
    `UPDATE "_JobStatus" SET status = 'failed', message = $2, "finishedAt" = now(), "updatedAt" = now()
     WHERE "objectId" IN (
       SELECT run."objectId" FROM "_JobStatus" AS run
       WHERE run."objectId" = ANY($1::text[]) AND run.status = 'running'
         AND NOT EXISTS (SELECT 1 FROM fpk_job_run_leases AS lease WHERE lease.job_id = run."objectId")
       FOR UPDATE SKIP LOCKED)
     AND status = 'running'
     RETURNING "objectId", "jobName", params, source`,
    [jobIds, message])
  return rows.map((row) => ({
    jobId: row.objectId as string,
    jobName: row.jobName as string,
    params: (row.params ?? {}) as Record<string, unknown>,
    source: (row.source ?? undefined) as string | undefined
  }))
}

// Run leases on PostgreSQL: one row per job run going on, renewed by the
// instance running it. A row whose lease has passed belongs to an instance
// that died; whoever takes it (one statement, rows locked and skipped by
// concurrent takers) reports the run lost, once, and then drops it.
import type { PgQueries } from '../../parse/internals.js'
import type { RunLease } from '../lease-claim.js'

const TABLE = 'fpk_job_run_leases'

export async function ensurePostgresRunLeaseTable (client: PgQueries): Promise<void> {
  await client.none(`CREATE TABLE IF NOT EXISTS ${TABLE} (job_id text PRIMARY KEY, job_name text NOT NULL, holder text NOT NULL, params jsonb NOT NULL, attempt integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz NOT NULL, marking boolean NOT NULL DEFAULT false)`)
    .catch((error: { code?: string }) => { if (error.code !== '23505' && error.code !== '42P07') throw error })
  // A table made before the column: added once (the ALTER's lock only then).
  const present = await client.any(`SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${TABLE}' AND column_name = 'marking'`)
  if (present.length === 0) {
    await client.none(`ALTER TABLE ${TABLE} ADD COLUMN IF NOT EXISTS marking boolean NOT NULL DEFAULT false`)
      .catch((error: { code?: string }) => { if (error.code !== '42701') throw error })
  }
}

export async function holdPostgresRun (client: PgQueries, lease: Omit<RunLease, 'startedAt'>, leaseMs: number): Promise<void> {
  await client.none(
    `INSERT INTO ${TABLE} (job_id, job_name, holder, params, attempt, lease_until, marking) VALUES ($1, $2, $3, $4::jsonb, $5, now() + $6 * interval '1 millisecond', $7)
     ON CONFLICT (job_id) DO UPDATE SET holder = EXCLUDED.holder, attempt = EXCLUDED.attempt, lease_until = EXCLUDED.lease_until, marking = EXCLUDED.marking`,
    [lease.jobId, lease.jobName, lease.holder, JSON.stringify(lease.params ?? {}), lease.attempt, leaseMs, lease.marking === true])
}

/** Several runs' leases in one statement (a batch of queued runs). */
export async function holdPostgresRuns (client: PgQueries, leases: Array<Omit<RunLease, 'startedAt'>>, leaseMs: number): Promise<void> {
  if (leases.length === 0) return
  await client.none(
    `INSERT INTO ${TABLE} (job_id, job_name, holder, params, attempt, lease_until)
     SELECT lease.job_id, lease.job_name, lease.holder, lease.params, lease.attempt, now() + $2 * interval '1 millisecond'
     FROM jsonb_to_recordset($1::jsonb) AS lease (job_id text, job_name text, holder text, params jsonb, attempt integer)
     ON CONFLICT (job_id) DO UPDATE SET holder = EXCLUDED.holder, attempt = EXCLUDED.attempt, lease_until = EXCLUDED.lease_until`,
    [JSON.stringify(leases.map((lease) => ({ job_id: lease.jobId, job_name: lease.jobName, holder: lease.holder, params: lease.params ?? {}, attempt: lease.attempt }))), leaseMs])
}

export async function renewPostgresRuns (client: PgQueries, holder: string, leaseMs: number): Promise<void> {
  await client.none(`UPDATE ${TABLE} SET lease_until = now() + $2 * interval '1 millisecond' WHERE holder = $1`, [holder, leaseMs])
}

export async function attemptPostgresRun (client: PgQueries, jobId: string, attempt: number): Promise<void> {
  await client.none(`UPDATE ${TABLE} SET attempt = $2 WHERE job_id = $1`, [jobId, attempt])
}

export async function dropPostgresRun (client: PgQueries, jobId: string): Promise<void> {
  await client.none(`DELETE FROM ${TABLE} WHERE job_id = $1`, [jobId])
}

export async function dropPostgresRuns (client: PgQueries, jobIds: string[]): Promise<void> {
  if (jobIds.length === 0) return
  await client.none(`DELETE FROM ${TABLE} WHERE job_id = ANY($1::text[])`, [jobIds])
}

/** Takes expired leases for their report: each held holdMs more (one taker; no look for unleased runs takes the run meanwhile), dropped once reported. */
export async function takeLostPostgresRuns (client: PgQueries, limit: number, holdMs: number): Promise<RunLease[]> {
  const rows = await client.any(
    `UPDATE ${TABLE} SET lease_until = now() + $2 * interval '1 millisecond'
     WHERE job_id IN (SELECT job_id FROM ${TABLE} WHERE lease_until < now() LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING job_id, job_name, holder, params, attempt, started_at, marking`, [limit, holdMs])
  return rows.map((row) => ({
    jobId: row.job_id as string,
    jobName: row.job_name as string,
    holder: row.holder as string,
    params: row.params as Record<string, unknown>,
    attempt: row.attempt as number,
    startedAt: row.started_at as Date,
    marking: row.marking === true
  }))
}

// Schedule leases on PostgreSQL: one row per schedule in a table of the kit's
// own, claimed with a conditional UPDATE. In READ COMMITTED a second claimer
// waits on the row lock and then re-checks the condition, so one tick is
// claimed once, however many instances try.
import type { PgQueries } from '../../parse/internals.js'
import type { LeaseClaim } from '../lease-claim.js'

const TABLE = 'fpk_job_leases'

export async function ensurePostgresLeaseTable (client: PgQueries): Promise<void> {
  // Two instances booting at once may both create it: the loser's error is the same table.
  await client.none(`CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, last_tick timestamptz NOT NULL, holder text, lease_until timestamptz)`)
    .catch((error: { code?: string }) => { if (error.code !== '23505' && error.code !== '42P07') throw error })
}

export async function claimPostgresTick (client: PgQueries, key: string, tick: Date, holder: string, leaseMs: number): Promise<LeaseClaim> {
  await client.none(`INSERT INTO ${TABLE} (key, last_tick) VALUES ($1, 'epoch') ON CONFLICT (key) DO NOTHING`, [key])
  const claimed = await client.any(
    `UPDATE ${TABLE} SET last_tick = $2, holder = $3, lease_until = now() + $4 * interval '1 millisecond'
     WHERE key = $1 AND last_tick < $2 AND (lease_until IS NULL OR lease_until < now()) RETURNING key`,
    [key, tick, holder, leaseMs])
  if (claimed.length > 0) return 'claimed'
  // Still held by a run in progress: whoever moves the tick on reports the skip, once.
  const skipped = await client.any(`UPDATE ${TABLE} SET last_tick = $2 WHERE key = $1 AND last_tick < $2 RETURNING key`, [key, tick])
  return skipped.length > 0 ? 'busy' : 'taken'
}

export async function renewPostgresLease (client: PgQueries, key: string, holder: string, leaseMs: number): Promise<void> {
  await client.none(`UPDATE ${TABLE} SET lease_until = now() + $3 * interval '1 millisecond' WHERE key = $1 AND holder = $2 AND lease_until IS NOT NULL`, [key, holder, leaseMs])
}

export async function releasePostgresLease (client: PgQueries, key: string, holder: string): Promise<void> {
  await client.none(`UPDATE ${TABLE} SET lease_until = NULL WHERE key = $1 AND holder = $2`, [key, holder])
}

export async function lastPostgresTick (client: PgQueries, key: string): Promise<Date | undefined> {
  const rows = await client.any(`SELECT last_tick FROM ${TABLE} WHERE key = $1`, [key])
  const value = rows[0]?.last_tick as Date | undefined
  return value && value.getTime() > 0 ? value : undefined
}

// Schedule leases in the database every instance shares, so each tick of a
// schedule runs on exactly one instance (with or without Redis). A lease has
// an expiry, renewed while its run goes on, so a crashed holder is replaced.
// The only place that knows which database holds them.
import { currentDatabase } from './database.js'
import type { MongoAdapter, PostgresAdapter } from '../parse/internals.js'
import type { KitState } from '../kit-state.js'
import { claimPostgresTick, ensurePostgresLeaseTable, lastPostgresTick, releasePostgresLease, renewPostgresLease } from './postgres/job-lease.js'
import { claimMongoTick, lastMongoTick, releaseMongoLease, renewMongoLease } from './mongo/job-lease.js'
import { deleteExpiredPostgresRows } from './postgres/expire.js'

import type { LeaseClaim } from './lease-claim.js'

export type { LeaseClaim }

export interface JobLeases {
  /** Claims one tick (its scheduled time) of the schedule `key` for `holder`. */
  claim (key: string, tick: Date, holder: string, leaseMs: number): Promise<LeaseClaim>
  renew (key: string, holder: string, leaseMs: number): Promise<void>
  release (key: string, holder: string): Promise<void>
  /** The last tick claimed (run or skipped), if any. */
  lastTick (key: string): Promise<Date | undefined>
}

export async function openJobLeases (state: KitState): Promise<JobLeases> {
  const database = currentDatabase(state)
  if (!database) throw new Error('schedules need the kit\'s database open')
  if (database.kind === 'postgres') {
    const client = (database.adapter as PostgresAdapter)._client
    await ensurePostgresLeaseTable(client)
    return {
      claim: (key, tick, holder, leaseMs) => claimPostgresTick(client, key, tick, holder, leaseMs),
      renew: (key, holder, leaseMs) => renewPostgresLease(client, key, holder, leaseMs),
      release: (key, holder) => releasePostgresLease(client, key, holder),
      lastTick: (key) => lastPostgresTick(client, key)
    }
  }
  const adapter = database.adapter as MongoAdapter
  await adapter.connect()
  const db = () => adapter.database
  return {
    claim: (key, tick, holder, leaseMs) => claimMongoTick(db(), key, tick, holder, leaseMs),
    renew: (key, holder, leaseMs) => renewMongoLease(db(), key, holder, leaseMs),
    release: (key, holder) => releaseMongoLease(db(), key, holder),
    lastTick: (key) => lastMongoTick(db(), key)
  }
}

/** Whether the database deletes rows past a TTL index itself (MongoDB does; PostgreSQL needs the kit's sweep). */
export function databaseExpiresRows (state: KitState): boolean {
  return currentDatabase(state)?.kind !== 'postgres'
}

/** Deletes the rows of `className` whose `field` is older than ttlSeconds, in batches; the number deleted. Parse triggers do not run. */
export async function deleteExpiredRows (state: KitState, className: string, field: string, ttlSeconds: number, batchSize = 500): Promise<number> {
  const database = currentDatabase(state)
  if (!database || database.kind !== 'postgres') return 0
  return deleteExpiredPostgresRows((database.adapter as PostgresAdapter)._client, className, field, ttlSeconds, batchSize)
}

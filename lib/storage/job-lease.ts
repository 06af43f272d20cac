// Schedule leases in the database every instance shares, so each tick of a
// schedule runs on exactly one instance (with or without Redis). A lease has
// an expiry, renewed while its run goes on, so a crashed holder is replaced.
// The only place that knows which database holds them.
import { currentDatabase } from './database.js'
import type { MongoAdapter } from '../parse/internals.js'
import { pgDatabase } from '../parse/adapter-internals.js'
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

/** The leases on the kit's database. Nothing is asked of the database until the first claim (a boot with the database away still succeeds). */
export async function openJobLeases (state: KitState): Promise<JobLeases> {
  const database = currentDatabase(state)
  if (!database) throw new Error('schedules need the kit\'s database open')
  if (database.kind === 'postgres') {
    const client = pgDatabase(database.adapter)!
    const ready = once(() => ensurePostgresLeaseTable(client))
    return {
      claim: async (key, tick, holder, leaseMs) => { await ready(); return claimPostgresTick(client, key, tick, holder, leaseMs) },
      renew: (key, holder, leaseMs) => renewPostgresLease(client, key, holder, leaseMs),
      release: (key, holder) => releasePostgresLease(client, key, holder),
      lastTick: async (key) => { await ready(); return lastPostgresTick(client, key) }
    }
  }
  const adapter = database.adapter as MongoAdapter
  const connected = once(async () => { await adapter.connect() })
  const db = async () => { await connected(); return adapter.database }
  return {
    claim: async (key, tick, holder, leaseMs) => claimMongoTick(await db(), key, tick, holder, leaseMs),
    renew: async (key, holder, leaseMs) => renewMongoLease(await db(), key, holder, leaseMs),
    release: async (key, holder) => releaseMongoLease(await db(), key, holder),
    lastTick: async (key) => lastMongoTick(await db(), key)
  }
}

/** Runs `work` once it succeeds; a failure is tried again on the next call. */
function once (work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => {
    done ??= work().catch((error: unknown) => { done = undefined; throw error })
    return done
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
  return deleteExpiredPostgresRows(pgDatabase(database.adapter)!, className, field, ttlSeconds, batchSize)
}

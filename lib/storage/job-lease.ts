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
import { attemptPostgresRun, dropPostgresRun, dropPostgresRuns, ensurePostgresRunLeaseTable, holdPostgresRun, holdPostgresRuns, renewPostgresRuns, takeLostPostgresRuns } from './postgres/job-run-lease.js'
import { attemptMongoRun, dropMongoRun, dropMongoRuns, holdMongoRun, holdMongoRuns, renewMongoRuns, takeLostMongoRuns } from './mongo/job-run-lease.js'
import { ensurePostgresRunningIndex, findUnleasedPostgresRuns, takeUnleasedPostgresRuns } from './postgres/unleased-runs.js'
import { batchedEnds, endPostgresRuns, startPostgresRuns } from './postgres/job-run-start.js'
import { ensureMongoRunningIndex, findUnleasedMongoRuns, takeUnleasedMongoRuns } from './mongo/unleased-runs.js'

import type { LeaseClaim, RunEndRow, RunLease, RunStart, StartedRuns, UnleasedRun } from './lease-claim.js'

export type { LeaseClaim, RunEndRow, RunLease, RunStart, StartedRuns, UnleasedRun }

export interface JobLeases {
  /** Claims one tick (its scheduled time) of the schedule `key` for `holder`. */
  claim (key: string, tick: Date, holder: string, leaseMs: number): Promise<LeaseClaim>
  renew (key: string, holder: string, leaseMs: number): Promise<void>
  release (key: string, holder: string): Promise<void>
  /** The last tick claimed (run or skipped), if any. */
  lastTick (key: string): Promise<Date | undefined>
  /** A run begins on this instance: it holds the run's lease until it ends. */
  holdRun (lease: Omit<RunLease, 'startedAt'>, leaseMs: number): Promise<void>
  /**
   * Several queued runs begin on this instance: their leases, and with them
   * (where the database can, in the same write) their "running" _JobStatus
   * rows. Answers how their ends are written (each with its lease dropped),
   * or undefined when only the leases were written: the rows are the caller's.
   */
  startRuns (runs: RunStart[], leaseMs: number): Promise<StartedRuns | undefined>
  /** Extends the leases of every run this holder has going. */
  renewRuns (holder: string, leaseMs: number): Promise<void>
  /** The run moved on to this attempt (a retry after its instance is lost continues the count). */
  attemptRun (jobId: string, attempt: number): Promise<void>
  /** The run ended and its outcome is recorded. */
  dropRun (jobId: string): Promise<void>
  /** Several runs ended, their outcomes recorded: their leases go in one write. */
  dropRuns (jobIds: string[]): Promise<void>
  /**
   * Takes up to `limit` runs whose lease has passed (their instance is gone)
   * for their report: each lease is held `holdMs` more, so that no other
   * instance takes the run meanwhile, and is dropped once the run is reported.
   */
  takeLostRuns (limit: number, holdMs: number): Promise<RunLease[]>
  /** The ids of up to `limit` runs of these jobs whose _JobStatus row says "running" and that hold no lease, oldest first. */
  findUnleasedRuns (jobNames: string[], limit: number): Promise<string[]>
  /**
   * Marks failed (with `message`) and returns those of these runs whose row
   * still says "running" with no lease: their instance died before the lease
   * was written. Each is taken by one instance only.
   */
  takeUnleasedRuns (jobIds: string[], message: string): Promise<UnleasedRun[]>
}

/** The leases on the kit's database. Nothing is asked of the database until the first claim (a boot with the database away still succeeds). */
export async function openJobLeases (state: KitState): Promise<JobLeases> {
  const database = currentDatabase(state)
  if (!database) throw new Error('schedules need the kit\'s database open')
  if (database.kind === 'postgres') {
    const client = pgDatabase(database.adapter)!
    const ready = once(() => ensurePostgresLeaseTable(client))
    const runsReady = once(() => ensurePostgresRunLeaseTable(client))
    const runningIndexed = once(() => ensurePostgresRunningIndex(client))
    return {
      claim: async (key, tick, holder, leaseMs) => { await ready(); return claimPostgresTick(client, key, tick, holder, leaseMs) },
      renew: (key, holder, leaseMs) => renewPostgresLease(client, key, holder, leaseMs),
      release: (key, holder) => releasePostgresLease(client, key, holder),
      lastTick: async (key) => { await ready(); return lastPostgresTick(client, key) },
      holdRun: async (lease, leaseMs) => { await runsReady(); return holdPostgresRun(client, lease, leaseMs) },
      startRuns: async (runs, leaseMs) => {
        await runsReady()
        if (await startPostgresRuns(client, runs, leaseMs)) {
          const queued = new Map(runs.map((run) => [run.jobId, run.queued]))
          return { end: batchedEnds((ends) => endPostgresRuns(client, ends.map((end) => ({ ...end, queued: queued.get(end.jobId) })))) }
        }
        await holdPostgresRuns(client, runs, leaseMs)
        return undefined
      },
      renewRuns: async (holder, leaseMs) => { await runsReady(); return renewPostgresRuns(client, holder, leaseMs) },
      attemptRun: async (jobId, attempt) => { await runsReady(); return attemptPostgresRun(client, jobId, attempt) },
      dropRun: async (jobId) => { await runsReady(); return dropPostgresRun(client, jobId) },
      dropRuns: async (jobIds) => { await runsReady(); return dropPostgresRuns(client, jobIds) },
      takeLostRuns: async (limit, holdMs) => { await runsReady(); return takeLostPostgresRuns(client, limit, holdMs) },
      findUnleasedRuns: async (jobNames, limit) => {
        await runsReady()
        await runningIndexed()
        return findUnleasedPostgresRuns(client, jobNames, limit)
      },
      takeUnleasedRuns: async (jobIds, message) => { await runsReady(); return takeUnleasedPostgresRuns(client, jobIds, message) }
    }
  }
  const adapter = database.adapter as MongoAdapter
  const connected = once(async () => { await adapter.connect() })
  const db = async () => { await connected(); return adapter.database }
  const runningIndexed = once(async () => ensureMongoRunningIndex(await db()))
  return {
    claim: async (key, tick, holder, leaseMs) => claimMongoTick(await db(), key, tick, holder, leaseMs),
    renew: async (key, holder, leaseMs) => renewMongoLease(await db(), key, holder, leaseMs),
    release: async (key, holder) => releaseMongoLease(await db(), key, holder),
    lastTick: async (key) => lastMongoTick(await db(), key),
    holdRun: async (lease, leaseMs) => holdMongoRun(await db(), lease, leaseMs),
    // MongoDB runs no queue (storage/queue.ts): the leases alone, one write each.
    startRuns: async (runs, leaseMs) => { await holdMongoRuns(await db(), runs, leaseMs); return undefined },
    renewRuns: async (holder, leaseMs) => renewMongoRuns(await db(), holder, leaseMs),
    attemptRun: async (jobId, attempt) => attemptMongoRun(await db(), jobId, attempt),
    dropRun: async (jobId) => dropMongoRun(await db(), jobId),
    dropRuns: async (jobIds) => dropMongoRuns(await db(), jobIds),
    takeLostRuns: async (limit, holdMs) => takeLostMongoRuns(await db(), limit, holdMs),
    findUnleasedRuns: async (jobNames, limit) => {
      await runningIndexed()
      return findUnleasedMongoRuns(await db(), jobNames, limit)
    },
    takeUnleasedRuns: async (jobIds, message) => takeUnleasedMongoRuns(await db(), jobIds, message)
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

// Deletes expired _Session rows in bounded batches, with a pause between, so
// the sweep never holds a long transaction or many row locks at once, whichever
// database runs. Straight deletes: Parse runs no trigger for them (it allows
// only afterLogout on _Session, and an expired session is not a logout).
import { currentDatabase } from './database.js'
import type { MongoAdapter } from '../parse/internals.js'
import { pgDatabase } from '../parse/adapter-internals.js'
import type { KitState } from '../kit-state.js'
import { deleteExpiredPostgresSessions } from './postgres/session-sweep.js'
import { deleteExpiredMongoSessions } from './mongo/session-sweep.js'

export interface SessionSweepOptions {
  /** Rows deleted by one statement. Default 1000. */
  batchSize?: number
  /** Pause between two batches, in ms. Default 50. */
  pauseMs?: number
  /** Told of each batch's count (tests, progress). */
  onBatch?: (deleted: number) => void
  /** Stops between batches (the kit is closing). */
  signal?: AbortSignal
}

export const SESSION_SWEEP_BATCH = 1000
export const SESSION_SWEEP_PAUSE_MS = 50

/** Deletes every _Session whose expiresAt has passed; the number deleted. */
export async function deleteExpiredSessions (state: KitState, options: SessionSweepOptions = {}): Promise<number> {
  const database = currentDatabase(state)
  if (!database) return 0
  const batchSize = options.batchSize ?? SESSION_SWEEP_BATCH
  const pauseMs = options.pauseMs ?? SESSION_SWEEP_PAUSE_MS
  let batch: () => Promise<number>
  if (database.kind === 'postgres') {
    const client = pgDatabase(database.adapter)!
    batch = () => deleteExpiredPostgresSessions(client, batchSize)
  } else {
    const adapter = database.adapter as MongoAdapter
    batch = async () => { await adapter.connect(); return deleteExpiredMongoSessions(adapter.database, batchSize) }
  }
  let total = 0
  for (;;) {
    const deleted = await batch()
    total += deleted
    if (deleted > 0) options.onBatch?.(deleted)
    if (deleted < batchSize || options.signal?.aborted) return total
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
}

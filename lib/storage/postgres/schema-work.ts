// The reconciliation of indexes and CHECK constraints runs after listen, next
// to live traffic. Its DDL needs strong table locks, and PostgreSQL queues
// every later query on that table behind a DDL statement that waits for a lock:
// one transaction left open (a handler waiting on something else) would stall
// the whole table, and a deadlock through the application's own waits is
// invisible to PostgreSQL. So the kit's DDL waits for a lock only briefly
// (lock_timeout), steps aside, and tries again a little later.
import { withoutQueryBound } from './bounded.js'
import { pgDatabase } from '../../parse/adapter-internals.js'

/** How long one DDL statement may wait for its lock before it gives way. */
export const LOCK_WAIT_MS = 500
/** How long a change keeps trying before it is reported failed (the next boot tries again). */
const GIVE_UP_MS = 60_000
const LOCK_NOT_AVAILABLE = '55P03'

export interface SchemaWorkOptions {
  /** Overrides GIVE_UP_MS (tests). */
  giveUpMs?: number
}

/**
 * Runs `work` on one connection without the request query bound (an index
 * build may take minutes) and with a short lock_timeout.
 */
export async function runSchemaWork<A extends object, R> (adapter: A, work: (unbounded: A) => Promise<R>): Promise<R> {
  return withoutQueryBound(adapter, async (unbounded) => {
    const client = pgDatabase(unbounded)!
    await client.none(`SET lock_timeout = ${LOCK_WAIT_MS}`)
    try {
      return await work(unbounded)
    } finally {
      await client.none('RESET lock_timeout').catch(() => {})
    }
  })
}

/** The table stayed locked by open transactions for the whole time a change kept trying. */
export class TableBusyError extends Error {
  constructor (waitedMs: number) {
    super(`the table stayed locked by open transactions for ${Math.round(waitedMs / 1000)} s; the change is retried at the next boot (or run the command by hand)`)
    this.name = 'TableBusyError'
  }
}

/** Runs one change; when its table is busy, again after a growing pause, for up to a minute. */
export async function whenTableFree<R> (change: () => Promise<R>, options: SchemaWorkOptions = {}): Promise<R> {
  const giveUpAt = Date.now() + (options.giveUpMs ?? GIVE_UP_MS)
  for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
    try {
      return await change()
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error
      if (Date.now() + pause > giveUpAt) {
        throw new TableBusyError(options.giveUpMs ?? GIVE_UP_MS)
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}

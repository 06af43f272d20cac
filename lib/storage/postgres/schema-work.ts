// The reconciliation of indexes and CHECK constraints runs after listen, next
// to live traffic. Its DDL needs strong table locks, and PostgreSQL queues
// every later query on that table behind a DDL statement that waits for a lock:
// one transaction left open (a handler waiting on something else) would stall
// the whole table, and a deadlock through the application's own waits is
// invisible to PostgreSQL. So the kit's DDL waits for a lock only briefly
// (lock_timeout), steps aside, and tries again a little later.
import { withoutQueryBound } from './bounded.js'
import { pgDatabase, pgPool } from '../../parse/adapter-internals.js'
import type { PgQueries } from '../../parse/internals.js'

/**
 * How much longer than PostgreSQL's deadlock_timeout one DDL statement waits for its lock.
 * Past deadlock_timeout PostgreSQL cancels an autovacuum that is in the way (it does so
 * for any waiter): a shorter wait would lose to a long autovacuum every time.
 */
const LOCK_WAIT_BEYOND_DEADLOCK_CHECK_MS = 500
/** How long a change keeps trying before it is reported failed (the next boot tries again). */
const GIVE_UP_MS = 60_000
const LOCK_NOT_AVAILABLE = '55P03'

export interface SchemaWorkOptions {
  /** Overrides GIVE_UP_MS (tests). */
  giveUpMs?: number
  /** Stop retrying (the server is closing). */
  stopped?: () => boolean
}

/**
 * How long a CONCURRENTLY build or drop waits for its lock and for the
 * transactions it must outlast. Its waiting queues no read or write behind it
 * (its table lock, SHARE UPDATE EXCLUSIVE, conflicts with neither), so it may
 * wait far longer than other DDL; bounded all the same, so that a transaction
 * left open for good makes it fail (and the next boot try again) instead of hang.
 */
const CONCURRENT_LOCK_WAIT_MS = 60_000

/** Runs a CREATE/DROP INDEX CONCURRENTLY (never in a transaction) with the longer lock wait. */
export async function runConcurrently (client: PgQueries, query: string, values?: unknown): Promise<void> {
  const [{ lock_timeout: before }] = await client.any('SHOW lock_timeout')
  await client.none(`SET lock_timeout = ${CONCURRENT_LOCK_WAIT_MS}`)
  try {
    await client.none(query, values)
  } finally {
    await client.none('SELECT set_config($1, $2, false)', ['lock_timeout', String(before)]).catch(() => {})
  }
}

/** Runs one change, again while its table is busy (see whenTableFree). */
export type WhenFree = <R>(change: () => Promise<R>) => Promise<R>

/** The table stayed locked by open transactions for the whole time a change kept trying. */
export class TableBusyError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'TableBusyError'
  }
}

/**
 * Runs `work` on one connection without the request query bound (an index
 * build may take minutes) and with a short lock_timeout. `whenFree` retries a
 * change while its table is busy, and stops once the kit closes.
 */
export async function runSchemaWork<A extends object, R> (adapter: A, work: (unbounded: A, whenFree: WhenFree) => Promise<R>): Promise<R> {
  const stopped = () => pgPool(adapter)?.ending === true // Parse's shutdown ends the pool
  return withoutQueryBound(adapter, async (unbounded) => {
    const client = pgDatabase(unbounded)!
    const [{ ms }] = await client.any("SELECT setting::int AS ms FROM pg_settings WHERE name = 'deadlock_timeout'")
    await client.none(`SET lock_timeout = ${Number(ms) + LOCK_WAIT_BEYOND_DEADLOCK_CHECK_MS}`)
    try {
      return await work(unbounded, (change) => whenTableFree(change, { stopped }))
    } finally {
      await client.none('RESET lock_timeout').catch(() => {})
    }
  })
}

/** Runs one change; when its table is busy, again after a growing pause, for up to a minute. */
export async function whenTableFree<R> (change: () => Promise<R>, options: SchemaWorkOptions = {}): Promise<R> {
  const giveUpMs = options.giveUpMs ?? GIVE_UP_MS
  const giveUpAt = Date.now() + giveUpMs
  for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
    try {
      return await change()
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error
      if (options.stopped?.()) throw new TableBusyError('the table was busy and the server is closing; the change is retried at the next boot')
      if (Date.now() + pause > giveUpAt) {
        throw new TableBusyError(`the table stayed locked by open transactions for ${Math.round(giveUpMs / 1000)} s; the change is retried at the next boot (or run the command by hand)`)
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}

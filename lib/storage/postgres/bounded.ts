// Bounded waits on PostgreSQL, so that a server that stops answering (frozen,
// or behind a network partition) makes calls fail with 503 instead of hang.
// node-postgres's `query_timeout` bounds every query on Parse's pool on the
// client side; a query that runs out closes its connection, so that nothing
// queued behind it (a transaction's ROLLBACK, the next request on a pooled
// connection) waits for it too. The kit's own long work (index builds, CHECK
// constraints) runs on a connection taken out of the bound. The wait for a
// pooled connection gets the same bound as the whole call (databaseTimeout):
// behind the instance's own traffic it is overload, which outages.ts tells
// apart from a database that does not answer (connection-waits.ts).
// The client giving up does not stop the server: a statement keeps running (or
// waiting for a lock) after its 503 until it ends, since PostgreSQL notices a
// closed connection only when it next writes to it. Each connection's
// `statement_timeout` ends it on the server too, a little after the client's
// bound, so that the client's own timeout keeps answering first.
import { pgDatabase, withPgQueries } from '../../parse/adapter-internals.js'

/** Message node-postgres gives a query that got no answer within `query_timeout`. */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout'

/** Idle connections send TCP keep-alives after this long, so a vanished peer is noticed. */
const KEEPALIVE_DELAY_MS = 10_000

/** How long after the client's bound the server cancels a statement itself. */
export const SERVER_MARGIN_MS = 1_000

interface PgClientLike { connection?: unknown }
interface ErrorContext { client?: PgClientLike }

/** Options for Parse's PostgreSQL adapter (`databaseOptions`, passed on to pg-promise and node-postgres). */
export function boundedPoolOptions (timeoutMs: number): Record<string, unknown> {
  return {
    // A wait for a pooled connection (or a new one) ends with the call's own bound: a shorter one
    // would refuse work the bound still allows, a longer one would leave it queued after its 503.
    connectionTimeoutMillis: timeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs + SERVER_MARGIN_MS,
    initOptions: { error: closeTimedOutConnection }
  }
}

/**
 * pg-promise's error event, raised before the connection goes back to the pool.
 * node-postgres answers a timed-out query but leaves the connection waiting for
 * it; close it (pg's own end(), which pg-promise hides while a query holds the
 * connection) so that the pool replaces it.
 */
function closeTimedOutConnection (error: unknown, context: ErrorContext | undefined): void {
  if ((error as { message?: unknown } | null)?.message !== QUERY_TIMEOUT_MESSAGE) return
  const client = context?.client
  if (!client) return
  const end = (Object.getPrototypeOf(client) as { end?: (this: PgClientLike) => Promise<void> }).end
  void end?.call(client)?.catch?.(() => {})
}

/**
 * Runs `work` on an adapter whose queries share one pooled connection with no
 * query bound: index builds and constraint checks on a large table may take
 * minutes, and are the kit's own work, not a request waiting for an answer.
 */
export async function withoutQueryBound<A extends object, R> (adapter: A, work: (unbounded: A) => Promise<R>): Promise<R> {
  const pool = pgDatabase(adapter)
  if (!pool) return work(adapter)
  const connection = await pool.connect()
  const parameters = connection.client.connectionParameters
  const bound = parameters?.query_timeout
  if (parameters) parameters.query_timeout = false
  let reset = false
  try {
    await connection.none('SET statement_timeout = 0')
    const result = await work(withPgQueries(adapter, connection))
    reset = await connection.none('RESET statement_timeout').then(() => true, () => false)
    return result
  } finally {
    if (parameters) parameters.query_timeout = bound
    // A connection whose server-side bound could not be put back is not given to a request.
    connection.done(!reset)
  }
}

// "The database cannot be reached" — told apart from every other failure where
// the storage adapter raises it (Parse would rewrap it as an opaque code 1), and
// carried up as one Parse error that answers 503 with Retry-After.
import Parse from 'parse/node'
import { DATABASE_BUSY, DATABASE_UNAVAILABLE } from '../errors.js'

/** Parse error code of a call refused because the database cannot be reached (HTTP 503). */
export { DATABASE_UNAVAILABLE }
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database cannot be reached right now. Retry shortly.'
/** Parse error code of a call that found no free pooled connection within databaseTimeout while the database answered (HTTP 503). */
export { DATABASE_BUSY }
export const DATABASE_BUSY_MESSAGE = 'The server is busy: no database connection came free in time. Retry shortly.'
/** Seconds a client should wait before retrying (the Retry-After header of every 503). */
export const RETRY_AFTER_SECONDS = 1

/** Socket-level failures: nothing answers, or the connection broke. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EAI_AGAIN', 'ENOTCONN'])
/** PostgreSQL SQLSTATEs of a server that is going, gone or not yet there. */
const POSTGRES_STATES = new Set([
  '57P01', '57P02', '57P03', '57P04', // admin_shutdown, crash_shutdown, cannot_connect_now, database_dropped
  '53300' // too_many_connections
])
/**
 * A database that takes no connections (ALTER DATABASE … ALLOW_CONNECTIONS false, or one being
 * dropped or renamed) refuses them with 55000, object_not_in_prerequisite_state, a code that also
 * names statement errors: counted only when the server ended the connection with it (FATAL).
 */
const POSTGRES_FATAL_STATES = new Set(['55000'])
/** node-postgres raises these as plain Errors, without a code. */
const POSTGRES_MESSAGES = [
  /^Connection terminated/,
  /Client has encountered a connection error and is not queryable/,
  /timeout exceeded when trying to connect/,
  /^Client was closed and is not queryable/,
  /^Query read timeout/ // no answer within the query bound (lib/storage/postgres/bounded.ts)
]
/** MongoDB driver errors that mean no server could be reached. */
const MONGO_NAMES = new Set(['MongoWaitQueueTimeoutError', 'MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoNotConnectedError', 'MongoTopologyClosedError', 'MongoPoolClearedError', 'MongoOperationTimeoutError'])

interface ErrorLike { code?: unknown, name?: unknown, message?: unknown, cause?: unknown, underlyingError?: unknown, reason?: unknown }

/** Whether `error` (or what it wraps) says the database cannot be reached, as opposed to refusing one request. */
export function isDatabaseUnavailable (error: unknown): boolean {
  for (let current = error as ErrorLike | undefined, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    if (current.code === DATABASE_UNAVAILABLE) return true
    if (typeof current.code === 'string' && (SOCKET_CODES.has(current.code) || POSTGRES_STATES.has(current.code) || current.code.startsWith('08'))) return true
    if (typeof current.code === 'string' && POSTGRES_FATAL_STATES.has(current.code) && (current as { severity?: unknown }).severity === 'FATAL') return true
    if (typeof current.name === 'string' && MONGO_NAMES.has(current.name)) return true
    if (typeof current.message === 'string' && POSTGRES_MESSAGES.some((pattern) => pattern.test(current!.message as string))) return true
    if (Array.isArray((current as { errors?: unknown }).errors) && (current as { errors: unknown[] }).errors.some(isDatabaseUnavailable)) return true
    current = (current.cause ?? current.underlyingError) as ErrorLike | undefined
  }
  return false
}

/** The error every caller sees: Parse's shape, status 503; the driver's error stays in `cause` for the log. */
export class DatabaseUnavailableError extends Parse.Error {
  readonly statusCode = 503
  constructor (override readonly cause?: unknown) {
    super(DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE)
  }
}

/**
 * The answer to a call that waited databaseTimeout for a pooled connection while the database
 * itself answered: the instance is overloaded by its own traffic, the database is not down.
 */
export class DatabaseBusyError extends Parse.Error {
  readonly statusCode = 503
  constructor (override readonly cause?: unknown) {
    super(DATABASE_BUSY, DATABASE_BUSY_MESSAGE)
  }
}

/** A short, safe reason for the health answer (no hosts or credentials): "connection refused", "server shut down"… */
export function describeOutage (error: unknown): string {
  for (let current = error as ErrorLike | undefined, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = typeof current.code === 'string' ? current.code : undefined
    if (code === 'ECONNREFUSED') return 'connection refused'
    if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset'
    if (code === 'ETIMEDOUT') return 'connection timed out'
    if (code === '57P01' || code === '57P02') return 'the database server shut down'
    if (code === '57P03') return 'the database server is starting up'
    if (code === '53300') return 'the database server has no free connections'
    if (code === '55000' || code === '57P04') return 'the database does not accept connections'
    if (code?.startsWith('08')) return 'connection failure'
    if (typeof current.name === 'string' && MONGO_NAMES.has(current.name)) return 'no database server reachable'
    if (typeof current.message === 'string' && /^Connection terminated|not queryable/.test(current.message)) return 'connection lost'
    if (typeof current.message === 'string' && /timeout exceeded/.test(current.message)) return 'connection timed out'
    if (typeof current.message === 'string' && /^Query read timeout/.test(current.message)) return 'no answer in time'
    current = (current.cause ?? current.underlyingError) as ErrorLike | undefined
  }
  return 'the database cannot be reached'
}

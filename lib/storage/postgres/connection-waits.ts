// A bounded call that runs out of time while waiting for a connection from
// Parse's pool has not sent a statement: overload (or a server that takes no
// connections), not one slow statement. Marking the wait lets call-bound.ts say which.
import { pgPool } from '../../parse/adapter-internals.js'
import { ConnectionWaitError, waitForConnection } from '../call-bound.js'

interface PgClient { release (error?: Error): void }
type ConnectCallback = (error: Error | undefined, client?: PgClient, done?: unknown) => void
interface ConnectingPool { connect (callback?: ConnectCallback): unknown }

/**
 * Lets a bounded call know when it waits for a connection from Parse's pool, so
 * that running out of time there is told apart from a statement with no answer.
 * A connection that arrives after the call's bound has passed goes straight
 * back: the call was answered 503, and its statements must not run after all.
 */
export function markConnectionWaits (adapter: object, timeoutMs: number): void {
  const pool = pgPool(adapter) as unknown as ConnectingPool | undefined
  if (!pool) return
  const connect = pool.connect.bind(pool)
  pool.connect = (callback?: ConnectCallback) => {
    if (typeof callback !== 'function') return connect(callback) // only pg-promise's callback form is waited on
    const wait = waitForConnection()
    return connect((error, client, done) => {
      wait.end()
      if (!error && client && wait.expired) {
        client.release()
        callback(new ConnectionWaitError(timeoutMs))
        return
      }
      callback(error, client, done)
    })
  }
}

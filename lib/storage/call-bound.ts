// databaseTimeout bounds a whole adapter call on a request path: waiting for a
// pooled connection (or for server selection), the query, and its retries
// together. The drivers bound each part on its own (node-postgres's
// query_timeout and connectionTimeoutMillis, MongoDB's timeoutMS and server
// selection), which adds up to more than the bound; a call still running when
// the bound has passed is answered 503 and left to the driver's own bounds to
// end. A transaction is one call: inside withTransaction every adapter call gets
// only what is left of the transaction's own deadline. A call that spent its
// bound waiting for a pooled connection says so (ConnectionWaitError): that is
// overload when the database answers a probe, not an outage (outages.ts).
import { AsyncLocalStorage } from 'node:async_hooks'
import { QUERY_TIMEOUT_MESSAGE } from './postgres/bounded.js'

/** Adapter methods a request waits on. Schema changes, index builds and the kit's own long work are not bounded here. */
export const BOUNDED_CALLS = new Set([
  'find', 'count', 'distinct', 'aggregate',
  'createObject', 'deleteObjectsByQuery', 'updateObjectsByQuery', 'findOneAndUpdate', 'upsertOneObject',
  'getClass', 'getAllClasses',
  'createTransactionalSession', 'commitTransactionalSession', 'abortTransactionalSession'
])

/** The property of a wrapped adapter that answers its bound in ms (lib/storage/adapter.ts). */
export const CALL_BOUND = Symbol('fastify-parse-kit call bound')

/** The bound of a wrapped adapter's calls in ms, if it has one. */
export function callBoundOf (adapter: object): number | undefined {
  const bound = (adapter as { [CALL_BOUND]?: unknown })[CALL_BOUND]
  return typeof bound === 'number' ? bound : undefined
}

/** The time (Date.now() ms) by which every call made in this async context must have answered. */
const deadlines = new AsyncLocalStorage<number>()

/** One bounded call in progress: whether it (or a call inside it) waits for a pooled connection now, and whether its bound has passed. */
interface CallState {
  waiting: number
  expired: boolean
  readonly outer: CallState | undefined
}

const calls = new AsyncLocalStorage<CallState>()

/**
 * Marks the bounded call in this async context (and every call around it) as waiting for a
 * pooled connection; the function returned ends the wait. Outside a bounded call it does nothing.
 */
export function waitForConnection (): { end (): void, readonly expired: boolean } {
  const call = calls.getStore()
  for (let state = call; state; state = state.outer) state.waiting++
  let ended = false
  return {
    end () {
      if (ended) return
      ended = true
      for (let state = call; state; state = state.outer) state.waiting--
    },
    get expired () {
      for (let state = call; state; state = state.outer) if (state.expired) return true
      return false
    }
  }
}

/** Runs `work` with every bounded call inside it sharing one deadline, `timeoutMs` from now. */
export function withinDeadline<T> (timeoutMs: number, work: () => Promise<T>): Promise<T> {
  return deadlines.run(Date.now() + timeoutMs, work)
}

/** Runs `work` outside any deadline (work after a transaction, such as its afterCommit callbacks). */
export function outsideDeadline<T> (work: () => T): T {
  return deadlines.exit(work)
}

/** Milliseconds left before the surrounding deadline (0 once passed), or undefined outside one. */
export function timeLeft (): number | undefined {
  const deadline = deadlines.getStore()
  return deadline === undefined ? undefined : Math.max(0, deadline - Date.now())
}

export class CallTimeoutError extends Error {
  readonly code = 'ETIMEDOUT'
  constructor (timeoutMs: number) {
    // The message is node-postgres's own for a query with no answer: it reads as "no answer in time".
    super(`${QUERY_TIMEOUT_MESSAGE}: no answer within databaseTimeout (${timeoutMs} ms)`)
    this.name = 'CallTimeoutError'
  }
}

/** Message pg-pool gives a wait for a pooled connection that ran out of time (a new connection's timeout reads otherwise). */
export const POOL_WAIT_MESSAGE = 'timeout exceeded when trying to connect'

/** The bound passed while the call was still waiting for a pooled connection: no statement of it ran. */
export class ConnectionWaitError extends Error {
  readonly code = 'ETIMEDOUT'
  constructor (timeoutMs: number) {
    // Worded as pg-pool's own message for the same wait, which reads as "the database did not answer" elsewhere.
    super(`${POOL_WAIT_MESSAGE}: no pooled connection came free within databaseTimeout (${timeoutMs} ms)`)
    this.name = 'ConnectionWaitError'
  }
}

/** Whether `error` says a call ran out of time waiting for a pooled connection (behind other calls, or for a new connection). */
export function isWaitForConnection (error: unknown): boolean {
  for (let current = error as { name?: unknown, message?: unknown, cause?: unknown } | undefined, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    if (current instanceof ConnectionWaitError) return true
    if (typeof current.message === 'string' && current.message.startsWith(POOL_WAIT_MESSAGE)) return true
    if (current.name === 'MongoWaitQueueTimeoutError') return true
    current = current.cause as typeof current
  }
  return false
}

/** Whether `error` only says that one call got no answer in time (the database may be fine), as opposed to a lost connection. */
export function isNoAnswerInTime (error: unknown): boolean {
  for (let current = error as { name?: unknown, message?: unknown, cause?: unknown } | undefined, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    if (current instanceof CallTimeoutError) return true
    if (typeof current.message === 'string' && (current.message.startsWith(QUERY_TIMEOUT_MESSAGE) || current.message.startsWith(POOL_WAIT_MESSAGE))) return true
    if (current.name === 'MongoOperationTimeoutError' || current.name === 'MongoWaitQueueTimeoutError') return true
    current = current.cause as typeof current
  }
  return false
}

type Method = (...args: unknown[]) => unknown

/** The method, answering CallTimeoutError when its promise has not settled within `timeoutMs` (or the surrounding deadline, if sooner). */
export function boundedCall<M extends Method> (method: M, timeoutMs: number): M {
  return function (this: unknown, ...args: unknown[]) {
    const state: CallState = { waiting: 0, expired: false, outer: calls.getStore() }
    const result = calls.run(state, () => method.apply(this, args))
    if (typeof (result as { then?: unknown } | null)?.then !== 'function') return result
    const call = result as Promise<unknown>
    call.catch(() => {}) // a call that loses the race must not reject unhandled later
    const left = timeLeft()
    const bound = left === undefined ? timeoutMs : Math.min(timeoutMs, left)
    let timer: NodeJS.Timeout | undefined
    return Promise.race([call, new Promise((_resolve, reject) => {
      timer = setTimeout(() => {
        state.expired = true
        reject(state.waiting > 0 ? new ConnectionWaitError(timeoutMs) : new CallTimeoutError(timeoutMs))
      }, bound)
    })]).finally(() => clearTimeout(timer))
  } as M
}

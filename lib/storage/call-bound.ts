// databaseTimeout bounds a whole adapter call on a request path: waiting for a
// pooled connection (or for server selection), the query, and its retries
// together. The drivers bound each part on its own (node-postgres's
// query_timeout and connectionTimeoutMillis, MongoDB's timeoutMS and server
// selection), which adds up to more than the bound; a call still running when
// the bound has passed is answered as an outage (503) and left to the driver's
// own bounds to end.
import { QUERY_TIMEOUT_MESSAGE } from './postgres/bounded.js'

/** Adapter methods a request waits on. Schema changes, index builds and the kit's own long work are not bounded here. */
export const BOUNDED_CALLS = new Set([
  'find', 'count', 'distinct', 'aggregate',
  'createObject', 'deleteObjectsByQuery', 'updateObjectsByQuery', 'findOneAndUpdate', 'upsertOneObject',
  'getClass', 'getAllClasses',
  'createTransactionalSession', 'commitTransactionalSession', 'abortTransactionalSession'
])

export class CallTimeoutError extends Error {
  readonly code = 'ETIMEDOUT'
  constructor (timeoutMs: number) {
    // The message is node-postgres's own for a query with no answer: it reads as "no answer in time".
    super(`${QUERY_TIMEOUT_MESSAGE}: no answer within databaseTimeout (${timeoutMs} ms)`)
    this.name = 'CallTimeoutError'
  }
}

type Method = (...args: unknown[]) => unknown

/** The method, answering CallTimeoutError when its promise has not settled within `timeoutMs`. */
export function boundedCall<M extends Method> (method: M, timeoutMs: number): M {
  return function (this: unknown, ...args: unknown[]) {
    const result = method.apply(this, args)
    if (typeof (result as { then?: unknown } | null)?.then !== 'function') return result
    const call = result as Promise<unknown>
    call.catch(() => {}) // a call that loses the race must not reject unhandled later
    let timer: NodeJS.Timeout | undefined
    return Promise.race([call, new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(new CallTimeoutError(timeoutMs)), timeoutMs)
    })]).finally(() => clearTimeout(timer))
  } as M
}

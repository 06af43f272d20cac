// A call into the storage adapter that could not reach the database tells the
// availability watch (which then probes until the database is back; for a call
// that only ran out of time, probes once first) and fails
// with DatabaseUnavailableError: a Parse error, which Parse passes through
// unchanged (any other error it would rewrap as an opaque code 1).
import type { DatabaseAvailability } from './availability.js'
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js'
import { isNoAnswerInTime } from './call-bound.js'

type Method = (...args: unknown[]) => unknown

export function reportingOutages<M extends Method> (method: M, availability: DatabaseAvailability): M {
  const failed = (error: unknown): never => {
    if (!isDatabaseUnavailable(error)) throw error
    return outage(error, availability)
  }
  return function (this: unknown, ...args: unknown[]) {
    let result: unknown
    try {
      result = method.apply(this, args)
    } catch (error) {
      return failed(error) // e.g. the MongoDB adapter's handleError, which throws synchronously
    }
    return isPromise(result) ? result.catch(failed) : result
  } as M
}

function isPromise (value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * Reports an error that says the database cannot be reached, and throws it as DatabaseUnavailableError.
 * A call that only got no answer in time may be one slow statement on a live server: the database is
 * probed, and counts as unreachable (for every request) only if the probe fails too.
 */
export function outage (error: unknown, availability: DatabaseAvailability): never {
  if (isNoAnswerInTime(error)) availability.suspect(error)
  else availability.noteOutage(error)
  throw error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error)
}

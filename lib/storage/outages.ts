// A call into the storage adapter that could not reach the database tells the
// availability watch (which then probes until the database is back; for a call
// that only ran out of time, probes once first) and fails
// with DatabaseUnavailableError: a Parse error, which Parse passes through
// unchanged (any other error it would rewrap as an opaque code 1).
// A call that spent its bound waiting for a pooled connection is different:
// the pool is full of this instance's own work. A probe on the watch's own
// connection decides: the database answers, so the call fails alone with
// DatabaseBusyError (overload: nothing marked down); no answer, an outage.
import type { DatabaseAvailability } from './availability.js'
import { DatabaseBusyError, DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js'
import { isNoAnswerInTime, isWaitForConnection } from './call-bound.js'

type Method = (...args: unknown[]) => unknown

/** The property of a wrapped adapter that answers its availability watch (lib/storage/adapter.ts). */
export const AVAILABILITY = Symbol('fastify-parse-kit availability')

/** The availability watch of a wrapped adapter, if it has one. */
export function availabilityOf (adapter: object): DatabaseAvailability | undefined {
  return (adapter as { [AVAILABILITY]?: DatabaseAvailability })[AVAILABILITY]
}

export function reportingOutages<M extends Method> (method: M, availability: DatabaseAvailability): M {
  const failed = (error: unknown): never | Promise<never> => {
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
 * probed, and counts as unreachable (for every request) only if the probe fails too. A call that found
 * no free pooled connection in time is answered once a probe has told overload from an outage.
 */
export function outage (error: unknown, availability: DatabaseAvailability): never | Promise<never> {
  if (error instanceof DatabaseBusyError) throw error // decided by a call inside this one
  if (isWaitForConnection(error) && !(error instanceof DatabaseUnavailableError)) return busyOrOutage(error, availability)
  if (isNoAnswerInTime(error)) availability.suspect(error)
  else availability.noteOutage(error)
  throw error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error)
}

async function busyOrOutage (error: unknown, availability: DatabaseAvailability): Promise<never> {
  if (!availability.reachable) throw new DatabaseUnavailableError(error)
  // A fresh answer: the last one may predate a freeze that holds every connection now.
  const { ready } = await availability.recheck()
  throw ready ? new DatabaseBusyError(error) : new DatabaseUnavailableError(error)
}

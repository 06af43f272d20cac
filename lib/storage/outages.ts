// A call into the storage adapter that could not reach the database tells the
// availability watch (which then probes until the database is back; for a call
// that only ran out of time, probes once first) and fails
// with DatabaseUnavailableError: a Parse error, which Parse passes through
// unchanged (any other error it would rewrap as an opaque code 1).
// A call that spent its bound waiting for a pooled connection is different:
// the pool may be full of this instance's own work. The probe, on the watch's
// own connection, decides: an answer within the last second, or to a probe
// asked now within DECIDE_MS, makes it overload (DatabaseBusyError, 5005,
// nothing marked down); otherwise it answers 5003 like any call with no answer
// in time, and the probe goes on to decide the outage.
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

/** A probe's answer this recent tells overload from an outage without asking again. */
const FRESH_ANSWER_MS = 1_000
/** How long a call that ran out of time waits for the probe it starts: its bound has passed already. */
const DECIDE_MS = 500

async function busyOrOutage (error: unknown, availability: DatabaseAvailability): Promise<never> {
  if (!availability.reachable) throw new DatabaseUnavailableError(error)
  // An answer within the last second, while this call waited its whole bound: the database was
  // answering other calls, so the pool was full of the instance's own work.
  if (availability.answeredWithin(FRESH_ANSWER_MS)) throw new DatabaseBusyError(error)
  // Otherwise ask now (on the probe's own connection). A probe that has not answered within
  // DECIDE_MS gives 503 5003 as any call with no answer in time does, and goes on to decide the outage.
  let timer: NodeJS.Timeout | undefined
  const ready = await Promise.race([
    availability.recheck().then(({ ready }) => ready),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), DECIDE_MS) })
  ]).finally(() => clearTimeout(timer))
  throw ready ? new DatabaseBusyError(error) : new DatabaseUnavailableError(error)
}

// The storage adapter Parse Server is given: Parse's own adapter, wrapped so
// that work done inside a transaction scope joins the transaction (writes get
// the session argument, reads run on it), versioned updates are checked,
// strings the databases cannot store are refused, and deadlocks,
// serialization failures and broken field constraints are recognised here,
// before Parse rewraps them as an opaque code 1.
import Parse from 'parse/node'
import { CONFLICT, CONFLICT_MESSAGE } from '../errors.js'
import { sessionFor, transactionScope } from './scope.js'
import { expectedVersion, versionFieldOf } from './version.js'
import { isTransient } from './transient.js'
import { refuseNul, replaceNul } from './nul.js'
import { keyOperationProblem, writeDataError } from './postgres/write-errors.js'
import { refuseRelationOrder } from './relation-order.js'
import { constraintViolation } from './constraint-violation.js'
import { onTransaction as postgresReads } from './postgres/reads.js'
import { explainReadError } from './postgres/read-errors.js'
import { emptyInMatchesNothing } from './postgres/empty-in.js'
import { onTransaction as mongoReads } from './mongo/reads.js'
import { explainMongoReadError } from './mongo/read-errors.js'
import { explainQueryShape } from './query-shape-error.js'
import { dropAfterAbort, openOnServer } from './mongo/session.js'
import { openTransaction } from './postgres/session.js'
import { AVAILABILITY, outage, reportingOutages } from './outages.js'
import { BOUNDED_CALLS, CALL_BOUND, boundedCall } from './call-bound.js'
import { isDatabaseUnavailable } from './unavailable.js'
import type { DatabaseAvailability } from './availability.js'
import type { DatabaseKind } from './kind.js'

type Method = (...args: unknown[]) => Promise<unknown>
type Row = Record<string, unknown>

/** Write methods and the position of their transactionalSession argument. */
export const WRITES: Record<string, number> = {
  createObject: 3,
  deleteObjectsByQuery: 3,
  updateObjectsByQuery: 4,
  findOneAndUpdate: 4,
  upsertOneObject: 4
}
const READS = new Set(['find', 'count', 'distinct', 'aggregate'])
/** How many times a single statement outside any transaction runs when it hits a deadlock. */
const STATEMENT_RUNS = 3

/** `callTimeoutMs`: databaseTimeout, the bound of a whole call on a request path (call-bound.ts). */
export function wrapAdapter<T extends object> (adapter: T, kind: DatabaseKind, availability?: DatabaseAvailability, callTimeoutMs?: number): T {
  // Built on the wrapper, so the adapter's own error handling (handleError) stays wrapped too.
  const readsOn = (property: string, className: string, session: unknown): object => kind === 'postgres'
    ? postgresReads(proxy, session, property === 'find' && versionFieldOf(className) !== undefined)
    : mongoReads(proxy, session)
  // One wrapper per method, made on first use (Parse looks methods up on every call);
  // remade when the property changes (Parse assigns callbacks such as _onchange).
  const wrappers = new Map<string, { raw: unknown, wrapper: Method }>()
  let proxy: T // eslint-disable-line prefer-const -- the wrappers above close over it; it is assigned once below

  const wrap = (property: string, method: Method): Method | undefined => {
    if (property in WRITES) {
      const at = WRITES[property]
      return async function (...args: unknown[]) {
        refuseNul(args[0], 'className')
        // A job's end as Parse writes it (its message: what the job threw or returned): Parse does not catch a
        // refusal there, so the row stayed "running" and the rejection ended the process. Kept, with U+FFFD.
        if (args[0] === '_JobStatus' && property !== 'deleteObjectsByQuery') args[at - 1] = replaceNul(args[at - 1])
        refuseNul(args[2])
        if (at === 4) refuseNul(args[3])
        const keyOperation = kind === 'postgres' ? keyOperationProblem(property, args[0] as string, args[3]) : undefined
        if (keyOperation) throw keyOperation
        // Parse passes null when it has no session of its own.
        if (args[at] == null) args[at] = sessionFor(args[0] as string) ?? args[at]
        const run = () => property === 'findOneAndUpdate' ? versionedUpdate(proxy, method, args) : method.apply(proxy, args)
        return withConflicts(run, args[at] == null).catch((error: unknown) => {
          throw constraintViolation(error, args[0] as string, property === 'createObject' ? args[2] : args[3]) ??
            (kind === 'postgres' ? writeDataError(error, args[0] as string) : undefined) ?? error
        })
      }
    }
    if (property === 'handleError' && kind === 'mongo') {
      // Parse's MongoDB adapter turns network errors and TransientTransactionErrors
      // into an opaque code 1 here: recognise them first.
      return function (error: unknown) {
        if (availability && isDatabaseUnavailable(error)) return outage(error, availability)
        if (isTransient(error)) throw conflict(error)
        return method.call(proxy, error)
      }
    }
    if (property === 'createTransactionalSession' && kind === 'postgres') {
      return () => openTransaction(adapter)
    }
    if (property === 'createTransactionalSession' && kind === 'mongo') {
      return async function (...args: unknown[]) {
        const session = await method.apply(proxy, args)
        await openOnServer(proxy, session)
        return session
      }
    }
    if (property === 'abortTransactionalSession' && kind === 'postgres') {
      // Parse's PostgreSQL abort forces the rollback with a rejected statement and hands that
      // rejection to its caller: a transactional /batch would then answer an opaque 500 instead of
      // the inner error it rolled back for. The rollback itself is the expected outcome.
      return function (session: unknown) {
        return (method.call(proxy, session) as Promise<unknown>).then(() => undefined, (error: unknown) => {
          if (isDatabaseUnavailable(error)) throw error
        })
      }
    }
    if (property === 'abortTransactionalSession' && kind === 'mongo') {
      return function (session: unknown) {
        dropAfterAbort(session)
        return method.call(proxy, session)
      }
    }
    if (READS.has(property)) {
      return async function (...args: unknown[]) {
        refuseNul(args[0], 'className')
        refuseNul(args[2])
        refuseNul(args[3]) // find's options (sort, keys), distinct's field name
        // Counts are exact: without a condition Parse would answer the table's size estimate.
        if (property === 'count' && args[4] === undefined) args[4] = false
        if (property === 'find') refuseRelationOrder(args[1], args[3])
        if (kind === 'postgres' && property !== 'aggregate') args[2] = emptyInMatchesNothing(args[2])
        const session = sessionFor(args[0] as string)
        const self = session === undefined ? proxy : readsOn(property, args[0] as string, session)
        const explain = (error: unknown): never => {
          explainQueryShape(error)
          return kind === 'postgres' ? explainReadError(error) : explainMongoReadError(error)
        }
        // MongoDB's adapter translates the query before its first await: a throw, not a rejection.
        const run = async () => {
          try {
            return await method.apply(self, args)
          } catch (error) {
            return explain(error)
          }
        }
        return withConflicts(run, session === undefined)
      }
    }
    return undefined
  }

  proxy = new Proxy(adapter, {
    get (target, property, receiver) {
      if (property === CALL_BOUND) return callTimeoutMs
      if (property === AVAILABILITY) return availability
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof property !== 'string' || typeof value !== 'function') return value
      const cached = wrappers.get(property)
      if (cached?.raw === value) return cached.wrapper
      let wrapper = wrap(property, value as Method) ?? (value as Method)
      if (callTimeoutMs !== undefined && BOUNDED_CALLS.has(property)) wrapper = boundedCall(wrapper, callTimeoutMs)
      // Public methods only: underscored properties are internals (pg-promise's pgp, callbacks).
      if (availability && !property.startsWith('_') && property !== 'constructor') wrapper = reportingOutages(wrapper, availability)
      wrappers.set(property, { raw: value, wrapper })
      return wrapper
    }
  })
  return proxy
}

/**
 * Runs one adapter call. A deadlock or serialization failure becomes CONFLICT
 * (5001) and, inside a transaction, marks it so the whole body re-runs whatever
 * error the body ends with (PostgreSQL has aborted the transaction). A lone
 * statement outside any transaction was rolled back by itself: it runs again.
 */
async function withConflicts (run: () => Promise<unknown>, alone: boolean): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (!isTransient(error)) throw error
      if (alone && attempt < STATEMENT_RUNS) continue
      throw conflict(error, !alone)
    }
  }
}

/** CONFLICT for a transient failure, remembered by the transaction it broke. */
function conflict (cause: unknown, inTransaction = true): InstanceType<typeof Parse.Error> {
  const error = Object.assign(new Parse.Error(CONFLICT, CONFLICT_MESSAGE), { cause })
  const scope = inTransaction ? transactionScope.getStore() : undefined
  if (scope && scope.conflict === undefined) scope.conflict = error
  return error
}

/** A single-object update of a versioned class only writes when the stored version is the one the save read. */
async function versionedUpdate (adapter: object, method: Method, args: unknown[]): Promise<unknown> {
  const [className, schema, query, update] = args as [string, unknown, Row, Row]
  const field = versionFieldOf(className)
  const next = field ? update[field] : undefined
  if (!field || typeof next !== 'number') return method.apply(adapter, args)
  const guarded = [className, schema, { ...query, [field]: expectedVersion(next) }, update, ...args.slice(4)]
  const result = await method.apply(adapter, guarded)
  if (result) return result
  // Nothing matched: either the object is gone / not writable (Parse reports "not found"), or it moved on.
  const find = (adapter as { find: Method }).find
  const current = await find.call(adapter, className, schema, query, { limit: 1 }) as unknown[]
  if (current.length > 0) throw new Parse.Error(CONFLICT, CONFLICT_MESSAGE)
  return result
}

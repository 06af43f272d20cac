// The storage adapter Parse Server is given: Parse's own adapter, wrapped so
// that work done inside a transaction scope joins the transaction (writes get
// the session argument, reads run on it) and versioned updates are checked.
import Parse from 'parse/node'
import { CONFLICT, CONFLICT_MESSAGE } from '../errors.js'
import { sessionFor } from './scope.js'
import { expectedVersion, versionFieldOf } from './version.js'
import { onTransaction as postgresReads } from './postgres/reads.js'
import { explainMissingPostgis } from './postgres/geo.js'
import { onTransaction as mongoReads } from './mongo/reads.js'
import { openOnServer } from './mongo/session.js'
import type { DatabaseKind } from './database.js'

type Method = (...args: unknown[]) => Promise<unknown>
type Row = Record<string, unknown>

/** Write methods and the position of their transactionalSession argument. */
const WRITES: Record<string, number> = {
  createObject: 3,
  deleteObjectsByQuery: 3,
  updateObjectsByQuery: 4,
  findOneAndUpdate: 4,
  upsertOneObject: 4
}
const READS = new Set(['find', 'count', 'distinct', 'aggregate'])

export function wrapAdapter<T extends object> (adapter: T, kind: DatabaseKind): T {
  const readsOn = (className: string, session: unknown): object =>
    kind === 'postgres' ? postgresReads(adapter, session, versionFieldOf(className) !== undefined) : mongoReads(adapter, session)
  // One wrapper per method, made on first use (Parse looks methods up on every call).
  const wrappers = new Map<string, Method>()
  let proxy: T

  const wrap = (property: string, method: Method): Method | undefined => {
    if (property in WRITES) {
      const at = WRITES[property]
      return function (...args: unknown[]) {
        // Parse passes null when it has no session of its own.
        if (args[at] == null) args[at] = sessionFor(args[0] as string) ?? args[at]
        if (property === 'findOneAndUpdate') return versionedUpdate(proxy, method, args)
        return method.apply(proxy, args)
      }
    }
    if (property === 'createTransactionalSession' && kind === 'mongo') {
      return async function (...args: unknown[]) {
        const session = await method.apply(proxy, args)
        await openOnServer(proxy, session)
        return session
      }
    }
    if (READS.has(property)) {
      return function (...args: unknown[]) {
        // Counts are exact: without a condition Parse would answer the table's size estimate.
        if (property === 'count' && args[4] === undefined) args[4] = false
        const session = sessionFor(args[0] as string)
        const result = method.apply(session === undefined ? proxy : readsOn(args[0] as string, session), args)
        return kind === 'postgres' ? result.catch(explainMissingPostgis) : result
      }
    }
    return undefined
  }

  proxy = new Proxy(adapter, {
    get (target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof property !== 'string' || typeof value !== 'function') return value
      let wrapper = wrappers.get(property)
      if (wrapper === undefined && !wrappers.has(property)) {
        wrapper = wrap(property, value as Method)
        wrappers.set(property, wrapper as Method)
      }
      return wrapper ?? value
    }
  })
  return proxy
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

// The storage adapter Parse Server is given: Parse's own adapter, wrapped so
// that work done inside a transaction scope joins the transaction (writes get
// the session argument, reads run on it) and versioned updates are checked.
import Parse from 'parse/node'
import { CONFLICT, CONFLICT_MESSAGE } from '../errors.js'
import { sessionFor } from './scope.js'
import { expectedVersion, versionFieldOf } from './version.js'
import { onTransaction as postgresReads } from './postgres/reads.js'
import { onTransaction as mongoReads } from './mongo/reads.js'
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

  return new Proxy(adapter, {
    get (target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof property !== 'string' || typeof value !== 'function') return value
      const method = value as Method
      if (property in WRITES) {
        const at = WRITES[property]
        return function (this: unknown, ...args: unknown[]) {
          const className = args[0] as string
          if (args[at] == null) args[at] = sessionFor(className) ?? args[at] // Parse passes null when it has no session of its own
          if (property === 'findOneAndUpdate') return versionedUpdate(receiver as T, method, args)
          return method.apply(receiver, args)
        }
      }
      if (READS.has(property)) {
        return function (this: unknown, ...args: unknown[]) {
          const session = sessionFor(args[0] as string)
          return method.apply(session === undefined ? receiver : readsOn(args[0] as string, session), args)
        }
      }
      return value
    }
  })
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

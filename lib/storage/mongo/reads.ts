// Inside a transaction, MongoDB reads must carry the transaction's session.
// This hands Parse's Mongo adapter collections whose reads add { session }.
import type { Collection } from 'mongodb'
import { withMongoCollections } from '../../parse/adapter-internals.js'

const READS = new Set(['find', 'countDocuments', 'aggregate', 'distinct', 'findOne'])

export function onTransaction (adapter: object, session: unknown): object {
  return withMongoCollections(adapter, (collection) => {
    const raw = collection as unknown as Record<string, (...args: unknown[]) => unknown>
    return new Proxy(raw, {
      get (target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof property !== 'string' || !READS.has(property) || typeof value !== 'function') return value
        // distinct(key, filter, options); the others (filter|pipeline, options)
        const optionsAt = property === 'distinct' ? 2 : 1
        return (...args: unknown[]) => {
          args[optionsAt] = { ...(args[optionsAt] as object | undefined), session }
          return value.apply(target, args)
        }
      }
    }) as unknown as Collection
  })
}

// Inside a transaction, MongoDB reads must carry the transaction's session.
// Parse's Mongo adapter opens collections through _adaptiveCollection(); this
// hands out collections whose reads add { session }.
import type { MongoAdapter } from '../../parse/internals.js'

const READS = new Set(['find', 'countDocuments', 'aggregate', 'distinct', 'findOne'])

export function onTransaction (adapter: object, session: unknown): object {
  const base = adapter as MongoAdapter
  return Object.create(base, {
    _adaptiveCollection: {
      value: async (className: string) => {
        const collection = await base._adaptiveCollection(className)
        const raw = collection._mongoCollection as unknown as Record<string, (...args: unknown[]) => unknown>
        const withSession = new Proxy(raw, {
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
        })
        return Object.create(collection, { _mongoCollection: { value: withSession } })
      }
    }
  })
}

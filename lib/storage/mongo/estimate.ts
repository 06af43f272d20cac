// MongoDB's estimate of a class's size: the collection's metadata count, which
// reads no document. It knows nothing of a filter, so a query with any
// condition (a row ACL included) has no estimate here.
import { mongoCollectionOf } from '../../parse/adapter-internals.js'

export async function collectionSize (adapter: object, className: string, query: Record<string, unknown>): Promise<number | undefined> {
  if (Object.keys(query).length > 0) return undefined
  return await (await mongoCollectionOf(adapter, className)).estimatedDocumentCount()
}

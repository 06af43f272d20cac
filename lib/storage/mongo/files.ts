// Parse.File contents on MongoDB (GridFS). Parse's GridFS adapter opens a
// MongoClient of its own, so it gets the same bound as the storage adapter's
// client (bounded.ts: timeoutMS covers a whole upload or download), and its calls report
// an outage like the storage adapter's: a frozen database fails a file call
// with 503 instead of hanging it.
import { gridFSBucketAdapterClass, type GridFSBucketAdapterClass } from '../../parse/internals.js'
import { boundedMongoOptions } from './bounded.js'
import { reportingOutages } from '../outages.js'
import type { DatabaseAvailability } from '../availability.js'

/** The adapter methods that reach the database (getFileLocation only builds a url). */
const DATABASE_CALLS = ['createFile', 'deleteFile', 'getFileData', 'getMetadata', 'handleFileStream']

export function boundedGridFS (uri: string, timeoutMs: number, availability: DatabaseAvailability): InstanceType<GridFSBucketAdapterClass> {
  const GridFSBucketAdapter = gridFSBucketAdapterClass()
  const adapter = new GridFSBucketAdapter(uri, boundedMongoOptions(uri, timeoutMs))
  const methods = adapter as unknown as Record<string, unknown>
  for (const name of DATABASE_CALLS) {
    const method = methods[name]
    if (typeof method === 'function') methods[name] = reportingOutages(method as (...args: unknown[]) => unknown, availability)
  }
  return adapter
}

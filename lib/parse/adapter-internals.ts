// The private members of Parse's storage adapters the kit reads or replaces:
// pg-promise's database and formatter on PostgreSQL (`_client`, `_pgp`,
// `$pool`), the collection opener and prefix on MongoDB
// (`_adaptiveCollection`, `_mongoCollection`, `_collectionPrefix`) and the
// schema change stream (`_stream`). Each is one named function, pinned by
// test/parse-contract.test.ts and listed in docs/internals/parse-seam.md.
import type { Collection } from 'mongodb'
import type { MongoAdapter, PgDatabase, PgPool, PgQueries, PostgresAdapter } from './storage-shapes.js'

type Format = (query: string, values?: unknown) => string

/** pg-promise's database object Parse's PostgreSQL adapter queries through; undefined on another adapter. */
export function pgDatabase (adapter: object): PgDatabase | undefined {
  return (adapter as Partial<PostgresAdapter>)._client
}

/** node-postgres's pool behind that database (Parse's handleShutdown ends it without awaiting). */
export function pgPool (adapter: object): PgPool | undefined {
  return pgDatabase(adapter)?.$pool
}

/** pg-promise's formatter (`$1:name`, values), as the adapter renders its own queries. */
export function pgFormatter (adapter: object): Format {
  const pgp = (adapter as PostgresAdapter)._pgp
  return (query, values) => pgp.as.format(query, values)
}

/** A view of the adapter whose every query runs on `queries` (one pooled connection, or a transaction); the adapter itself is unchanged. */
export function withPgQueries<A extends object> (adapter: A, queries: PgQueries): A {
  return Object.create(adapter, { _client: { value: queries } }) as A
}

/** The prefix Parse puts before every MongoDB collection name ('' by default). */
export function mongoCollectionPrefix (adapter: object): string {
  return (adapter as Partial<MongoAdapter>)._collectionPrefix ?? ''
}

/**
 * A view of Parse's MongoDB adapter whose collections (the driver's, inside
 * Parse's wrapper) are replaced by what `wrap` makes of them; the adapter itself is unchanged.
 */
export function withMongoCollections<A extends object> (adapter: A, wrap: (collection: Collection) => Collection): A {
  const base = adapter as unknown as MongoAdapter
  return Object.create(adapter, {
    _adaptiveCollection: {
      value: async (className: string) => {
        const collection = await base._adaptiveCollection(className)
        return Object.create(collection, { _mongoCollection: { value: wrap(collection._mongoCollection) } })
      }
    }
  }) as A
}

/** The schema change stream Parse's MongoDB adapter keeps (with schema hooks), when one is open. */
export interface SchemaChangeStream {
  on (event: 'error', listener: (error: unknown) => void): unknown
  close? (): Promise<unknown>
}

/** Takes over the adapter's slot for its schema change stream: Parse's reads and writes of it go to `slot`. */
export function takeSchemaStreamSlot (adapter: object, slot: { get (): SchemaChangeStream | undefined, set (stream: SchemaChangeStream | undefined): void }): SchemaChangeStream | undefined {
  const current = (adapter as { _stream?: SchemaChangeStream })._stream
  Object.defineProperty(adapter, '_stream', { configurable: true, get: slot.get, set: slot.set })
  return current
}

/**
 * What a capturing client throws once it has the statement: the adapter's call
 * ends there. Not an Error: it is caught at once, and a stack trace per list
 * request would cost more than building the statement.
 */
class Captured {
  constructor (readonly sql: string) {}
}

/**
 * The SQL (values inlined by the adapter's own formatter) that Parse's
 * PostgreSQL adapter would send to count `query`, without sending it: the
 * adapter's own count runs on a client that records the statement and stops.
 * `adapter` may be the kit's wrapper around Parse's adapter; the method is
 * taken from Parse's class, so the wrapper does not send it on the real client.
 */
export async function pgCountStatement (adapter: object, className: string, schema: unknown, query: Record<string, unknown>): Promise<string> {
  const format = pgFormatter(adapter)
  const capture = {
    one: async (sql: string, values?: unknown): Promise<never> => { throw new Captured(format(sql, values)) }
  }
  const count = (Object.getPrototypeOf(adapter) as { count: (...args: unknown[]) => Promise<unknown> }).count
  try {
    // estimate false: Parse would otherwise answer a condition-free count from pg_class without a statement to explain.
    await count.call(withPgQueries(adapter, capture as unknown as PgQueries), className, schema, query, undefined, false)
  } catch (error) {
    if (error instanceof Captured) return error.sql
    throw error
  }
  throw new Error('the adapter counted without a statement')
}

/** The driver's collection behind a Parse class on MongoDB (prefix applied by Parse's own opener). */
export async function mongoCollectionOf (adapter: object, className: string): Promise<Collection> {
  return (await (adapter as unknown as MongoAdapter)._adaptiveCollection(className))._mongoCollection
}

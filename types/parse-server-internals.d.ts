// Parse Server ships no types for its storage adapters' modules; we use a small surface of them.
declare module 'parse-server/lib/Adapters/Storage/Postgres/PostgresStorageAdapter.js' {
  export class PostgresStorageAdapter {
    constructor (options: { uri: string, collectionPrefix?: string, databaseOptions?: Record<string, unknown> })
    _client: any
    _pgp: any
    handleShutdown (): void
    [key: string]: any
  }
}
declare module 'parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter.js' {
  export class MongoStorageAdapter {
    constructor (options: { uri: string, collectionPrefix?: string, mongoOptions?: Record<string, unknown> })
    client: any
    database: any
    connect (): Promise<unknown>
    handleShutdown (): Promise<void>
    [key: string]: any
  }
}
declare module 'parse-server/lib/Adapters/Files/GridFSBucketAdapter.js' {
  export class GridFSBucketAdapter {
    constructor (uri: string, mongoOptions?: Record<string, unknown>)
  }
}
declare module 'parse-server/lib/Adapters/Cache/SchemaCache.js' {
  const SchemaCache: { default: { clear (): void } }
  export default SchemaCache
}

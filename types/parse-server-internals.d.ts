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
declare module 'parse-server/lib/Auth.js' {
  const Auth: {
    Auth: new (options: { config: unknown, isMaster?: boolean, user?: unknown, installationId?: string }) => { getUserRoles (): Promise<string[]>, user?: any, isMaster: boolean }
    master (config: unknown): unknown
    nobody (config: unknown): unknown
    getAuthForSessionToken (options: { config: unknown, sessionToken: string, installationId?: string }): Promise<{ user?: any, getUserRoles (): Promise<string[]> }>
  }
  export default Auth
}
declare module 'parse-server/lib/Config.js' {
  const Config: { get (appId: string, mount?: string): any }
  export default Config
}
declare module 'parse-server/lib/RestQuery.js' {
  interface RestQueryFn {
    (options: { method: string, config: unknown, auth: unknown, className: string, restWhere?: Record<string, unknown>, restOptions?: Record<string, unknown>, context?: Record<string, unknown> }): Promise<{ execute (): Promise<{ results: Array<Record<string, unknown>>, count?: number }> }>
    Method: { find: string, get: string }
  }
  const RestQuery: RestQueryFn
  export default RestQuery
}
declare module 'parse-server/lib/rest.js' {
  interface WriteResult { response: Record<string, unknown>, status?: number, headers?: Record<string, string>, location?: string }
  const rest: {
    create (config: unknown, auth: unknown, className: string, restObject: Record<string, unknown>, context?: Record<string, unknown>): Promise<WriteResult>
    update (config: unknown, auth: unknown, className: string, restWhere: Record<string, unknown>, restObject: Record<string, unknown>, context?: Record<string, unknown>): Promise<WriteResult>
  }
  export default rest
}
declare module 'parse-server/lib/Controllers/SchemaController.js' {
  export function classNameIsValid (className: string): boolean
  export function fieldNameIsValid (fieldName: string, className?: string): boolean
  export const systemClasses: readonly string[]
  export const defaultColumns: Record<string, Record<string, unknown>>
  export class SchemaController {
    schemaData: Record<string, unknown>
    getExpectedType (className: string, fieldName: string): unknown
    enforceClassExists (className: string): Promise<SchemaController>
    enforceFieldExists (className: string, fieldName: string, type: unknown, isValidation?: boolean, maintenance?: boolean): unknown
    [key: string]: any
  }
}
declare module 'parse-server/lib/logger.js' {
  export function getLogger (): { error (...args: unknown[]): unknown, [key: string]: any }
}

declare module 'parse-server/lib/batch.js' {
  const batch: {
    makeBatchRoutingPathFunction: (originalUrl: string, serverURL?: string, publicServerURL?: string) => (requestPath: string) => string
  }
  export default batch
}

// Parse Server modules the kit uses beyond the package's main export. Parse's
// modules require each other in cycles (Auth ↔ RestWrite): loading one of them
// first leaves the other holding a half-built module. Loading the package
// first keeps Parse's own load order; every deep import goes through here.
// Each module comes in as its module.exports (unknown, parse-server-lib.d.ts)
// and leaves with the shape the kit relies on (*-shapes.ts), which
// test/parse-contract.test.ts checks against Parse.
//
// Nothing is loaded when this file is imported: parseInternals() loads Parse
// Server and these modules at its first call (a boot, a request), so that
// importing the kit, declaring models and a boot refused for an option never
// load Parse Server (issue 49).
import { parseServerPackage } from './parse-main.js'
import Parse from 'parse/node'
import { createRequire } from 'node:module'
import { GRIDFS_BUCKET_ADAPTER, MONGO_STORAGE_ADAPTER, loadModule, whenModuleLoads } from './lazy-subsystems.js'
import type * as Server from './server-shapes.js'
import type * as Storage from './storage-shapes.js'
import type * as Migration from './migration-shapes.js'

// Through require(), as Parse requires them: an ESM import of a CommonJS file first runs Node's export
// lexer over its whole source (these files carry inline source maps: about 2 MB), work that got the lexer
// optimized at every boot, and whose compiler memory the allocator kept (docs/internals/benchmarks.md, issue 51).
const requireParse = createRequire(import.meta.url)

export type * from './server-shapes.js'
export type * from './storage-shapes.js'
export type * from './migration-shapes.js'

/** Parse Server's deep modules, each with the shape the kit relies on. */
export interface ParseInternals {
  AuthModule: Server.AuthModuleExports
  Config: Server.ConfigModuleExports
  RestQuery: Server.RestQueryExports
  /** rest.create / rest.update: what Parse's ClassesRouter calls for a single-object write. */
  rest: Server.RestExports
  /** The write rest.create runs (parse/lean-create.ts runs its steps). */
  RestWrite: Server.RestWriteClass
  /** What rest.create checks before it builds its RestWrite (Parse's classes that only the master key may touch, a read-only master key). */
  enforceRoleSecurity: Server.SharedRestExports['enforceRoleSecurity']
  /** Parse's Utils class (parse/keyword-scan.ts replaces its denylist scan). */
  ParseUtils: Server.UtilsClass
  SchemaCache: Server.SchemaCacheExports
  /** The per-purpose view of Parse's cache (role, user): parse/shared-loads.ts counts its drops. */
  SubCache: Server.SubCacheClass
  PostgresStorageAdapter: Storage.PostgresAdapterClass
  SchemaRules: Server.SchemaControllerExports
  /** The class of the per-request database controller (Config.get builds one per request). */
  DatabaseController: Server.DatabaseControllerClass
  /** Parse's logger (logger.js getLogger). */
  getLogger: Server.LoggerExports['getLogger']
  /** How Parse's /batch turns an inner request's path into the path its router runs. */
  makeBatchRoutingPathFunction: Server.BatchExports['makeBatchRoutingPathFunction']
  triggers: Server.TriggersExports
  cryptoUtils: Server.CryptoUtilsExports
  RedisPubSub: Server.RedisPubSubExports['RedisPubSub']
  /** The exports object ParseServer#start takes getPushController from (parse/push-without-adapter.ts). */
  Controllers: Server.ControllersExports
  PushController: Server.PushControllerExports['PushController']
  PushQueue: Server.PushQueueExports['PushQueue']
  PushWorker: Server.PushWorkerExports['PushWorker']
  /** Parse's default cache adapter (access/user-cache.ts reads it synchronously). */
  InMemoryCacheAdapter: Server.InMemoryCacheAdapterExports['InMemoryCacheAdapter']
  /** The ParseServer class (whose static promiseRouter builds the routes its app mounts). */
  ParseServerClass: Server.ParseServerModuleExports['default']
  /** Parse's Defined Schemas migration (parse/unchanged-schema.ts skips its writes that change nothing). */
  DefinedSchemas: Migration.DefinedSchemasModuleExports['DefinedSchemas']
}

let internals: ParseInternals | undefined

/** Parse Server's deep modules, loaded at the first call: the package main first, then each in the order Parse itself would reach it. */
export function parseInternals (): ParseInternals {
  internals ??= loadInternals()
  return internals
}

/** Whether parseInternals() has loaded Parse Server yet. */
export function parseInternalsLoaded (): boolean {
  return internals !== undefined
}

function loadInternals (): ParseInternals {
  parseServerPackage() // the package main first: Parse's own load order (the cycles above)
  const deep = (file: string) => requireParse(`parse-server/lib/${file}`) as unknown
  // An object literal runs its properties in order: the same order of requires as when these were top-level constants.
  return {
    AuthModule: deep('Auth.js') as Server.AuthModuleExports,
    Config: deep('Config.js') as Server.ConfigModuleExports,
    RestQuery: deep('RestQuery.js') as Server.RestQueryExports,
    rest: deep('rest.js') as Server.RestExports,
    RestWrite: deep('RestWrite.js') as Server.RestWriteClass,
    enforceRoleSecurity: (deep('SharedRest.js') as Server.SharedRestExports).enforceRoleSecurity,
    ParseUtils: deep('Utils.js') as Server.UtilsClass,
    SchemaCache: deep('Adapters/Cache/SchemaCache.js') as Server.SchemaCacheExports,
    SubCache: (deep('Controllers/CacheController.js') as { SubCache: Server.SubCacheClass }).SubCache,
    PostgresStorageAdapter: (deep('Adapters/Storage/Postgres/PostgresStorageAdapter.js') as { PostgresStorageAdapter: Storage.PostgresAdapterClass }).PostgresStorageAdapter,
    SchemaRules: deep('Controllers/SchemaController.js') as Server.SchemaControllerExports,
    DatabaseController: deep('Controllers/DatabaseController.js') as Server.DatabaseControllerClass,
    getLogger: (deep('logger.js') as Server.LoggerExports).getLogger,
    makeBatchRoutingPathFunction: (deep('batch.js') as Server.BatchExports).makeBatchRoutingPathFunction,
    triggers: deep('triggers.js') as Server.TriggersExports,
    cryptoUtils: deep('cryptoUtils.js') as Server.CryptoUtilsExports,
    RedisPubSub: (deep('Adapters/PubSub/RedisPubSub.js') as Server.RedisPubSubExports).RedisPubSub,
    Controllers: deep('Controllers/index.js') as Server.ControllersExports,
    PushController: (deep('Controllers/PushController.js') as Server.PushControllerExports).PushController,
    PushQueue: (deep('Push/PushQueue.js') as Server.PushQueueExports).PushQueue,
    PushWorker: (deep('Push/PushWorker.js') as Server.PushWorkerExports).PushWorker,
    InMemoryCacheAdapter: (deep('Adapters/Cache/InMemoryCacheAdapter.js') as Server.InMemoryCacheAdapterExports).InMemoryCacheAdapter,
    ParseServerClass: (deep('ParseServer.js') as Server.ParseServerModuleExports).default,
    DefinedSchemas: (deep('SchemaMigrations/DefinedSchemas.js') as Migration.DefinedSchemasModuleExports).DefinedSchemas
  }
}

/** Parse's PostgreSQL storage adapter class (loads Parse Server at the first call). */
export function postgresStorageAdapterClass (): Storage.PostgresAdapterClass {
  return parseInternals().PostgresStorageAdapter
}

/** Parse Server's logger (its getLogger), loading Parse at the first call. */
export function parseLogger (): ReturnType<Server.LoggerExports['getLogger']> {
  return parseInternals().getLogger()
}

// The MongoDB adapters load the MongoDB driver: taken at first use (a
// PostgreSQL kit never loads them; lazy-subsystems.ts). A static import would
// read their exports as it links, and load them.

/** Parse's MongoDB storage adapter class (loads the MongoDB driver). */
export function mongoStorageAdapterClass (): Storage.MongoAdapterClass {
  parseServerPackage() // Parse's package main before any of its deep modules
  return loadModule(MONGO_STORAGE_ADAPTER).MongoStorageAdapter as Storage.MongoAdapterClass
}

/** Runs `patch` on Parse's MongoDB storage adapter class when it loads (at once if it is loaded). */
export function whenMongoStorageAdapterLoads (patch: (adapter: Storage.MongoAdapterClass) => void): void {
  whenModuleLoads(MONGO_STORAGE_ADAPTER, (exports) => patch(exports.MongoStorageAdapter as Storage.MongoAdapterClass))
}

/** Parse's GridFS files adapter class (loads the MongoDB driver). */
export function gridFSBucketAdapterClass (): Storage.GridFSBucketAdapterClass {
  parseServerPackage() // Parse's package main before any of its deep modules
  return loadModule(GRIDFS_BUCKET_ADAPTER).GridFSBucketAdapter as Storage.GridFSBucketAdapterClass
}

/** Parse.Cloud.run's encoding of a function's result (the SDK's private _encode). */
export function encodeLikeCloudRun (value: unknown): unknown {
  return (Parse as unknown as Server.ParseSdkPrivate)._encode(value)
}

type SdkEncode = (value: unknown, disallowObjects: boolean, forcePointers: boolean) => unknown

/**
 * A value as the SDK's save sends it (SetOp#toJSON: the SDK's private encode
 * with forcePointers): Parse objects as pointers, dates, ACLs, files and geo
 * values in Parse's REST JSON.
 */
export function encodeForSave (value: unknown): unknown {
  sdkEncode ??= (requireParse('parse/lib/node/encode.js') as { default: SdkEncode }).default
  return sdkEncode(value, false, true)
}

let sdkEncode: SdkEncode | undefined

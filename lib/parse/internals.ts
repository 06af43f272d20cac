// Parse Server modules the kit uses beyond the package's main export. Parse's
// modules require each other in cycles (Auth ↔ RestWrite): loading one of them
// first leaves the other holding a half-built module. Importing the package
// first keeps Parse's own load order; every deep import goes through here.
// Each module comes in as its module.exports (unknown, parse-server-lib.d.ts)
// and leaves with the shape the kit relies on (*-shapes.ts), which
// test/parse-contract.test.ts checks against Parse.
import './parse-main.js' // parse-server itself first, its unused subsystems deferred
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
const AuthExports = requireParse('parse-server/lib/Auth.js') as unknown
const ConfigExports = requireParse('parse-server/lib/Config.js') as unknown
const RestQueryExports = requireParse('parse-server/lib/RestQuery.js') as unknown
const RestExports = requireParse('parse-server/lib/rest.js') as unknown
const RestWriteExports = requireParse('parse-server/lib/RestWrite.js') as unknown
const SharedRestExports = requireParse('parse-server/lib/SharedRest.js') as unknown
const UtilsExports = requireParse('parse-server/lib/Utils.js') as unknown
const SchemaCacheExports = requireParse('parse-server/lib/Adapters/Cache/SchemaCache.js') as unknown
const CacheControllerExports = requireParse('parse-server/lib/Controllers/CacheController.js') as unknown
const PostgresExports = requireParse('parse-server/lib/Adapters/Storage/Postgres/PostgresStorageAdapter.js') as unknown
const SchemaControllerExports = requireParse('parse-server/lib/Controllers/SchemaController.js') as unknown
const DatabaseControllerExports = requireParse('parse-server/lib/Controllers/DatabaseController.js') as unknown
const LoggerExports = requireParse('parse-server/lib/logger.js') as unknown
const BatchExports = requireParse('parse-server/lib/batch.js') as unknown
const TriggersExports = requireParse('parse-server/lib/triggers.js') as unknown
const CryptoUtilsExports = requireParse('parse-server/lib/cryptoUtils.js') as unknown
const RedisPubSubExports = requireParse('parse-server/lib/Adapters/PubSub/RedisPubSub.js') as unknown
const ControllersExports = requireParse('parse-server/lib/Controllers/index.js') as unknown
const PushControllerExports = requireParse('parse-server/lib/Controllers/PushController.js') as unknown
const PushQueueExports = requireParse('parse-server/lib/Push/PushQueue.js') as unknown
const PushWorkerExports = requireParse('parse-server/lib/Push/PushWorker.js') as unknown
const InMemoryCacheAdapterExports = requireParse('parse-server/lib/Adapters/Cache/InMemoryCacheAdapter.js') as unknown
const ParseServerModuleExports = requireParse('parse-server/lib/ParseServer.js') as unknown
const DefinedSchemasExports = requireParse('parse-server/lib/SchemaMigrations/DefinedSchemas.js') as unknown
const SdkEncodeExports = requireParse('parse/lib/node/encode.js') as unknown

export type * from './server-shapes.js'
export type * from './storage-shapes.js'
export type * from './migration-shapes.js'

export const AuthModule = AuthExports as Server.AuthModuleExports
export const Config = ConfigExports as Server.ConfigModuleExports
export const RestQuery = RestQueryExports as Server.RestQueryExports
/** rest.create / rest.update: what Parse's ClassesRouter calls for a single-object write. */
export const rest = RestExports as Server.RestExports
/** The write rest.create runs (parse/lean-create.ts runs its steps). */
export const RestWrite = RestWriteExports as Server.RestWriteClass
/** What rest.create checks before it builds its RestWrite (Parse's classes that only the master key may touch, a read-only master key). */
export const enforceRoleSecurity = (SharedRestExports as Server.SharedRestExports).enforceRoleSecurity
export const SchemaCache = SchemaCacheExports as Server.SchemaCacheExports
/** The per-purpose view of Parse's cache (role, user): parse/shared-loads.ts counts its drops. */
export const SubCache = (CacheControllerExports as { SubCache: Server.SubCacheClass }).SubCache
/** Parse's Utils class (parse/keyword-scan.ts replaces its denylist scan). */
export const ParseUtils = UtilsExports as Server.UtilsClass
export const SchemaRules = SchemaControllerExports as Server.SchemaControllerExports
/** The class of the per-request database controller (Config.get builds one per request). */
export const DatabaseController = DatabaseControllerExports as Server.DatabaseControllerClass
export const parseLogger = (LoggerExports as Server.LoggerExports).getLogger
export const triggers = TriggersExports as Server.TriggersExports
export const cryptoUtils = CryptoUtilsExports as Server.CryptoUtilsExports
export const RedisPubSub = (RedisPubSubExports as Server.RedisPubSubExports).RedisPubSub
/** Parse's default cache adapter (access/user-cache.ts reads it synchronously). */
export const InMemoryCacheAdapter = (InMemoryCacheAdapterExports as Server.InMemoryCacheAdapterExports).InMemoryCacheAdapter
/** How Parse's /batch turns an inner request's path into the path its router runs. */
export const makeBatchRoutingPathFunction = (BatchExports as Server.BatchExports).makeBatchRoutingPathFunction
/** The exports object ParseServer#start takes getPushController from (parse/push-without-adapter.ts). */
export const Controllers = ControllersExports as Server.ControllersExports
export const PushController = (PushControllerExports as Server.PushControllerExports).PushController
export const PushQueue = (PushQueueExports as Server.PushQueueExports).PushQueue
export const PushWorker = (PushWorkerExports as Server.PushWorkerExports).PushWorker
/** The ParseServer class (whose static promiseRouter builds the routes its app mounts). */
export const ParseServerClass = (ParseServerModuleExports as Server.ParseServerModuleExports).default
/** Parse's Defined Schemas migration (parse/unchanged-schema.ts skips its writes that change nothing). */
export const DefinedSchemas = (DefinedSchemasExports as Migration.DefinedSchemasModuleExports).DefinedSchemas

export const PostgresStorageAdapter = (PostgresExports as { PostgresStorageAdapter: Storage.PostgresAdapterClass }).PostgresStorageAdapter

// The MongoDB adapters load the MongoDB driver: taken at first use (a
// PostgreSQL kit never loads them; lazy-subsystems.ts). A static import would
// read their exports as it links, and load them.

/** Parse's MongoDB storage adapter class (loads the MongoDB driver). */
export function mongoStorageAdapterClass (): Storage.MongoAdapterClass {
  return loadModule(MONGO_STORAGE_ADAPTER).MongoStorageAdapter as Storage.MongoAdapterClass
}

/** Runs `patch` on Parse's MongoDB storage adapter class when it loads (at once if it is loaded). */
export function whenMongoStorageAdapterLoads (patch: (adapter: Storage.MongoAdapterClass) => void): void {
  whenModuleLoads(MONGO_STORAGE_ADAPTER, (exports) => patch(exports.MongoStorageAdapter as Storage.MongoAdapterClass))
}

/** Parse's GridFS files adapter class (loads the MongoDB driver). */
export function gridFSBucketAdapterClass (): Storage.GridFSBucketAdapterClass {
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
  return (SdkEncodeExports as { default: SdkEncode }).default(value, false, true)
}

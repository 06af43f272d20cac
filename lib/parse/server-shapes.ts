// What the kit uses of Parse Server's private modules (Auth, Config,
// RestQuery, SchemaController, triggers, logger, batch, the schema cache and
// Redis pub/sub). One declaration per shape; test/parse-contract.test.ts
// checks every name, arity and argument position against Parse.
import type Parse from 'parse/node'

/** What a request runs as: Parse's Auth (master, nobody, or a user). */
export interface ParseAuth {
  user?: Parse.User
  getUserRoles (): Promise<string[]>
}

/** Parse's database controller, as the kit reads it off a Config. */
export interface ParseDatabaseController {
  adapter: unknown
  loadSchema (options?: { clearCache?: boolean }): Promise<SchemaController>
  /** A row as Parse's status handlers write one: no triggers, no RestWrite (Dates as Date, ACL as { id: { read, write } }). */
  create (className: string, object: Record<string, unknown>): Promise<unknown>
  update (className: string, query: Record<string, unknown>, update: Record<string, unknown>): Promise<unknown>
}

/** Parse's per-application Config (Config.get). */
export interface ParseConfig {
  applicationId: string
  /** The API's root URL (file urls, Location headers); Parse derives it from each request. */
  mount?: string
  serverURL?: string
  extendSessionOnUse?: boolean
  cacheController?: {
    /** Prefixes every key: `${appId}:user:${sessionToken}` for a session's user. */
    appId: string
    adapter: unknown
    user: { get (sessionToken: string): Promise<unknown> }
    /** Every user's role list (`clear` empties Parse's whole cache adapter, as Parse does on a _Role save). */
    role: { clear (): Promise<unknown> }
  }
  database: ParseDatabaseController
  /** The length of the objectIds Parse makes (its option objectIdSize). */
  objectIdSize?: number
  /** What a job's request.log is (Parse's logger controller). */
  loggerController?: unknown
}

export interface AuthModuleExports {
  Auth: new (options: { config: ParseConfig, isMaster?: boolean, user?: Parse.User, installationId?: string }) => ParseAuth
  master (config: ParseConfig): ParseAuth
  nobody (config: ParseConfig): ParseAuth
  getAuthForSessionToken (options: { config: ParseConfig, sessionToken: string, installationId?: string }): Promise<ParseAuth>
}

export interface ConfigModuleExports {
  get (appId: string, mount?: string): ParseConfig | undefined
}

/** What rest.create / rest.update answer. */
export interface RestWriteResult {
  response: Record<string, unknown>
  status?: number
  headers?: Record<string, string>
  location?: string
}

/** RestWrite#execute's steps (parse/lean-create.ts); each takes no argument. */
export type RestWriteStep =
  'getUserAndRoleACL' | 'validateClientClassCreation' | 'handleInstallation' | 'handleSession' | 'validateAuthData' |
  'checkRestrictedFields' | 'runBeforeSaveTrigger' | 'ensureUniqueAuthDataId' | 'deleteEmailResetTokenIfNeeded' |
  'validateSchema' | 'setRequiredFieldsIfNeeded' | 'validateCreatePermission' | 'transformUser' |
  'expandFilesForExistingObjects' | 'destroyDuplicatedSessions' | 'runDatabaseOperation' | 'createSessionTokenIfNeeded' |
  'handleFollowup' | 'runAfterSaveTrigger' | 'cleanUserAuthData' | 'filterProtectedFieldsInResponse'

export type RestWriteInstance = { [step in RestWriteStep]: () => unknown } & {
  /** Set by execute from validateSchema's answer; validateCreatePermission reads it. */
  validSchemaController: unknown
  response: RestWriteResult | null
  execute (): Promise<RestWriteResult>
}

/** Parse's SubCache (CacheController's role, user and graphQL caches). */
export interface SubCacheClass {
  prototype: { del (key: string): Promise<unknown>, clear (): Promise<unknown> }
}

/** Parse's Utils class: its denylist scan (checkProhibitedKeywords calls Utils.objectContainsKeyValue through the class). */
export interface UtilsClass {
  objectContainsKeyValue (object: unknown, key: unknown, value: unknown): boolean
  checkProhibitedKeywords (config: unknown, data: unknown): void
}

export interface SharedRestExports {
  enforceRoleSecurity (method: 'create' | 'update' | 'delete' | 'find' | 'get', className: string, auth: unknown, config: unknown): void
}

export interface RestWriteClass {
  new (config: unknown, auth: unknown, className: string, query: Record<string, unknown> | null, data: Record<string, unknown>, originalData: Record<string, unknown> | null, context?: Record<string, unknown>): RestWriteInstance
  prototype: RestWriteInstance
}

export interface RestExports {
  create (config: unknown, auth: unknown, className: string, restObject: Record<string, unknown>, context?: Record<string, unknown>): Promise<RestWriteResult>
  update (config: unknown, auth: unknown, className: string, restWhere: Record<string, unknown>, restObject: Record<string, unknown>, context?: Record<string, unknown>): Promise<RestWriteResult>
}

export interface RestQueryOptions {
  method: string
  config: ParseConfig
  auth: ParseAuth
  className: string
  restWhere?: Record<string, unknown>
  restOptions?: Record<string, unknown>
  context?: Record<string, unknown>
  /** false: the beforeFind trigger already ran (the caller passes the where and options it left). */
  runBeforeFind?: boolean
  /** false: no afterFind trigger on the rows (a count's read). */
  runAfterFind?: boolean
}

export interface RestQueryExports {
  (options: RestQueryOptions): Promise<{ execute (): Promise<{ results: Array<Record<string, unknown>>, count?: number }> }>
  Method: { find: string }
}

/** A SchemaController instance: the loaded schema and the checks every save runs through. */
export interface SchemaController {
  schemaData: Record<string, unknown>
  /** The server option protectedFields (class → rule → fields), copied from the config when built. */
  protectedFields?: Record<string, Record<string, unknown> | undefined>
  getExpectedType (className: string, fieldName: string): unknown
  reloadData (options?: { clearCache?: boolean }): Promise<unknown>
  enforceClassExists (className: string): Promise<SchemaController>
  enforceFieldExists (className: string, fieldName: string, type: unknown, isValidation?: boolean, maintenance?: boolean): unknown
}

export interface SchemaControllerExports {
  classNameIsValid (className: string): boolean
  fieldNameIsValid (fieldName: string, className?: string): boolean
  systemClasses: readonly string[]
  defaultColumns: Record<string, Record<string, unknown> | undefined> & { _Default: Record<string, unknown> }
  SchemaController: { prototype: SchemaController }
}

export interface LoggerExports {
  getLogger (): { error (...args: unknown[]): unknown, warn (...args: unknown[]): unknown }
}

/** DatabaseController#update(className, query, update, options, skipSanitization, validateOnly, validSchemaController). */
export type DatabaseUpdate = (className: string, query: Record<string, unknown>, update: Record<string, unknown>, ...rest: unknown[]) => Promise<unknown>

/** DatabaseController#canAddField(schema, className, object, aclGroup, runOptions): checks addField when a save without the master key adds fields. */
export type CanAddField = (schema: { schemaData: Record<string, { fields: Record<string, unknown> } | undefined> }, className: string, object: Record<string, unknown>, ...rest: unknown[]) => Promise<void>

export interface DatabaseControllerClass {
  prototype: { update: DatabaseUpdate, canAddField: CanAddField }
}

export interface SchemaCacheExports {
  /** all(): a fresh array of the cached class schemas; the entries are replaced (never changed) when a schema changes. */
  default: { clear (): void, all (): readonly unknown[] }
}

export interface InMemoryCacheAdapterExports {
  /** Parse's default cacheAdapter: its `cache` (Parse's LRUCache) answers synchronously, null when absent or expired. */
  InMemoryCacheAdapter: abstract new (...args: never[]) => { cache: { get (key: string): unknown } }
}

export interface BatchExports {
  /** How Parse's /batch turns an inner request's path into the path its router runs. */
  makeBatchRoutingPathFunction (originalUrl: string, serverURL?: string, publicServerURL?: string): (requestPath: string) => string
}

export type TriggerHandler = (request: unknown) => unknown

export interface TriggersExports {
  Types: Record<'afterSave' | 'afterDelete' | 'afterFind' | 'beforeDelete', string>
  /** The function Parse.Cloud.job registered under `jobName`. */
  getJob (jobName: string, applicationId: string): TriggerHandler | undefined
  getTrigger (className: string, triggerType: string, applicationId: string): TriggerHandler | undefined
  /** Runs a beforeFind (or other query) trigger when one is registered; answers the where and options it leaves. */
  maybeRunQueryTrigger (triggerType: string, className: string, restWhere: Record<string, unknown>, restOptions: Record<string, unknown>, config: ParseConfig, auth: ParseAuth, context: Record<string, unknown>, isGet?: boolean): Promise<{ restWhere?: Record<string, unknown>, restOptions?: Record<string, unknown> }>
  getValidator (name: string, applicationId: string): unknown
  removeTrigger (type: string, className: string, applicationId: string): void
  /** Empties the store of every application's Cloud Code (triggers, functions, jobs). */
  _unregisterAll (): void
  addTrigger (type: string, className: string, handler: TriggerHandler, applicationId: string, validator?: unknown): void
}

export interface CryptoUtilsExports {
  /** An objectId as Parse makes one: `size` letters and digits. */
  newObjectId (size?: number): string
}

export interface RedisPubSubConfig { redisURL: string, redisOptions?: Record<string, unknown> }

export interface RedisPubSubExports {
  RedisPubSub: {
    createPublisher (config: RedisPubSubConfig): unknown
    createSubscriber (config: RedisPubSubConfig): unknown
  }
}

/** What Controllers/index.js getPushController answers; ParseServer#start spreads it into the app's config. */
export interface PushControllers {
  pushController: unknown
  hasPushSupport: boolean
  hasPushScheduledSupport: boolean
  pushControllerQueue: unknown
  pushWorker: unknown
}

/** Controllers/index.js: ParseServer#start calls getPushController through this exports object. */
export interface ControllersExports {
  getPushController (options: { push?: unknown, scheduledPush?: unknown }): Promise<PushControllers>
}

export interface PushControllerExports { PushController: new () => unknown }
export interface PushQueueExports { PushQueue: new (config?: object) => unknown }
export interface PushWorkerExports { PushWorker: new (adapter: object, subscriberConfig?: object) => unknown }

/** Private members of the Parse JavaScript SDK. */
export interface ParseSdkPrivate {
  /** Encodes a value the way Parse.Cloud.run's answer carries it. */
  _encode (value: unknown): unknown
}

/** One route of Parse's PromiseRouter (the handler runs the route and resolves with `{ response }`). */
export interface PromiseRoute {
  path: string
  method: string
  handler: (request: unknown) => Promise<unknown>
}

/** parse-server/lib/ParseServer.js: the class; `promiseRouter` builds the router `app` mounts. */
export interface ParseServerModuleExports {
  default: {
    promiseRouter (options: { appId: string }): { routes: PromiseRoute[] }
  }
}

// kitPlugin's options, checked once at registration with messages that name the option.
import type { AllowedRoute } from './access/restriction.js'
import { getKitConfig, normaliseMountPath } from './config.js'
import { resolveDocsPath, resolveSwaggerConfig, type SwaggerConfig } from './docs/options.js'
import { checkSchemaOption, type SchemaOption } from './model/schema-option.js'
import { resolveCors, type CorsOptions, type ResolvedCors } from './access/cors-policy.js'
import { ipRangesProblem } from './access/credentials.js'

export type Declarations = Array<abstract new (...args: never[]) => unknown> | string | string[]

export interface KitOptions {
  /** Parse application id; every request must carry it. Env APP_ID. */
  appId?: string
  /** Parse master key; required. Env MASTER_KEY (or masterKey). */
  masterKey?: string
  /** URL the Parse SDK uses to reach this server. Default http://127.0.0.1:{PORT|1337}{mountPath}. */
  serverURL?: string
  /** postgres://, mongodb:// or mongodb+srv://. Env DATABASE_URI. Unset: embedded PostgreSQL (not in production). */
  databaseURI?: string
  /** Data directory of the embedded PostgreSQL. Default .data/postgres. */
  dataDir?: string
  /** Embedded PostgreSQL without fsync (tests). */
  ephemeralDatabase?: boolean
  /** Seconds a database query may go unanswered before the call answers 503. Env DATABASE_TIMEOUT. Default 15. */
  databaseTimeout?: number
  /** Where Parse and the declared endpoints live. Default from configureKit / env mountPath, then /parse. */
  mountPath?: string
  /** Open login, logout, sign-up and session routes (spec table). Default false. */
  allowAuthRoutes?: boolean
  /** More Parse routes to open, e.g. [{ path: '/files/*', methods: ['POST'] }]. */
  allowedRoutes?: AllowedRoute[]
  /** Role that may manage _Role. Default 'SuperAdmin'. */
  adminRole?: string
  /** Pointer classes fromParams leaves alone. Default ['IMG', 'File']. */
  excludedPointerClasses?: string[]
  /** Model classes, or directories whose files declare them. */
  models?: Declarations
  /** Handler classes, or directories whose files declare them. */
  functions?: Declarations
  /** Passed to Parse Server over the kit's defaults. */
  parseServerOptions?: Record<string, unknown>
  /** Schema options ({ lockSchemas, strict, … }) or a whole createSchemaConfig(…) result. Default createSchemaConfig(). */
  schema?: SchemaOption
  /** Create the declared indexes and database constraints once listening. Default true. */
  indexes?: boolean
  /** Push changes of these classes to LiveQuery subscribers (WebSocket on the same port). */
  liveQuery?: { classNames: string[] }
  /** API documentation (setupSwagger's configuration), served at `path` (default /api-docs). Unset: no docs. */
  docs?: SwaggerConfig & { path?: string }
  /** redis:// or rediss:// URL: several instances share rate limits, caches and LiveQuery events. Env REDIS_URL. */
  redis?: string
  /** Cross-origin access under the mount path. Default: any origin, as Parse Server; false: none from the kit. */
  cors?: boolean | CorsOptions
}

export interface ResolvedOptions {
  appId: string
  masterKey: string
  serverURL: string
  databaseURI: string | undefined
  dataDir: string | undefined
  ephemeralDatabase: boolean
  databaseTimeout: number | undefined
  mountPath: string
  allowAuthRoutes: boolean
  allowedRoutes: AllowedRoute[]
  adminRole: string
  excludedPointerClasses: string[]
  models: Declarations
  functions: Declarations
  parseServerOptions: Record<string, unknown>
  schema: SchemaOption | undefined
  indexes: boolean
  liveQuery: { classNames: string[] } | undefined
  docs: { config: SwaggerConfig, path: string } | undefined
  redis: string | undefined
  cors: ResolvedCors | false
  production: boolean
}

const KNOWN = new Set<keyof KitOptions>([
  'appId', 'masterKey', 'serverURL', 'databaseURI', 'dataDir', 'ephemeralDatabase', 'databaseTimeout', 'mountPath', 'allowAuthRoutes',
  'allowedRoutes', 'adminRole', 'excludedPointerClasses', 'models', 'functions', 'parseServerOptions', 'schema', 'indexes', 'liveQuery', 'docs', 'redis', 'cors'
])

export class KitOptionsError extends Error {
  constructor (option: string, problem: string) {
    super(`kitPlugin option "${option}": ${problem}`)
    this.name = 'KitOptionsError'
  }
}

export function resolveOptions (input: KitOptions = {}): ResolvedOptions {
  for (const key of Object.keys(input)) {
    if (!KNOWN.has(key as keyof KitOptions)) throw new KitOptionsError(key, `unknown option (known: ${[...KNOWN].join(', ')})`)
  }
  const kit = getKitConfig()
  const appId = input.appId ?? process.env.APP_ID
  const masterKey = input.masterKey ?? kit.masterKey
  if (!nonEmptyString(appId)) throw new KitOptionsError('appId', 'required: pass appId or set APP_ID')
  if (!nonEmptyString(masterKey)) throw new KitOptionsError('masterKey', 'required: pass masterKey or set MASTER_KEY. Without it the master key would be refused with no explanation.')
  if (masterKey === appId) throw new KitOptionsError('masterKey', 'must differ from appId')
  const mountPath = normaliseMountPath(optionalString(input, 'mountPath') ?? kit.mountPath)
  const port = process.env.PORT ?? '1337'
  const serverURL = optionalString(input, 'serverURL') ?? `http://127.0.0.1:${port}${mountPath === '/' ? '' : mountPath}`
  if (!/^https?:\/\//.test(serverURL)) throw new KitOptionsError('serverURL', `must be an http(s) URL (got "${serverURL}")`)
  const databaseURI = optionalString(input, 'databaseURI') ?? (process.env.DATABASE_URI || undefined)
  return {
    appId,
    masterKey,
    serverURL,
    databaseURI,
    dataDir: optionalString(input, 'dataDir'),
    ephemeralDatabase: optionalBoolean(input, 'ephemeralDatabase') ?? false,
    databaseTimeout: databaseTimeout(input.databaseTimeout ?? process.env.DATABASE_TIMEOUT),
    mountPath,
    allowAuthRoutes: optionalBoolean(input, 'allowAuthRoutes') ?? kit.allowAuthRoutes,
    allowedRoutes: allowedRoutes(input.allowedRoutes),
    adminRole: optionalString(input, 'adminRole') ?? kit.adminRole,
    excludedPointerClasses: stringList(input, 'excludedPointerClasses') ?? kit.excludedPointerClasses,
    models: declarations(input, 'models'),
    functions: declarations(input, 'functions'),
    parseServerOptions: withoutParseCors(parseServerOptions(input)),
    schema: schemaOption(input),
    indexes: optionalBoolean(input, 'indexes') ?? true,
    liveQuery: liveQuery(input.liveQuery),
    docs: docs(input.docs, mountPath),
    redis: redisURL(optionalString(input, 'redis') ?? (process.env.REDIS_URL || undefined)),
    cors: resolveCors(input.cors, (problem) => new KitOptionsError('cors', problem)),
    production: process.env.NODE_ENV === 'production'
  }
}

function parseServerOptions (input: KitOptions): Record<string, unknown> {
  const options = plainObject(input, 'parseServerOptions') ?? {}
  const problem = options.masterKeyIps === undefined ? undefined : ipRangesProblem(options.masterKeyIps)
  if (problem) throw new KitOptionsError('parseServerOptions.masterKeyIps', problem)
  return options
}

function schemaOption (input: KitOptions): SchemaOption | undefined {
  if (input.schema !== undefined && (input.parseServerOptions as Record<string, unknown> | undefined)?.schema !== undefined) {
    throw new KitOptionsError('schema', 'is given twice: pass it as the kit\'s schema option only, not also as parseServerOptions.schema')
  }
  const value = input.schema ?? (input.parseServerOptions as Record<string, unknown> | undefined)?.schema
  if (value === undefined) return undefined
  const problem = checkSchemaOption(value)
  if (problem) throw new KitOptionsError(input.schema !== undefined ? 'schema' : 'parseServerOptions.schema', problem)
  return value as SchemaOption
}

/** Parse's own CORS settings would be silently overridden by the kit's policy: say so at boot. */
function withoutParseCors (options: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['allowOrigin', 'allowHeaders']) {
    if (key in options) throw new KitOptionsError(`parseServerOptions.${key}`, 'has no effect: the kit answers CORS for Parse\'s routes too. Use the cors option, e.g. cors: { origin: [\'https://app.example.com\'], allowedHeaders: [\'X-Custom\'] }')
  }
  return options
}

function nonEmptyString (value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

function optionalString (input: KitOptions, key: keyof KitOptions): string | undefined {
  const value = input[key]
  if (value === undefined) return undefined
  if (!nonEmptyString(value)) throw new KitOptionsError(key, 'must be a non-empty string')
  return value
}

/** Seconds, from the option or DATABASE_TIMEOUT: a positive number, at most one hour. */
function databaseTimeout (value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined
  const seconds = typeof value === 'string' ? Number(value) : value
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new KitOptionsError('databaseTimeout', `must be a number of seconds above 0 and at most 3600 (DATABASE_TIMEOUT or the option; got ${JSON.stringify(value)})`)
  }
  return seconds
}

function optionalBoolean (input: KitOptions, key: keyof KitOptions): boolean | undefined {
  const value = input[key]
  if (value === undefined) return undefined
  if (typeof value !== 'boolean') throw new KitOptionsError(key, `must be true or false (got ${JSON.stringify(value)})`)
  return value
}

function stringList (input: KitOptions, key: keyof KitOptions): string[] | undefined {
  const value = input[key]
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every(nonEmptyString)) throw new KitOptionsError(key, 'must be a list of strings')
  return value
}

function plainObject (input: KitOptions, key: keyof KitOptions): Record<string, unknown> | undefined {
  const value = input[key]
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KitOptionsError(key, 'must be an object')
  return value as Record<string, unknown>
}

function declarations (input: KitOptions, key: 'models' | 'functions'): Declarations {
  const value = input[key]
  if (value === undefined) return []
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((item) => typeof item === 'function')) return value as Declarations
  if (Array.isArray(value) && value.every(nonEmptyString)) return value as string[]
  throw new KitOptionsError(key, 'must be a directory path, a list of directory paths, or a list of classes')
}

function allowedRoutes (value: unknown): AllowedRoute[] {
  if (value === undefined) return []
  const valid = Array.isArray(value) && value.every((route) =>
    typeof route === 'object' && route !== null && nonEmptyString(route.path) && route.path.startsWith('/') &&
    (route.methods === undefined || (Array.isArray(route.methods) && route.methods.every(nonEmptyString))))
  if (!valid) throw new KitOptionsError('allowedRoutes', "must be a list of { path: '/…', methods?: ['GET', …] }")
  return (value as AllowedRoute[]).map((route) => ({ path: route.path, methods: route.methods?.map((m) => m.toUpperCase()) }))
}

/** Checked now, so a docs mistake fails at registration naming "docs.<option>". */
function docs (value: unknown, mountPath: string): ResolvedOptions['docs'] {
  if (value === undefined) return undefined
  const fail = (option: string, problem: string) => new KitOptionsError(option === '' ? 'docs' : `docs.${option}`, problem)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('', 'must be an object such as { title: "My API", version: "1.0.0", path: "/api-docs" }')
  const { path, ...config } = value as SwaggerConfig & { path?: unknown }
  resolveSwaggerConfig(config, mountPath, fail)
  return { config, path: resolveDocsPath(path, fail) }
}

function liveQuery (value: unknown): { classNames: string[] } | undefined {
  if (value === undefined) return undefined
  const classNames = (value as { classNames?: unknown } | null)?.classNames
  if (typeof value !== 'object' || value === null || !Array.isArray(classNames) || classNames.length === 0 || !classNames.every(nonEmptyString)) {
    throw new KitOptionsError('liveQuery', "must be { classNames: ['ClassName', …] }")
  }
  return { classNames: classNames as string[] }
}

function redisURL (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  let url: URL | undefined
  try { url = new URL(value) } catch {}
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '') {
    throw new KitOptionsError('redis', `must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379 (from the option or REDIS_URL; got "${value.replace(/\/\/([^:/@]*):([^@]+)@/, '//$1:***@')}")`)
  }
  return value
}

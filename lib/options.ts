// kitPlugin's options, checked once at registration with messages that name the option.
// Each group's check lives beside the folder that owns it (docs/, model/,
// storage/, cluster/, metrics/, jobs/, access/cors-policy.ts, shutdown.ts) and
// is composed here. Checked here still: liveQuery, authRateLimit and the
// parseServerOptions rules belong to lib/host/, which imports this file (an
// upward import the layering refuses); allowedRoutes checks its verbs against
// routing's HTTP_METHODS, which lib/access/ may not import; and the kit's own
// switches (appId, masterKey, serverURL, mountPath, fastPaths, …) have no folder.
import type { AllowedRoute } from './access/restriction.js'
import { getKitConfig, normaliseMountPath } from './config.js'
import { resolveDocsOption, type SwaggerConfig } from './docs/options.js'
import { resolveSchemaOption, type SchemaOption } from './model/schema-option.js'
import { resolveCors, type CorsOptions, type ResolvedCors } from './access/cors-policy.js'
import { ipRangesProblem } from './access/credentials.js'
import { HTTP_METHODS } from './routing/options.js'
import type { Static } from '@sinclair/typebox'
import { Type } from './typebox.js'
import type { ParseServer } from 'parse-server'
import type Parse from 'parse/node'
import { JobsOptionsSchema, resolveJobsOptions, type JobsSettings } from './jobs/settings.js'
import { ShutdownOptionsSchema, resolveShutdown, type ShutdownSettings } from './shutdown.js'
import { dottedName, optionChecker, typed } from './option-schema.js'
import { RedisOptionsSchema, redisCommandTimeoutMs, redisURL, type RedisOptions } from './cluster/redis-options.js'
import { DocsOptionInvalidError, EnvInvalidError, OptionInvalidError, OptionUnknownError } from './errors.js'
import { checkDatabaseURI, databasePoolSize, databaseTimeout, POOL_SIZE_PROBLEM, TIMEOUT_PROBLEM } from './storage/database-options.js'
import { mountPrefix } from './mount-prefix.js'
import { unknownParseServerOption } from './parse/option-names.js'
import { closestPath } from './suggest.js'
import { resolveMetricsOption, type MetricsOptions, type ResolvedMetrics } from './metrics/options.js'

export type Declarations = Array<abstract new (...args: never[]) => unknown> | string | string[]

/** Parse Server's own options, from its types. */
type ParseServerOptions = Parameters<typeof ParseServer>[0]

/**
 * `parseServerOptions`: any of Parse Server's options, over the kit's defaults
 * (the kit itself sets appId, masterKey, serverURL, mountPath and the database
 * and files adapters). `cloud` may also be a function, as Parse accepts;
 * `schema` is the kit's schema option (model/schema-option.ts).
 */
export type ParseServerOverrides = Partial<Omit<ParseServerOptions, 'cloud' | 'schema' | 'accountLockout'>> & {
  cloud?: string | ((parse: typeof Parse) => unknown)
  /** false: no lockout, even with the auth routes open (they turn it on by default). */
  accountLockout?: ParseServerOptions['accountLockout'] | false
  schema?: SchemaOption
}

const declarations = typed<Declarations>(Type.Union([
  Type.String(),
  Type.Array(Type.Function([], Type.Unknown())),
  Type.Array(Type.String({ minLength: 1 }))
], { problem: 'must be a directory path, a list of directory paths, or a list of classes' }))
const text = Type.String({ minLength: 1, problem: 'must be a non-empty string' })
const flag = Type.Boolean({ problem: 'must be true or false' })

/** One more Parse route to open: a path (a trailing `*` opens everything below it) and, optionally, its verbs. Each verb is checked against HTTP_METHODS below. */
export const AllowedRouteSchema = Type.Object({
  path: Type.String({ pattern: '^/', problem: "must be a path starting with '/', e.g. '/files/*'" }),
  methods: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, problem: "must be a non-empty list of HTTP verbs, e.g. ['GET']" }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: "must be { path: '/…', methods?: ['GET', …] }" })

const count = (what: string) => Type.Integer({ minimum: 1, maximum: 1_000_000, problem: `must be a whole number of ${what} from 1 to 1000000` })

/** LiveQuery: the classes whose changes are pushed to subscribers (each listed once, checked below), and the bounds of its sockets. */
export const LiveQueryOptionsSchema = Type.Object({
  classNames: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', problem: 'must be a Parse class name' }), { minItems: 1, problem: "must be a non-empty list of class names, e.g. ['Message']" }),
  /** Largest message in bytes. Default: Fastify's bodyLimit (1 MiB by default). */
  maxPayload: Type.Optional(Type.Integer({ minimum: 1024, maximum: 100 * 1024 * 1024, problem: 'must be a whole number of bytes from 1024 to 104857600' })),
  /** Time from the upgrade to an accepted `connect` message, in ms. Default 10000. */
  connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000, problem: 'must be a whole number of milliseconds from 100 to 600000' })),
  /** Subscriptions one socket may hold. Default 100. */
  maxSubscriptionsPerConnection: Type.Optional(count('subscriptions')),
  /** Open sockets per client address. Default 100. */
  maxConnectionsPerAddress: Type.Optional(count('connections')),
  /** Accept `$regex` in a subscription's where. Default false: each pattern runs against every event of its class, on the event loop. */
  allowRegex: Type.Optional(Type.Boolean({ problem: 'must be true or false' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: "must be { classNames: ['ClassName', …] }" })

export interface AuthRateLimit {
  /** Attempts per username (or email) in each window. */
  max: number
  /** Attempts per client address in each window, all usernames together. */
  maxPerAddress: number
  windowMs: number
}

export const AUTH_RATE_LIMIT_DEFAULTS: AuthRateLimit = { max: 10, maxPerAddress: 100, windowMs: 60_000 }

/** Rate limits on the auth routes (host/auth-limits.ts). */
export const AuthRateLimitSchema = Type.Object({
  max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, problem: 'must be a whole number of attempts per username from 1 to 1000000' })),
  maxPerAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, problem: 'must be a whole number of attempts per address from 1 to 1000000' })),
  windowMs: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 86_400_000, problem: 'must be a whole number of milliseconds from 1000 to 86400000' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be false or { max?, maxPerAddress?, windowMs? }' })

/** kitPlugin's options: their type (KitOptions) and their shape check come from here. */
/** A client's find asks at most this many rows unless maxClientLimit says otherwise: Parse alone has no bound. */
export const DEFAULT_MAX_CLIENT_LIMIT = 1000

export const KitOptionsSchema = Type.Object({
  /** Parse application id; every request must carry it. Env APP_ID. */
  appId: Type.Optional(Type.String({ problem: 'must be a string', secret: true })),
  /** Parse master key; required. Env MASTER_KEY (or masterKey). */
  masterKey: Type.Optional(Type.String({ problem: 'must be a string', secret: true })),
  /** URL the Parse SDK uses to reach this server. Default http://127.0.0.1:{PORT|1337}{mountPath}. */
  serverURL: Type.Optional(text),
  /** postgres://, mongodb:// or mongodb+srv://. Env DATABASE_URI. Unset: embedded PostgreSQL (not in production). */
  databaseURI: Type.Optional(Type.String({ minLength: 1, problem: 'must be a non-empty string', secret: true })),
  /** Data directory of the embedded PostgreSQL. Default .data/postgres. */
  dataDir: Type.Optional(text),
  /** Embedded PostgreSQL without fsync (tests). */
  ephemeralDatabase: Type.Optional(flag),
  /** Seconds a database call on a request path (connection wait and query together) may take before it answers 503. Env DATABASE_TIMEOUT. Default 10. */
  databaseTimeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600, problem: TIMEOUT_PROBLEM })),
  /** Connections in this instance's database pool (PostgreSQL: Parse's pg pool `max`; MongoDB: the driver's maxPoolSize). Env DATABASE_POOL_SIZE. Default: the URI's own setting, else 10 on PostgreSQL and 100 on MongoDB. */
  databasePoolSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, problem: POOL_SIZE_PROBLEM })),
  /** Where Parse and the declared endpoints live. Default from configureKit / env mountPath, then /parse. */
  mountPath: Type.Optional(text),
  /** Open login, logout, sign-up and session routes (spec table). Default false. */
  allowAuthRoutes: Type.Optional(flag),
  /** Rate limits on login, sign-up, /requestPasswordReset and /verificationEmailRequest; false: none. Default { max: 10, maxPerAddress: 100, windowMs: 60000 }. */
  authRateLimit: Type.Optional(typed<false | Partial<AuthRateLimit>>(Type.Unknown())),
  /** More Parse routes to open, e.g. [{ path: '/files/*', methods: ['POST'] }]. */
  allowedRoutes: Type.Optional(typed<AllowedRoute[]>(Type.Array(AllowedRouteSchema, { problem: "must be a list of { path: '/…', methods?: ['GET', …] }" }))),
  /** Role that may manage _Role. Default 'SuperAdmin'. */
  adminRole: Type.Optional(text),
  /** Pointer classes fromParams leaves alone. Default ['IMG', 'File']. */
  excludedPointerClasses: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { problem: 'must be a list of strings' })),
  /** Model classes, or directories whose files declare them. */
  models: Type.Optional(declarations),
  /** Handler classes, or directories whose files declare them. */
  functions: Type.Optional(declarations),
  /** Passed to Parse Server over the kit's defaults. */
  parseServerOptions: Type.Optional(typed<ParseServerOverrides>(Type.Record(Type.String(), Type.Unknown(), { problem: 'must be an object' }))),
  /** Schema options ({ lockSchemas, strict, … }) or a whole createSchemaConfig(…) result. Default createSchemaConfig(). Checked by its own schema (model/schema-option.ts). */
  schema: Type.Optional(typed<SchemaOption>(Type.Unknown())),
  /** Create the declared indexes and database constraints once listening. Default true. */
  indexes: Type.Optional(flag),
  /** Push changes of these classes to LiveQuery subscribers (WebSocket on the same port). */
  liveQuery: Type.Optional(LiveQueryOptionsSchema),
  /** API documentation (setupSwagger's configuration), served at `path` (default /api-docs). Unset: no docs. Checked by its own schema (docs/options.ts). */
  docs: Type.Optional(typed<SwaggerConfig & { path?: string }>(Type.Unknown())),
  /** redis:// or rediss:// URL (or { url, commandTimeoutMs }): several instances share rate limits, caches and LiveQuery events. Env REDIS_URL. */
  redis: Type.Optional(typed<string | RedisOptions>(Type.Unknown())),
  /** Background jobs and schedules (@Job, @Cron, Parse Dashboard's schedules): shutdown grace, polling, leases, the TTL and expired-session sweeps. */
  jobs: Type.Optional(JobsOptionsSchema),
  /** Close (SIGTERM): how long the server keeps serving with readiness at 503 before it stops listening. Default { drainDelayMs: 5000 } in production, 0 otherwise; env SHUTDOWN_DRAIN_MS. */
  shutdown: Type.Optional(ShutdownOptionsSchema),
  /** Prometheus metrics: true (at /metrics) or { path, token, defaultMetrics }. Off by default. Checked by its own schema below. */
  metrics: Type.Optional(typed<boolean | MetricsOptions>(Type.Unknown())),
  /** OpenTelemetry spans (through @fastify/otel) for every request, each declared call, its transaction. Off by default; the application registers the SDK and exporter. */
  tracing: Type.Optional(flag),
  /** false: the kit runs on Parse's own read and write chains only (no fast path of lib/parse/), to bisect or ship a Parse upgrade. Env FPK_FAST_PATHS. Default true. */
  fastPaths: Type.Optional(flag),
  /** Header every answer carries the request id in (Fastify's request.id); default 'x-request-id'; false: none. kitServerOptions({ requestIdHeader }) takes the incoming id from the same header. */
  requestIdHeader: Type.Optional(Type.Union([Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), Type.Literal(false)], { problem: "must be a header name such as 'x-request-id', or false" })),
  /** Cross-origin access under the mount path. Default: any origin, as Parse Server; false: none from the kit. An object is checked by its own schema (access/cors-policy.ts). */
  cors: Type.Optional(typed<boolean | CorsOptions>(Type.Unknown())),
  /** Seconds without a request, after serving some, before one compacting garbage collection gives the load's heap back (host/idle-collection.ts). Default false: V8 decides alone. */
  idleCollection: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 86_400 }), Type.Literal(false)], { problem: 'must be a whole number of seconds from 1 to 86400, or false' })),
  /** The most rows a find on Parse's REST routes may ask without the master key (its `limit`); more is refused 400. Default 1000; false: no bound, as on Parse alone. */
  maxClientLimit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Literal(false)], { problem: 'must be a whole number of rows from 1 to 2147483647, or false' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be an object' })

export type KitOptions = Static<typeof KitOptionsSchema>

const checkShape = optionChecker(KitOptionsSchema)
const checkAuthRateLimit = optionChecker(AuthRateLimitSchema)
const checkRedisObject = optionChecker(RedisOptionsSchema)

/** An option that is a value or an object: the object is checked by its own schema, so a message names the key at fault. */
function checkEither (option: string, value: unknown, simple: (value: unknown) => boolean, check: (value: unknown) => ReturnType<typeof checkShape>, problem: string, secret = false): void {
  if (value === undefined || simple(value)) return
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError(option, secret ? problem : `${problem} (got ${JSON.stringify(value)})`)
  }
  const shape = check(value)
  if (shape) throw optionError(shape.path.length === 0 ? option : `${option}.${dottedName(shape.path)}`, shape.problem, shape.kind)
}

export interface ResolvedOptions {
  appId: string
  masterKey: string
  serverURL: string
  databaseURI: string | undefined
  dataDir: string | undefined
  ephemeralDatabase: boolean
  databaseTimeout: number | undefined
  /** Unset: the URI's own setting, else the driver's default (10 on PostgreSQL, 100 on MongoDB). */
  databasePoolSize: number | undefined
  mountPath: string
  allowAuthRoutes: boolean
  /** false: no limits on the auth routes. */
  authRateLimit: AuthRateLimit | false
  allowedRoutes: AllowedRoute[]
  adminRole: string
  excludedPointerClasses: string[]
  models: Declarations
  functions: Declarations
  parseServerOptions: ParseServerOverrides
  schema: SchemaOption | undefined
  indexes: boolean
  liveQuery: ResolvedLiveQuery | undefined
  docs: { config: SwaggerConfig, path: string } | undefined
  redis: string | undefined
  /** The bound of one Redis call on a request path (redis.commandTimeoutMs), in ms. */
  redisCommandTimeoutMs: number
  cors: ResolvedCors | false
  jobs: JobsSettings
  shutdown: ShutdownSettings
  metrics: ResolvedMetrics | undefined
  tracing: boolean
  /** false: Parse's own read and write chains only. */
  fastPaths: boolean
  requestIdHeader: string | false
  /** false: no collection when idle. */
  idleCollection: { afterSeconds: number } | false
  /** false: a client's find may ask any number of rows. */
  maxClientLimit: number | false
  production: boolean
}

/** kitPlugin option "<option>": <problem>, with the stable code of its kind. */
function optionError (option: string, problem: string, kind: 'unknown' | 'invalid' = 'invalid'): Error {
  const message = `kitPlugin option "${option}": ${problem}`
  return kind === 'unknown' ? new OptionUnknownError(message) : new OptionInvalidError(message)
}

/** The metrics route beside the docs' routes: a path no request can reach, or one the docs already serve, fails only when Fastify registers the second route (FST_ERR_DUPLICATED_ROUTE, naming neither option). */
function checkMetricsPath (metrics: ResolvedMetrics | undefined, docs: ResolvedOptions['docs']): ResolvedMetrics | undefined {
  if (!metrics) return metrics
  if (!/^[A-Za-z0-9._~/-]+$/.test(metrics.path)) throw optionError('metrics.path', `must be a path of letters, digits and "-", ".", "_", "~", "/" (got ${JSON.stringify(metrics.path)})`)
  if (docs && (metrics.path === docs.path || metrics.path.startsWith(`${docs.path === '/' ? '' : docs.path}/`))) {
    throw optionError('metrics.path', `"${metrics.path}" is served by the API documentation (docs.path "${docs.path}"): choose another, e.g. '/metrics'`)
  }
  return metrics
}

export function resolveOptions (input: KitOptions = {}): ResolvedOptions {
  const shape = checkShape(input)
  if (shape) throw optionError(dottedName(shape.path), shape.problem, shape.kind)
  checkEither('authRateLimit', input.authRateLimit, (value) => value === false, checkAuthRateLimit, 'must be false or { max?, maxPerAddress?, windowMs? }')
  checkEither('redis', input.redis, (value) => typeof value === 'string' && value !== '', checkRedisObject, "must be a redis:// URL or { url: 'redis://…', commandTimeoutMs?: 1000 }", true)
  const kit = getKitConfig()
  const appId = input.appId ?? process.env.APP_ID
  const masterKey = input.masterKey ?? kit.masterKey
  if (!nonEmptyString(appId)) throw optionError('appId', 'required: pass appId or set APP_ID')
  if (!nonEmptyString(masterKey)) throw optionError('masterKey', 'required: pass masterKey or set MASTER_KEY. Without it the master key would be refused with no explanation.')
  if (masterKey === appId) throw optionError('masterKey', 'must differ from appId')
  const mountPath = normaliseMountPath(input.mountPath ?? kit.mountPath)
  // A space, "?", "#", "%" or a route pattern's ":"/"*" makes a mount no request can reach (or one Fastify reads as a parameter).
  if (!/^[A-Za-z0-9._~/-]+$/.test(mountPath)) throw optionError('mountPath', `must be a path of letters, digits and "-", ".", "_", "~", "/" (the option, configureKit or MOUNT_PATH; got ${JSON.stringify(mountPath)})`)
  const serverURL = input.serverURL ?? `http://127.0.0.1:${portFromEnv(process.env.PORT)}${mountPrefix(mountPath)}`
  if (!/^https?:\/\/[^/?#]/.test(serverURL) || !URL.canParse(serverURL)) throw optionError('serverURL', `must be an http(s) URL with a host and a port from 1 to 65535 (got "${serverURL}")`)
  const databaseURI = input.databaseURI ?? (process.env.DATABASE_URI || undefined)
  const allowAuthRoutes = input.allowAuthRoutes ?? kit.allowAuthRoutes
  const production = process.env.NODE_ENV === 'production'
  checkDatabaseURI(databaseURI, production, optionError)
  const uriProblem = databaseURI === undefined ? undefined : connectionStringProblem(databaseURI)
  if (uriProblem) throw optionError('databaseURI', `${uriProblem} (from the option or DATABASE_URI)`)
  const docs = resolveDocsOption(input.docs, mountPath)
  // Swagger UI's routes and Parse's mount on one path: the boot waited out Fastify's plugin timeout in fastifySwagger.
  if (docs && docs.path === mountPath) throw new DocsOptionInvalidError(`kitPlugin option "docs.path": "${docs.path}" is the mount path, where Parse Server answers: choose another, e.g. '/api-docs' (a path under the mount works)`)
  return {
    appId,
    masterKey,
    serverURL,
    databaseURI,
    dataDir: input.dataDir,
    ephemeralDatabase: input.ephemeralDatabase ?? false,
    databaseTimeout: databaseTimeout(input.databaseTimeout ?? process.env.DATABASE_TIMEOUT, optionError),
    databasePoolSize: databasePoolSize(input.databasePoolSize ?? process.env.DATABASE_POOL_SIZE, optionError),
    mountPath,
    allowAuthRoutes,
    authRateLimit: input.authRateLimit === false ? false : { ...AUTH_RATE_LIMIT_DEFAULTS, ...input.authRateLimit },
    allowedRoutes: allowedRoutes(input.allowedRoutes ?? []),
    adminRole: input.adminRole ?? kit.adminRole,
    excludedPointerClasses: input.excludedPointerClasses ?? kit.excludedPointerClasses,
    models: input.models ?? [],
    functions: input.functions ?? [],
    parseServerOptions: withAccountLockout(withoutParseCors(parseServerOptions(input)), allowAuthRoutes),
    schema: resolveSchemaOption(input.schema, input.parseServerOptions?.schema, optionError),
    indexes: input.indexes ?? true,
    liveQuery: liveQuery(input.liveQuery),
    docs,
    redis: redisURL(input.redis, optionError),
    redisCommandTimeoutMs: redisCommandTimeoutMs(input.redis),
    cors: resolveCors(input.cors, (option, problem, kind) => optionError(option === '' ? 'cors' : `cors.${option}`, problem, kind)),
    jobs: resolveJobsOptions(input.jobs),
    shutdown: resolveShutdown(input.shutdown, production, (problem) => optionError('shutdown.drainDelayMs', problem)),
    metrics: checkMetricsPath(resolveMetricsOption(input.metrics, mountPath, optionError), docs),
    tracing: input.tracing ?? false,
    fastPaths: input.fastPaths ?? fastPathsFromEnv(process.env.FPK_FAST_PATHS),
    requestIdHeader: typeof input.requestIdHeader === 'string' ? input.requestIdHeader.toLowerCase() : input.requestIdHeader ?? 'x-request-id',
    idleCollection: input.idleCollection === undefined || input.idleCollection === false ? false : { afterSeconds: input.idleCollection },
    maxClientLimit: input.maxClientLimit ?? DEFAULT_MAX_CLIENT_LIMIT,
    production
  }
}

/** PORT, which the default serverURL is built from: the drivers and Parse would fail on a bad one at the first request, not here. */
function portFromEnv (value: string | undefined): string {
  if (value === undefined || value === '') return '1337'
  if (!/^\d{1,5}$/.test(value.trim()) || Number(value) > 65535) throw new EnvInvalidError(`PORT must be a port number from 0 to 65535 (got ${JSON.stringify(value)}); the default serverURL is built from it`)
  return value.trim()
}

/**
 * What a connection string's authority may not hold, whichever database it
 * names (RFC 3986): the drivers refuse these with a bare TypeError ("Invalid
 * URL") or MongoParseError, or read another password than the one meant. The
 * URI is not echoed: with an unescaped "@" the redaction would miss part of the password.
 */
export function connectionStringProblem (uri: string): string | undefined {
  const start = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(uri)?.[0].length ?? 0
  const authority = /^[^/?#]*/.exec(uri.slice(start))![0]
  // An "@" after the authority: a "/", "?" or "#" in the password ended it early.
  const cut = uri.slice(start + authority.length).includes('@')
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? '' : authority.slice(0, at)
  if (userinfo.includes('@')) return 'the user or password holds an "@": write it as %40'
  if (/%(?![0-9A-Fa-f]{2})/.test(userinfo)) return 'the user or password holds a "%" that starts no %XX escape: write it as %25'
  for (const host of authority.slice(at + 1).split(',')) {
    const port = /^(?:\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(host)
    if (!port) return `host "${host}" is not a host name, an IPv4 address or a bracketed IPv6 address`
    const number = port[1]
    if (number !== undefined && number !== '' && !(/^\d{1,5}$/.test(number) && Number(number) >= 1 && Number(number) <= 65535)) {
      return `port "${number}" is not a number from 1 to 65535${cut ? ' (a "/", "?" or "#" in the password must be written %2F, %3F, %23)' : ''}`
    }
  }
  return undefined
}

/** FPK_FAST_PATHS: 'false' or 'true' (unset: true); anything else is a mistake, refused at boot. */
function fastPathsFromEnv (value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'true') return true
  if (value === 'false') return false
  throw optionError('fastPaths', `FPK_FAST_PATHS must be true or false (got "${value}")`)
}

/** Verbs are compared upper-case; one no route answers would open nothing, silently. */
function allowedRoutes (routes: AllowedRoute[]): AllowedRoute[] {
  return routes.map((route, index) => {
    const methods = route.methods?.map((method) => method.toUpperCase())
    const unknown = methods?.find((method) => !(HTTP_METHODS as readonly string[]).includes(method))
    if (unknown !== undefined) throw optionError(`allowedRoutes[${index}].methods`, `has "${unknown}"; use ${HTTP_METHODS.join(', ')}`)
    return { path: route.path, methods }
  })
}

export const LIVE_QUERY_DEFAULTS = { connectTimeoutMs: 10_000, maxSubscriptionsPerConnection: 100, maxConnectionsPerAddress: 100, allowRegex: false }

export interface ResolvedLiveQuery {
  classNames: string[]
  /** Unset: Fastify's bodyLimit. */
  maxPayload: number | undefined
  connectTimeoutMs: number
  maxSubscriptionsPerConnection: number
  maxConnectionsPerAddress: number
  allowRegex: boolean
}

function liveQuery (value: KitOptions['liveQuery']): ResolvedOptions['liveQuery'] {
  if (value === undefined) return undefined
  const repeated = value.classNames.find((name, index) => value.classNames.indexOf(name) !== index)
  if (repeated !== undefined) throw optionError('liveQuery.classNames', `lists "${repeated}" twice`)
  return { ...LIVE_QUERY_DEFAULTS, ...value, maxPayload: value.maxPayload }
}

function parseServerOptions (input: KitOptions): Record<string, unknown> {
  const options = input.parseServerOptions ?? {}
  // Parse logs a misspelt key and boots on its default (a session length of a year for `sessionLenght`).
  const unknown = unknownParseServerOption(options)
  if (unknown) {
    const closest = closestPath(unknown.key, unknown.known)
    throw optionError(`parseServerOptions.${unknown.path}`, `is not a Parse Server option${closest === undefined ? '' : `; did you mean "${closest}"?`} (Parse Server's options: https://parseplatform.org/parse-server/api/master/ParseServerOptions.html)`, 'unknown')
  }
  const problem = options.masterKeyIps === undefined ? undefined : ipRangesProblem(options.masterKeyIps)
  if (problem) throw optionError('parseServerOptions.masterKeyIps', problem)
  // Parse applies its trustProxy only when it runs its own server; hosted here, Fastify's decides the caller's address.
  const trustProxy = options.trustProxy
  if (!(trustProxy === undefined || trustProxy === false || (Array.isArray(trustProxy) && trustProxy.length === 0))) {
    throw optionError('parseServerOptions.trustProxy', 'has no effect when the kit hosts Parse Server: the caller\'s address (masterKeyIps, rate limits, ' +
      'request.ip) is Fastify\'s request.ip. Remove it and set Fastify\'s own trustProxy option instead (Fastify({ trustProxy: ... })).')
  }
  if (options.cloud !== undefined && typeof options.cloud !== 'function' && typeof options.cloud !== 'string') {
    throw optionError('parseServerOptions.cloud', 'must be a function or a file path')
  }
  return options
}

/** Parse's accountLockout while the auth routes are open: 10 failed logins lock an account for 5 minutes. */
export const ACCOUNT_LOCKOUT_DEFAULTS = { threshold: 10, duration: 5 }

/** With the auth routes open, Parse's accountLockout is on unless parseServerOptions.accountLockout says otherwise (false: off). */
function withAccountLockout (options: Record<string, unknown>, allowAuthRoutes: boolean): Record<string, unknown> {
  const given = options.accountLockout
  if (!allowAuthRoutes && given === undefined) return options
  if (given === undefined) return { ...options, accountLockout: { ...ACCOUNT_LOCKOUT_DEFAULTS } }
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) return { ...options, accountLockout: { ...ACCOUNT_LOCKOUT_DEFAULTS, ...given } }
  return options
}

/** Parse's own CORS settings would be silently overridden by the kit's policy: say so at boot. */
function withoutParseCors (options: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['allowOrigin', 'allowHeaders']) {
    if (key in options) throw optionError(`parseServerOptions.${key}`, 'has no effect: the kit answers CORS for Parse\'s routes too. Use the cors option, e.g. cors: { origin: [\'https://app.example.com\'], allowedHeaders: [\'X-Custom\'] }')
  }
  return options
}

function nonEmptyString (value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

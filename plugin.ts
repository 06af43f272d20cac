// kitPlugin: hosts Parse Server inside Fastify. The boot order lives here and
// only here, so an application cannot get it wrong.
// First: the stand-ins of what the kit loads at first use must be in place before parse/node and Parse Server load (lib/index.ts starts here too).
import './lib/parse/defer-modules.js'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { configureKit } from './lib/config.js'
import { loadDeclarations } from './lib/loader.js'
import { resolveOptions, type KitOptions, type ResolvedOptions } from './lib/options.js'
import type { DatabaseKind } from './lib/storage/database.js'
import type { ParseHost } from './lib/host/parse-server.js'
import type { LiveQueryHost } from './lib/host/live-query.js'
import type { Cluster } from './lib/cluster/index.js'
import { claimProcess, currentKitState, type KitState } from './lib/kit-state.js'
import { readFastPathsFrom } from './lib/parse/fast-path-switch.js'
import { roleCachePart } from './lib/access/role-cache.js'
import { functionsServed, type DeclaredFunction } from './lib/routing/registry.js'
import { transactionalDeclared, useTransactionalAdapter } from './lib/storage/transaction.js'
import type { JobsHost } from './lib/jobs/start.js'
import type { QueueHost } from './lib/jobs/queue.js'
import { AlreadyRegisteredError, OptionInvalidError } from './lib/errors.js'
import type { KitMetrics } from './lib/metrics/prometheus.js'
import { tracingPart } from './lib/tracing/spans.js'
import { closeIdleSocketsUntilClosed, drainPause, shutdownBudgetMs } from './lib/shutdown.js'
import { mountPrefix } from './lib/mount-prefix.js'
import { closeOpened, type Opened } from './lib/host/teardown.js'

// Everything else the steps run (Parse Server, the database, routes, jobs) is
// loaded by boot, after the options and declarations have passed (lib/boot-modules.ts).
type BootModules = typeof import('./lib/boot-modules.js')

export type { KitOptions } from './lib/options.js'

export interface KitRuntime {
  parse: ParseHost
  /** The options as the kit resolved them (defaults and environment applied). */
  options: ResolvedOptions
  database: { kind: DatabaseKind, displayURI: string, embedded: boolean, dataDir?: string }
  functions: DeclaredFunction[]
  /**
   * Settles once the declared indexes and database constraints have been applied
   * after listen (a failure is logged, never thrown); at once with `indexes: false`,
   * and at close when the server never listened.
   */
  indexesApplied: Promise<void>
  /**
   * The longest this kit's close takes (the drain and the jobs' grace side by
   * side, then a margin for in-flight requests, Parse and the database): give it
   * to the server's force-exit timer, e.g. close-with-grace's `delay`.
   */
  shutdownBudgetMs: number
  /**
   * Everything this registration keeps while it runs (settings, role cache,
   * transactions, the open database, the schema lock), dropped at close.
   * The kit's own parts read it; applications use the exported helpers.
   */
  state: KitState
}

declare module 'fastify' {
  interface FastifyInstance {
    kit: KitRuntime
  }
}

async function kit (fastify: FastifyInstance, input: KitOptions): Promise<void> {
  // 1. Options, checked before anything starts.
  const options = resolveOptions(input)
  // One kit per process (Parse keeps process-wide state): its state is claimed
  // here, and dropped at close or when boot fails.
  const { state, release } = claimProcess(options.appId, (message) => new AlreadyRegisteredError(message))
  try {
    await boot(fastify, options, state, release)
  } catch (error) {
    release()
    throw error
  }
}

// What a boot has opened and learned so far: each step adds to it, and the
// one teardown (closeOpened) reads it at the moment it runs.
interface Booting {
  fastify: FastifyInstance
  options: ResolvedOptions
  state: KitState
  directAccess: boolean
  database: KitDatabase
  /** Parse Server options as the application wrote them, less cloud and schema (the kit's own steps add to them). */
  overrides: Record<string, unknown>
  userCloud: unknown
  parse?: ParseHost
  liveQuery?: LiveQueryHost
  cluster?: Cluster
  jobs?: JobsHost
  queue?: QueueHost
  metrics?: KitMetrics
  functions: DeclaredFunction[]
  reconcileIndexes: boolean
  /** Set when close begins: readiness answers 503 from then on (see drainOnClose). */
  drain: { on: boolean }
  /** The steps' own modules, loaded once the options and declarations have passed. */
  modules: BootModules
  stopJobs: () => Promise<void>
  close: () => Promise<void>
}

type KitDatabase = Awaited<ReturnType<BootModules['openDatabase']>>

async function boot (fastify: FastifyInstance, options: ResolvedOptions, state: KitState, release: () => void): Promise<void> {
  configure(options, state)
  const directAccess = await loadHandlers(options)
  const modules = await import('./lib/boot-modules.js')
  const database = await openKitDatabase(fastify, options, state, modules)
  const b = booting(fastify, options, state, directAccess, database, modules)
  try {
    // Queued jobs run on PostgreSQL only: refused before anything else starts.
    if (options.jobs.queue) modules.refuseQueueOn(database)
    await openRedis(b)
    await startParse(b)
    await mountRoutes(b)
    if (options.docs) await modules.setupSwagger(fastify, options.docs.config, options.docs.path)
    await startRealtime(b)
    await startWorkers(b)
  } catch (error) {
    // The boot's own error is the one to report; a step of the teardown that fails too changes nothing.
    await b.close().catch(() => {})
    throw error
  }
  const indexes = decorateKit(b)
  const closing = { on: false }
  applyIndexesOnListen(b, indexes.done, closing)
  drainOnClose(b, closing)
  closeOnClose(b, indexes.done, closing, release)
}

// 1. The kit's settings, read by every part while this kit runs.
function configure (options: ResolvedOptions, state: KitState): void {
  // Every fast path of lib/parse/ reads this kit's `fastPaths` while this kit runs.
  readFastPathsFrom(() => currentKitState() !== state || options.fastPaths)
  configureKit({
    mountPath: options.mountPath,
    masterKey: options.masterKey,
    adminRole: options.adminRole,
    allowAuthRoutes: options.allowAuthRoutes,
    excludedPointerClasses: options.excludedPointerClasses
  })
}

// 2. Models and handlers: importing them runs their decorators. Returns Parse's directAccess.
async function loadHandlers (options: ResolvedOptions): Promise<boolean> {
  await loadDeclarations(options.models)
  await loadDeclarations(options.functions)
  // Checked against the options once the handlers are known, before anything starts.
  const directAccess = options.parseServerOptions.directAccess !== false
  if (!directAccess && transactionalDeclared()) {
    throw new OptionInvalidError('kitPlugin option "parseServerOptions.directAccess": @Transactional needs Parse Server option directAccess: true (saves made over HTTP cannot join a transaction). Remove directAccess: false from parseServerOptions.')
  }
  return directAccess
}

// 3. The database (embedded PostgreSQL when none is configured).
async function openKitDatabase (fastify: FastifyInstance, options: ResolvedOptions, state: KitState, { openDatabase }: BootModules): Promise<KitDatabase> {
  const database = await openDatabase({
    databaseURI: options.databaseURI,
    dataDir: options.dataDir,
    ephemeral: options.ephemeralDatabase,
    timeoutSeconds: options.databaseTimeout,
    poolSize: options.databasePoolSize,
    production: options.production,
    onNotice: (line) => fastify.log.warn(line),
    schemaHooks: options.redis !== undefined
  }, state)
  fastify.log.info(`[database] ${database.kind} pool: ${database.poolSize} connections`)
  return database
}

// From here on, what the boot opens is closed by one teardown (lib/host/teardown.ts),
// for a boot that fails part-way and for the server's close alike.
function booting (fastify: FastifyInstance, options: ResolvedOptions, state: KitState, directAccess: boolean, database: KitDatabase, modules: BootModules): Booting {
  const { lockSchemas } = modules
  // The schema (the kit's option or parseServerOptions.schema) is already in options.schema.
  const { cloud: userCloud, schema: _inOptionsSchema, ...overrides } = options.parseServerOptions
  // Workers stop taking jobs, the runs going on get the jobs' grace, then the queue stops (runs still active are handed back).
  let jobsStopped: Promise<void> | undefined
  const b: Booting = {
    fastify,
    options,
    state,
    directAccess,
    database,
    overrides,
    userCloud,
    functions: [],
    reconcileIndexes: false,
    drain: { on: false },
    modules,
    stopJobs: () => {
      jobsStopped ??= (async () => {
        await b.queue?.pause()
        await b.jobs?.stop()
        await b.queue?.stop()
      })()
      return jobsStopped
    },
    close: async () => {
      lockSchemas(state, false)
      functionsServed(state, false)
      useTransactionalAdapter(state, undefined)
      b.queue?.release()
      const opened: Opened = { database, cluster: b.cluster, parse: b.parse, metrics: b.metrics, liveQuery: b.liveQuery, stopJobs: b.stopJobs }
      await closeOpened(opened)
    }
  }
  return b
}

// 3b. Cluster mode: Redis for rate limits, role cache evictions, Parse's cache and LiveQuery.
async function openRedis (b: Booting): Promise<void> {
  const { fastify, options, state, overrides } = b
  if (options.redis) {
    // Loaded only in cluster mode: a single instance never needs the Redis client.
    const { openCluster } = await import('./lib/cluster/index.js')
    const cluster = b.cluster = await openCluster({
      url: options.redis,
      appId: options.appId,
      log: fastify.log,
      roleCache: state.get(roleCachePart),
      cacheTtlMs: typeof overrides.cacheTTL === 'number' ? overrides.cacheTTL : undefined,
      commandTimeoutMs: options.redisCommandTimeoutMs
    })
    overrides.cacheAdapter ??= cluster.cacheAdapter
    fastify.log.info(`[redis] cluster mode on ${cluster.displayURL}: rate limits, role cache evictions, Parse's cache and LiveQuery events are shared`)
  } else if (options.production) {
    fastify.log.warn('No redis configured: rate limits, the role cache and Parse\'s session cache are per process, and LiveQuery events stay in this process. Set REDIS_URL to run several instances.')
  }
}

// 4. Parse Server on that database: the declared schema (Defined Schemas),
//    then the declared triggers and the application's own cloud code.
//    The schema is checked first and verified after Parse's migration: a failed one fails boot.
async function startParse (b: Booting): Promise<void> {
  const { fastify, options, state, database, overrides, cluster } = b
  const { prepareSchemaGeneration, schemaConfigFrom, startParseServer, composeCloud, forgetRolesOnChange, lockSchemas, boundClientFields } = b.modules
  if (options.liveQuery) {
    overrides.liveQuery = {
      ...(overrides.liveQuery as object | undefined),
      classNames: options.liveQuery.classNames,
      ...(cluster ? { pubSubAdapter: cluster.pubSubAdapter } : {})
    }
  }
  // A boot whose declarations are older than the database's schema generation changes nothing (no index or constraint either).
  // Instances booting together on one database take the schema step and Parse's initialization one at a time.
  const releaseSchemaLock = await database.holdSchemaLock(() => fastify.log.info('[schema] another instance is starting on this database: waiting for its schema step and Parse\'s initialization to end'))
  const schema = await prepareSchemaGeneration(schemaConfigFrom(options.schema, options.adminRole), database, fastify.log)
  b.reconcileIndexes = options.indexes && !schema.behind
  b.parse = await startParseServer({
    appId: options.appId,
    masterKey: options.masterKey,
    serverURL: options.serverURL,
    mountPath: options.mountPath,
    databaseAdapter: database.adapter,
    filesAdapter: database.filesAdapter,
    schema: schema.config,
    // A _Role change drops Parse's cached role lists: on every instance with `redis`, else in this process.
    cloud: composeCloud(b.userCloud as Parameters<typeof composeCloud>[0], cluster
      ? () => cluster.registerRoleTriggers(options.appId)
      : () => forgetRolesOnChange(options.appId)),
    log: fastify.log,
    overrides
  })
  await schema.verify()
  // Before the lock is released: another instance's Parse start redefines what this changes.
  await database.afterParseStart()
  await releaseSchemaLock()
  lockSchemas(state, schema.config.lockSchemas === true)
  boundClientFields(state, schema.config.maxClientFields)
  useTransactionalAdapter(state, database.adapter, { directAccess: b.directAccess })
}

// 5. Request ids, the cross-origin policy, observability, Parse's REST surface and
//    the declared functions' routes, in the order their hooks must run.
async function mountRoutes (b: Booting): Promise<void> {
  const { fastify, options } = b
  const { registerRequestIds, registerCors, exposeParseHeaders, collectRoutes } = b.modules
  // Request correlation: every answer carries request.id, and Parse's lines for a request its reqId.
  registerRequestIds(fastify, options.requestIdHeader)
  // The heap a busy period grew, given back once the server has gone quiet (off unless asked).
  if (options.idleCollection) b.modules.collectWhenIdle(fastify, { ...options.idleCollection, mountPath: options.mountPath, metricsPath: options.metrics?.path })
  // The cross-origin policy for everything under the mount path: its preflight
  // answers come before any app id check.
  if (options.cors) await registerCors(fastify, options.cors, options.mountPath)
  exposeParseHeaders(fastify, options.mountPath)
  // The API document's route collector comes first (@fastify/swagger sees only
  // routes added after it); the kit's plumbing routes stay out of the document.
  const documented = await collectRoutes(fastify)
  await registerObservability(b, documented)
  await mountParseRoutes(b, documented)
  await mountDeclaredFunctions(b, documented)
}

type DocumentedRoutes = Awaited<ReturnType<BootModules['collectRoutes']>>

// 5b. Observability, before the routes it watches: request spans (@fastify/otel) and the
//     kit's own, and the metrics endpoint with its per-function response hook.
async function registerObservability (b: Booting, documented: DocumentedRoutes): Promise<void> {
  const { fastify, options, state, database } = b
  if (options.tracing) {
    await b.modules.registerTracing(fastify, { metricsPath: options.metrics?.path })
    state.get(tracingPart).on = true
  }
  if (options.metrics) {
    // Loaded only with metrics on: prom-client is about 3 MB resident that a kit without metrics need not hold.
    const { openMetrics } = await import('./lib/metrics/prometheus.js')
    const opened = openMetrics(state, options.metrics, {
      databaseReachable: () => database.availability.reachable,
      liveQuery: options.liveQuery ? () => b.liveQuery?.stats() : undefined,
      redis: b.cluster !== undefined
    })
    b.metrics = opened
    await documented.kitRoutes(() => opened.register(fastify))
    if (options.production && !options.metrics.token) {
      fastify.log.warn(`[metrics] ${options.metrics.path} answers anyone who reaches this port: set METRICS_TOKEN, or keep the path off the public proxy`)
    }
  }
}

// 5c. Parse's REST surface behind the app id check and route restriction.
async function mountParseRoutes (b: Booting, documented: DocumentedRoutes): Promise<void> {
  const { fastify, options, database, cluster, drain } = b
  const { mountParse, authLimiter } = b.modules
  await documented.kitRoutes(() => mountParse(fastify, {
    host: b.parse!,
    mountPath: options.mountPath,
    appId: options.appId,
    masterKey: options.masterKey,
    policy: { allowAuthRoutes: options.allowAuthRoutes, allowedRoutes: options.allowedRoutes },
    maxClientLimit: options.maxClientLimit,
    availability: database.availability,
    draining: () => drain.on,
    authLimiter: options.authRateLimit === false ? undefined : authLimiter(options.authRateLimit, cluster?.rateLimitStore)
  }))
}

// 6. One Fastify route per declared function (served without Parse's Express pipeline).
async function mountDeclaredFunctions (b: Booting, documented: DocumentedRoutes): Promise<void> {
  const { fastify, options, overrides, state } = b
  const { registerDeclaredRoutes, masterKeyIpsOf } = b.modules
  b.functions = await documented.kitRoutes(() => registerDeclaredRoutes(fastify, {
    mountPath: options.mountPath,
    appId: options.appId,
    masterKey: options.masterKey,
    masterKeyIps: masterKeyIpsOf(b.parse!),
    restApiKey: typeof overrides.restAPIKey === 'string' ? overrides.restAPIKey : undefined,
    clientKeys: {
      clientKey: typeof overrides.clientKey === 'string' ? overrides.clientKey : undefined,
      javascriptKey: typeof overrides.javascriptKey === 'string' ? overrides.javascriptKey : undefined,
      dotNetKey: typeof overrides.dotNetKey === 'string' ? overrides.dotNetKey : undefined
    },
    rateLimitStore: b.cluster?.rateLimitStore
  }))
  functionsServed(state, true)
}

// 7 is the API documentation (setupSwagger, in boot). 8. LiveQuery subscriptions over WebSocket, on the same HTTP server.
async function startRealtime (b: Booting): Promise<void> {
  const { fastify, options, overrides } = b
  if (!options.liveQuery) return
  // Loaded only with LiveQuery on: its WebSocket server (ws) and socket bounds are code a kit without it need not hold.
  const { startLiveQuery } = await import('./lib/host/live-query.js')
  b.liveQuery = await startLiveQuery(fastify, {
    appId: options.appId,
    masterKey: options.masterKey,
    serverURL: options.serverURL,
    mountPath: options.mountPath,
    options: { ...options.liveQuery, maxPayload: options.liveQuery.maxPayload ?? fastify.initialConfig.bodyLimit ?? 1024 * 1024 },
    parseOptions: overrides,
    pubSubAdapter: b.cluster?.pubSubAdapter,
    requestIdHeader: options.requestIdHeader
  })
}

// 9. Schedules (@Cron, Parse Dashboard's), now that Parse runs jobs in this process;
// 9b. queued jobs (enqueue): the queue's tables beside the application's, and this instance's workers.
async function startWorkers (b: Booting): Promise<void> {
  const { fastify, options, state, database } = b
  const { startJobs, startQueue } = b.modules
  b.jobs = await startJobs(state, options.jobs, fastify.log)
  if (options.jobs.queue) b.queue = await startQueue(state, database, options.jobs.queue, fastify.log)
}

// The kit's runtime on the instance. Returns how to settle indexesApplied.
function decorateKit (b: Booting): { done: () => void } {
  const { fastify, options, database, state } = b
  let done = () => {}
  const indexesApplied = b.reconcileIndexes ? new Promise<void>((resolve) => { done = resolve }) : Promise.resolve()
  fastify.decorate('kit', {
    parse: b.parse!,
    options,
    database: { kind: database.kind, displayURI: database.displayURI, embedded: database.embedded, dataDir: database.dataDir },
    functions: b.functions,
    indexesApplied,
    shutdownBudgetMs: shutdownBudgetMs(options),
    state
  })
  return { done: () => done() }
}

// 10. Once listening: the declared indexes and the database-side field constraints.
function applyIndexesOnListen (b: Booting, indexesDone: () => void, closing: { on: boolean }): void {
  const { fastify } = b
  const { applyAllIndexes, applyFieldConstraints } = b.modules
  if (!b.reconcileIndexes) return
  fastify.addHook('onListen', async () => {
    // Each step on its own: indexes that cannot be applied leave the constraints to be applied all the same.
    const step = async (label: string, apply: BootModules['applyAllIndexes']) => {
      try {
        await apply(fastify, { log: fastify.log })
      } catch (error) {
        // A server closed right after listen has nothing left to index.
        if (!closing.on) fastify.log.error({ err: error }, `${label} could not apply the declared ${label === '[indexes]' ? 'indexes' : 'constraints'}`)
      }
    }
    try {
      await step('[indexes]', applyAllIndexes)
      await step('[constraints]', applyFieldConstraints)
    } finally {
      indexesDone()
    }
  })
}

// Close begins with the drain. Fastify has already flagged itself closing; with
// return503OnClosing: false (kitServerOptions) it still routes every request, with
// Connection: close. Readiness answers 503 at once and the server keeps listening for
// drainDelayMs, so balancers stop sending before it stops accepting. Running jobs get
// their grace in the same window, before any application onClose hook closes what they use.
function drainOnClose (b: Booting, closing: { on: boolean }): void {
  const { fastify, options } = b
  fastify.addHook('preClose', async () => {
    b.drain.on = true
    closing.on = true
    const delay = fastify.server.listening ? options.shutdown.drainDelayMs : 0
    if (delay > 0) fastify.log.info(`[shutdown] draining for ${delay} ms: ${mountPrefix(options.mountPath)}/health answers 503 while requests are still served`)
    await Promise.all([drainPause(delay), b.stopJobs()])
    closeIdleSocketsUntilClosed(fastify.server)
  })
  // Before Fastify closes its HTTP server: that waits for every open socket, WebSockets included.
  const realtime = b.liveQuery
  if (realtime) fastify.addHook('preClose', async () => { await realtime.shutdown() })
}

// Last, the teardown a failed boot runs too: the jobs (stopped in preClose already; this covers a close before the app was ready), then Parse (it ends its pool), then the database it was using.
function closeOnClose (b: Booting, indexesDone: () => void, closing: { on: boolean }, release: () => void): void {
  b.fastify.addHook('onClose', async () => {
    closing.on = true
    indexesDone()
    try {
      await b.close()
    } finally {
      release()
    }
  })
}

export const kitPlugin = fp(kit, { fastify: '5.x', name: 'fastify-parse-kit' })
export default kitPlugin

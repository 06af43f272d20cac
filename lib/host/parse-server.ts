// Starting and stopping Parse Server inside a process the kit (not Parse) owns.
import '../parse/no-log-files.js' // before parse-server loads
import { parseServerPackage } from '../parse/parse-main.js'
import { clearSchemaCache } from '../parse/parse-calls.js'
import { forgetParseConfig, parseConfig, schemaMemo } from '../access/parse-config.js'
import { installDirectWrites } from '../parse/direct-writes.js'
import { installPushWithoutAdapter } from '../parse/push-without-adapter.js'
import { installTransactionalBatchErrors } from '../parse/transactional-batch.js'
import { installKeywordScan } from '../parse/keyword-scan.js'
import { answerMisfitOperations } from '../parse/operation-fit.js'
import { installSharedRoleLoads } from '../parse/shared-role-loads.js'
import { countCacheDrops } from '../parse/shared-loads.js'
import { guardPasswordStamp } from '../parse/password-stamp.js'
import { locateFilesAtServerURL } from './file-urls.js'
import type { FastifyBaseLogger } from 'fastify'
import { parseLoggerAdapter, parseLogLevelFor } from './parse-logger.js'

export interface ParseHostOptions {
  appId: string
  masterKey: string
  serverURL: string
  mountPath: string
  databaseAdapter: unknown
  filesAdapter: unknown
  schema?: unknown
  cloud?: (parse: unknown) => void | Promise<void>
  /** Passed to Parse Server as they are, over the kit's defaults. */
  overrides?: Record<string, unknown>
  /** Fastify's logger: Parse's own lines go there, at its level (parseServerOptions.loggerAdapter / logLevel override). */
  log?: FastifyBaseLogger
}

type ParseServerConstructor = ReturnType<typeof parseServerPackage>['ParseServer']
type ParseServerInstance = ReturnType<ParseServerConstructor>

export interface ParseHost {
  server: ParseServerInstance
  /** Parse Server's Express app, to be mounted under the mount path. */
  app: (req: unknown, res: unknown, next: (error?: unknown) => void) => void
  shutdown(): Promise<void>
}

/**
 * Explicit values for every option Parse 9 warns about when left unset (so boot
 * is quiet), and log levels that keep per-call success logs off the hot path.
 * Each choice is documented in the README ("Parse Server defaults").
 */
export const KIT_PARSE_DEFAULTS: Record<string, unknown> = {
  directAccess: true,
  logsFolder: null,
  logLevels: { cloudFunctionSuccess: 'silent', triggerAfter: 'silent', triggerBeforeSuccess: 'silent' },
  // The server's own host names (serverURL, publicServerURL) are added at start: see ownHosts.
  fileUpload: { allowedFileUrlDomains: [] },
  pages: { encodePageParamHeaders: true },
  readOnlyMasterKeyIps: ['127.0.0.1', '::1'],
  requestComplexity: {
    includeDepth: 10, includeCount: 100, subqueryDepth: 10, queryDepth: 10,
    graphQLDepth: 20, graphQLFields: 200, batchRequestLimit: 100
  },
  protectedFieldsOwnerExempt: true,
  protectedFieldsTriggerExempt: true,
  protectedFieldsSaveResponseExempt: false,
  installation: { duplicateDeviceTokenActionEnforceAuth: true },
  allowAggregationForReadOnlyMasterKey: false
}

export async function startParseServer (options: ParseHostOptions): Promise<ParseHost> {
  // Only the kit's own adapter: one the application passes (parseServerOptions.filesAdapter) locates its files itself.
  if (options.filesAdapter && options.overrides?.filesAdapter === undefined) locateFilesAtServerURL(options.filesAdapter, options.serverURL)
  const config = mergeOptions(KIT_PARSE_DEFAULTS, {
    fileUpload: { allowedFileUrlDomains: ownHosts(options.serverURL, options.overrides?.publicServerURL) },
    appId: options.appId,
    masterKey: options.masterKey,
    serverURL: options.serverURL,
    mountPath: options.mountPath,
    databaseAdapter: options.databaseAdapter,
    filesAdapter: options.filesAdapter,
    ...(options.schema ? { schema: options.schema } : {}),
    ...(options.cloud ? { cloud: options.cloud } : {}),
    ...(options.log ? { loggerAdapter: parseLoggerAdapter(options.log), logLevel: parseLogLevelFor(options.log) } : {})
  }, options.overrides ?? {})
  // Parse caches schemas process-wide; a server started after another (tests, restarts) must not inherit them.
  clearSchemaCache()
  forgetParseConfig()
  // Before start(): without a push option, start() need not load the push adapters.
  installPushWithoutAdapter()
  // Before the app is built: a failed transactional /batch answers its inner error, not an opaque 500.
  installTransactionalBatchErrors()
  // Parse's requestKeywordDenylist scan with each pattern compiled once (three scans per create).
  installKeywordScan()
  // An operation the stored value cannot take (Increment of a String) is Parse's 111 on classes with a beforeSave too, not a 500.
  answerMisfitOperations()
  // Concurrent misses of Parse's session and role caches share one load (the entries expire for all of them at once);
  // a drop of a cache entry (a revocation) ends the sharing of loads started before it.
  countCacheDrops()
  installSharedRoleLoads()
  const server = parseServerPackage().ParseServer(config as unknown as Parameters<ParseServerConstructor>[0])
  const removePasswordStampGuard = guardPasswordStamp()
  try {
    await server.start()
  } catch (error) {
    removePasswordStampGuard()
    throw error
  }
  const app = buildAppLeavingProcessAlone(server)
  // After the app is built: building it installs the in-process SDK controller that this wraps.
  const removeDirectWrites = installDirectWrites(() => parseConfig(options.appId), schemaMemo)
  return {
    server,
    app,
    async shutdown () {
      // Fastify owns and closes the HTTP server; Parse only needs something to close.
      (server as unknown as { server: { close: (done: () => void) => void } }).server = { close: (done) => done() }
      removeDirectWrites()
      removePasswordStampGuard()
      await server.handleShutdown()
      clearSchemaCache()
      forgetParseConfig()
    }
  }
}

/**
 * The host names of the server's own file URLs: a client that copies a Parse.File from one
 * object to another sends its URL back, and Parse refuses URLs of hosts it does not list
 * (`[]` refuses every URL, its own included). Others are added with
 * parseServerOptions.fileUpload.allowedFileUrlDomains, which replaces this list.
 */
export function ownHosts (...urls: unknown[]): string[] {
  const hosts = new Set<string>()
  for (const url of urls) {
    if (typeof url !== 'string') continue
    try {
      hosts.add(new URL(url).hostname)
    } catch {} // Parse itself refuses a malformed serverURL / publicServerURL
  }
  return [...hosts]
}

/**
 * Reading `server.app` builds the Express app and (outside TESTING) installs a
 * process-wide uncaughtException handler that exits the process. The host
 * application owns the process, so that listener is removed again. Building the
 * app also installs the in-process SDK path (directAccess).
 */
function buildAppLeavingProcessAlone (server: ParseServerInstance): ParseHost['app'] {
  const before = new Set(process.listeners('uncaughtException'))
  const app = server.app
  for (const listener of process.listeners('uncaughtException')) {
    if (!before.has(listener)) process.removeListener('uncaughtException', listener)
  }
  return app as unknown as ParseHost['app']
}

/** Merges option objects one level deep, so `requestComplexity: {queryDepth: 5}` keeps the other limits. */
export function mergeOptions (...layers: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {}
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      const current = merged[key]
      merged[key] = isPlainObject(current) && isPlainObject(value) ? { ...current, ...value } : value
    }
  }
  return merged
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
}

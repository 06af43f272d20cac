// The in-process SDK path, made cheaper for the calls handlers make most: a
// single-object save (`POST classes/X`, `PUT classes/X/id`) goes straight to
// Parse's own rest.create / rest.update — the functions its ClassesRouter
// calls — instead of through ParseServerRESTController, which per call builds
// a new Config and DatabaseController, parses the server URL, scans every
// Parse route for a match and looks the session up again. rest.create and
// rest.update run RestWrite, so class-level permissions, ACLs, beforeSave and
// afterSave, the version field (a beforeSave step) and the ambient transaction
// (at the storage adapter) all apply exactly as before. Everything else (batch,
// queries, users, sessions, files, config, Parse's own `_` classes) goes the
// original way.
import { AsyncLocalStorage } from 'node:async_hooks'
import Parse from 'parse/node'
import { AuthModule, parseConfig, rest } from './parse-internals.js'

type RequestFn = (method: string, path: string, data?: unknown, options?: Record<string, any>, config?: unknown) => Promise<unknown> // eslint-disable-line @typescript-eslint/no-explicit-any
interface RESTController { request: RequestFn, [key: string]: unknown }

/** The caller a declared endpoint already resolved: its session token and user, reused by the saves it makes. */
interface ResolvedCaller { sessionToken: string, user: Parse.User }
const resolvedCaller = new AsyncLocalStorage<ResolvedCaller>()

const CLASS_PATH = /^\/?classes\/([A-Za-z][A-Za-z0-9_]*)(?:\/([A-Za-z0-9_-]+))?$/
const FAST = Symbol.for('fastify-parse-kit.direct-rest')

/** Runs a handler with its caller's session known, so an SDK save with the same token does not look it up again. */
export function withResolvedCaller<T> (sessionToken: string | undefined, user: Parse.User | undefined, body: () => T): T {
  return sessionToken && user ? resolvedCaller.run({ sessionToken, user }, body) : body()
}

/**
 * Wraps the REST controller Parse Server installed for directAccess (once;
 * again if another server in the process installs its own). Without
 * directAccess (the SDK goes over HTTP) nothing changes.
 */
export function useDirectRest (): void {
  const current = Parse.CoreManager.getRESTController() as unknown as RESTController & { [FAST]?: true }
  if (current[FAST] || !isParseServerController(current)) return
  const original = current.request
  const fast: RESTController & { [FAST]: true } = {
    ...current,
    [FAST]: true,
    request (method, path, data, options, config) {
      const target = config === undefined ? singleObjectWrite(method, path) : undefined
      if (!target) return original.call(this, method, path, data, options, config)
      return write(target, (data ?? {}) as Record<string, unknown>, options ?? {})
    }
  }
  Parse.CoreManager.setRESTController(fast as never)
}

/** ParseServerRESTController keeps the SDK's ajax but replaces request; the HTTP controller has both from the SDK. */
function isParseServerController (controller: RESTController): boolean {
  return typeof controller.request === 'function' && controller.request.name === 'handleRequest'
}

interface WriteTarget { method: 'POST' | 'PUT', className: string, objectId?: string }

function singleObjectWrite (method: string, path: string): WriteTarget | undefined {
  if (method !== 'POST' && method !== 'PUT') return undefined
  const match = CLASS_PATH.exec(path)
  if (!match) return undefined
  const [, className, objectId] = match
  // Parse's own classes have routers of their own (users, sessions, installations, roles).
  if (className.startsWith('_')) return undefined
  if ((method === 'POST') === (objectId !== undefined)) return undefined
  return { method, className, objectId }
}

async function write (target: WriteTarget, body: Record<string, unknown>, options: Record<string, any>): Promise<unknown> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const config = parseConfig(Parse.CoreManager.get('APPLICATION_ID'))
  let context: Record<string, unknown>
  try {
    context = structuredClone(options.context ?? {})
  } catch (error) {
    throw new Parse.Error(Parse.Error.INVALID_VALUE, `Context contains non-cloneable values: ${(error as Error).message}`)
  }
  const auth = await authFor(options, config)
  const result = target.method === 'POST'
    ? await rest.create(config, auth, target.className, body, context)
    : await rest.update(config, auth, target.className, { objectId: target.objectId }, body, context)
  return options.returnStatus ? { ...result.response, _status: result.status, _headers: result.headers ?? {} } : result.response
}

/** The same Auth ParseServerRESTController would build for these options. */
async function authFor (options: Record<string, any>, config: unknown): Promise<unknown> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const installationId = options.installationId || 'cloud'
  if (options.useMasterKey) return new AuthModule.Auth({ config, isMaster: true, installationId })
  const sessionToken = typeof options.sessionToken === 'string' ? options.sessionToken : undefined
  if (!sessionToken) return new AuthModule.Auth({ config, installationId })
  const known = resolvedCaller.getStore()
  // Looked up moments ago for this very request, through the same Parse Auth and cache.
  if (known?.sessionToken === sessionToken) return new AuthModule.Auth({ config, isMaster: false, installationId, user: known.user })
  return AuthModule.getAuthForSessionToken({ config, sessionToken, installationId })
}

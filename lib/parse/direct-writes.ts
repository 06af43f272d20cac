// The in-process SDK's single-object saves, made cheaper. With directAccess,
// Parse installs a REST controller that per save builds a new Config and
// DatabaseController, parses the server URL, clones the context, looks the
// session up and builds the user again, and scans every Parse route for a
// match — before calling rest.create / rest.update, exactly as its
// ClassesRouter does. A `POST classes/X` or `PUT classes/X/id` goes to those
// two functions directly here. RestWrite runs unchanged: class-level
// permissions, ACLs, beforeSave / afterSave, the version field (a beforeSave
// step), lockSchemas and the ambient transaction (at the storage adapter).
//
// Two costs of Parse's own path are dropped on the way:
// - the caller a declared endpoint already resolved (see runAsCaller) is
//   reused when the save carries that caller's session token;
// - one schema controller serves the whole save: Parse builds a new one on
//   every loadSchema() call, four or five per save, although it means a write
//   to see one schema ("one request could use multiple schemas" is what its
//   DatabaseController avoids by not keeping one); and, given the running
//   kit's memo, the save takes the controller an earlier read or write built
//   while Parse's schema cache is unchanged (reused-schema.ts), through a view
//   of its own.
// Everything else (batches, queries, deletes, Parse's own `_` classes, saves
// inside a batch) takes Parse's controller as before.
import { AsyncLocalStorage } from 'node:async_hooks'
import Parse from 'parse/node'
import { parseInternals, type ParseConfig } from './internals.js'
import { withOneSchemaLoad } from './one-schema-load.js'
import type { SchemaMemo } from './reused-schema.js'
import { createThroughRestWrite } from './lean-create.js'
import { fastPathsOn } from './fast-path-switch.js'

/** A caller already resolved for this request: its session token and (built on first read) its user. */
export interface KnownCaller {
  sessionToken: string
  readonly user: Parse.User | undefined
}

export interface SaveOptions {
  useMasterKey?: boolean
  sessionToken?: unknown
  installationId?: string
  context?: Record<string, unknown>
  returnStatus?: boolean
}

const DIRECT = Symbol.for('fastify-parse-kit.direct-writes')

type RequestFn = (method: string, path: string, data?: unknown, options?: SaveOptions, config?: unknown) => Promise<unknown>
interface RESTController { request: RequestFn, ajax: unknown, [DIRECT]?: true }

interface WriteTarget { className: string, objectId?: string }

const knownCaller = new AsyncLocalStorage<KnownCaller>()
const CLASS_PATH = /^\/?classes\/([A-Za-z][A-Za-z0-9_]*)(?:\/([A-Za-z0-9]+))?$/

/** Runs `body` with its caller known, so SDK saves it makes with the same session token do not look the session up again. */
export function runAsCaller<T> (caller: KnownCaller, body: () => T): T {
  return knownCaller.run(caller, body)
}

/**
 * Wraps the controller Parse installed for directAccess (call after Parse's app
 * is built); returns the undo. Without directAccess (the SDK goes over HTTP)
 * nothing changes. `parseConfig` gives the running server's Config and
 * `schemaMemo` the schema controller its operations share (the kit keeps one of each per kit).
 */
export function installDirectWrites (parseConfig: () => ParseConfig, schemaMemo: () => SchemaMemo): () => void {
  const current = Parse.CoreManager.getRESTController() as unknown as RESTController
  if (current[DIRECT] || current.request.name !== 'handleRequest') return () => {}
  const original = current.request
  const direct: RESTController = {
    ...current,
    [DIRECT]: true,
    request (method, path, data, options, config) {
      // A config argument marks an inner request of a batch: it belongs to the batch's own session.
      const target = config === undefined ? singleObjectWrite(method, path) : undefined
      if (!target || !fastPathsOn()) return original.call(this, method, path, data, options, config)
      return write({ config: parseConfig(), schemaMemo: schemaMemo() }, target, (data ?? {}) as Record<string, unknown>, options ?? {})
    }
  }
  Parse.CoreManager.setRESTController(direct as never)
  return () => {
    if (Parse.CoreManager.getRESTController() === (direct as never)) Parse.CoreManager.setRESTController(current as never)
  }
}

function singleObjectWrite (method: string, path: string): WriteTarget | undefined {
  if (method !== 'POST' && method !== 'PUT') return undefined
  const match = CLASS_PATH.exec(path)
  if (!match) return undefined
  const [, className, objectId] = match
  // Parse's own classes have routers and rules of their own (users, sessions, installations, roles).
  if (className.startsWith('_') || (method === 'POST') !== (objectId === undefined)) return undefined
  return { className, objectId }
}

/** The running server a write goes to: its Config and the schema controller its operations share. */
export interface WriteServer { config: ParseConfig, schemaMemo?: SchemaMemo }

/**
 * One object created through Parse's RestWrite exactly as the SDK's save of a new
 * object would create it (same auth for the same options, same context copy):
 * Parse's REST answer `{objectId, createdAt, …fields the server set}`.
 */
export async function createObject (server: WriteServer, className: string, body: Record<string, unknown>, options: SaveOptions): Promise<Record<string, unknown>> {
  return await write(server, { className }, body, options) as Record<string, unknown>
}

async function write (server: WriteServer, target: WriteTarget, body: Record<string, unknown>, options: SaveOptions): Promise<unknown> {
  // A copy, as Parse makes: triggers may change their context without reaching the caller's object.
  let context: Record<string, unknown> = {}
  try {
    if (options.context != null) context = structuredClone(options.context)
  } catch (error) {
    throw new Parse.Error(Parse.Error.INVALID_VALUE, `Context contains non-cloneable values: ${(error as Error).message}`)
  }
  const config = withOneSchemaLoad(server.config, { memo: server.schemaMemo, write: true })
  const auth = await authFor(options, config)
  const result = target.objectId === undefined
    ? await createThroughRestWrite(config, auth, target.className, body, context)
    : await parseInternals().rest.update(config, auth, target.className, { objectId: target.objectId }, body, context)
  return options.returnStatus ? { ...result.response, _status: result.status, _headers: result.headers ?? {} } : result.response
}

/** The Auth Parse's controller builds for these options; the known caller's user when the token is the caller's. */
async function authFor (options: SaveOptions, config: ParseConfig): Promise<unknown> {
  const installationId = options.installationId || 'cloud'
  const { AuthModule } = parseInternals()
  if (options.useMasterKey) return new AuthModule.Auth({ config, isMaster: true, installationId })
  const sessionToken = typeof options.sessionToken === 'string' ? options.sessionToken : ''
  if (sessionToken === '') return new AuthModule.Auth({ config, installationId })
  const known = knownCaller.getStore()
  // fastPaths: false: the session is looked up as Parse's controller looks it up.
  const user = known?.sessionToken === sessionToken && fastPathsOn() ? known.user : undefined
  if (user) return new AuthModule.Auth({ config, isMaster: false, installationId, user })
  return AuthModule.getAuthForSessionToken({ config, sessionToken, installationId })
}

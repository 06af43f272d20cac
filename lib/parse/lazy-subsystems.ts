// Parse Server requires, when it loads, subsystems a kit may never use: the
// GraphQL server (Apollo Server, graphql-tools, graphql-upload), the MongoDB
// driver on a PostgreSQL kit, the Redis client without Redis, the LiveQuery
// server without LiveQuery, the JWT, LDAP, Game Center and MFA code of logins
// a kit may not offer, Parse's own rate limit and pages, and the Parse SDK's
// WebSocket client and user encryption. About 40 MB resident in all
// (docs/internals/benchmarks.md, "Where the memory goes").
//
// Before Parse loads, each such module's entry in require.cache is a stand-in
// whose exports load the real module at their first use, and from then on
// are the real module's. Parse's files on disk are untouched: a require() of
// these paths answers the stand-in's exports, Babel's interop reads only
// `__esModule` (answered from the list below), and Parse's own code reaches
// the modules' members when it uses them. A class export that Parse only
// tests with `instanceof` until it uses it (the MongoDB adapter, which
// Parse's DatabaseController checks at boot) is a stand-in class: no object
// is an instance of it while its module is not loaded; `new` builds the
// real one.
import { Module, createRequire } from 'node:module'

/**
 * One module Parse requires at load time that the kit defers. Its exports
 * must be an object, a function that is only called (`callable`), or a
 * class that is only constructed (`constructible`, such as
 * Security/CheckRunner.js, which Babel's interop wraps and Parse constructs).
 */
export interface DeferredModule {
  /** The module as Parse requires it (resolved from Parse's own folder, or from `from`'s). */
  request: string
  /** The package whose require() loads it, when that is not Parse Server (a library the kit uses). */
  from?: string
  /** The module's `__esModule` mark (Babel's interop reads it without using the module). */
  esModule: boolean
  /** Its exports is a function Parse calls (jwks-rsa, express-rate-limit): the stand-in can be called. */
  callable?: boolean
  /** Its exports is a class only ever constructed (ws's WebSocket, kept by the Parse SDK): the stand-in can be constructed. */
  constructible?: boolean
  /**
   * Exports Parse reads when it loads but uses later: a class it tests with
   * `instanceof` first, a function it keeps to call. Their stand-ins call,
   * construct and test through to the real ones.
   */
  standIns?: readonly string[]
}

export interface DeferredSubsystem {
  name: string
  /** What makes a kit load it. */
  loadedBy: string
  modules: readonly DeferredModule[]
}

export const MONGO_STORAGE_ADAPTER = 'parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter.js'
export const GRIDFS_BUCKET_ADAPTER = 'parse-server/lib/Adapters/Files/GridFSBucketAdapter.js'
export const PARSE_GRAPHQL_SERVER = 'parse-server/lib/GraphQL/ParseGraphQLServer.js'
export const PARSE_LIVE_QUERY_SERVER = 'parse-server/lib/LiveQuery/ParseLiveQueryServer.js'
export const PARSE_CHECK_RUNNER = 'parse-server/lib/Security/CheckRunner.js'

export const DEFERRED_SUBSYSTEMS: readonly DeferredSubsystem[] = [
  {
    name: 'GraphQL server (Apollo Server, graphql-tools, graphql-upload)',
    loadedBy: 'Parse\'s ParseGraphQLServer used (mountGraphQL / mountPlayground in ParseServer.startApp, or an application building one)',
    modules: [
      { request: PARSE_GRAPHQL_SERVER, esModule: true },
      // ParseServer.js keeps graphql's parse() for a graphQLSchema file given to startApp.
      { request: 'graphql', esModule: true, standIns: ['parse'] }
    ]
  },
  {
    name: 'MongoDB driver (Parse\'s MongoDB storage adapter and GridFS files)',
    loadedBy: 'a MongoDB database (databaseURI mongodb://…), or GridFS files',
    modules: [
      { request: MONGO_STORAGE_ADAPTER, esModule: true, standIns: ['default', 'MongoStorageAdapter'] },
      { request: GRIDFS_BUCKET_ADAPTER, esModule: true, standIns: ['default', 'GridFSBucketAdapter'] }
    ]
  },
  {
    name: 'LiveQuery server (ws, tv4, its subscriptions and clients)',
    loadedBy: 'the liveQuery option (ParseServer.createLiveQueryServer)',
    modules: [{ request: PARSE_LIVE_QUERY_SERVER, esModule: true }]
  },
  {
    name: 'Redis client (node-redis)',
    loadedBy: 'a Redis cache or LiveQuery pub/sub (cluster.redisURL), or Parse\'s rate limit with a redisUrl',
    modules: [{ request: 'redis', esModule: true }]
  },
  {
    name: 'Apple, Google, Facebook and Keycloak logins (jwks-rsa, jose, jsonwebtoken)',
    loadedBy: 'a login with authData.apple, .google, .facebook or .keycloak',
    modules: [{ request: 'jwks-rsa', esModule: false, callable: true }, { request: 'jsonwebtoken', esModule: false }]
  },
  {
    name: 'LDAP and Game Center logins (ldapjs, node-forge)',
    loadedBy: 'a login with authData.ldap or authData.gcenter',
    modules: [{ request: 'ldapjs', esModule: false }, { request: 'node-forge', esModule: false }]
  },
  {
    name: 'multi-factor logins (otpauth)',
    loadedBy: 'a login or signup with authData.mfa',
    modules: [{ request: 'otpauth', esModule: false }]
  },
  {
    name: 'Parse\'s own rate limit (express-rate-limit with ip-address, rate-limit-redis)',
    loadedBy: 'Parse\'s rateLimit option (parseServerOptions.rateLimit; the kit\'s own limits are @fastify/rate-limit)',
    modules: [{ request: 'express-rate-limit', esModule: false, callable: true }, { request: 'rate-limit-redis', esModule: true }]
  },
  {
    name: 'Parse\'s pages (mustache)',
    loadedBy: 'a page of Parse\'s PagesRouter rendered (pages.enableRouter: email verification and password reset pages)',
    modules: [{ request: 'mustache', esModule: false }]
  },
  {
    name: 'Parse\'s security checks (CheckRunner and its check groups)',
    loadedBy: 'security.enableCheck: the checks Parse logs at start (enableCheckLog) or answers on its /security route',
    modules: [{ request: PARSE_CHECK_RUNNER, esModule: false, constructible: true }]
  },
  {
    name: 'bcrypt in JavaScript (bcryptjs)',
    loadedBy: 'a password hashed or compared where @node-rs/bcrypt, which Parse prefers, cannot load',
    modules: [{ request: 'bcryptjs', esModule: false }]
  },
  // The Parse SDK's own, required by parse/node when it loads.
  {
    name: 'the Parse SDK\'s WebSocket client (its own copy of ws)',
    loadedBy: 'a Parse.LiveQueryClient opened in this process (the SDK constructs its WebSocketController)',
    modules: [{ request: 'ws', from: 'parse', esModule: false, constructible: true }]
  },
  {
    name: 'the Parse SDK\'s encryption of the current user (crypto-js)',
    loadedBy: 'Parse.enableEncryptedUser with a secret key (the SDK\'s CryptoController)',
    modules: [{ request: 'crypto-js/aes', from: 'parse', esModule: false }, { request: 'crypto-js/enc-utf8', from: 'parse', esModule: false }]
  },
  // Libraries the kit uses whose own dependencies load at boot for a feature
  // the kit rarely or never asks for. Same stand-ins, resolved from the
  // library's folder: they must be in place before the library loads
  // (defer-modules.ts).
  {
    name: 'YAML (the OpenAPI document as YAML: @fastify/swagger and @fastify/swagger-ui)',
    loadedBy: 'a request for the document as YAML ({docs}/yaml, or fastify.swagger({ yaml: true }))',
    modules: [{ request: 'yaml', from: '@fastify/swagger', esModule: false }]
  },
  {
    name: 'cron expressions of pg-boss (cron-parser, luxon)',
    loadedBy: 'a pg-boss schedule (the kit runs pg-boss with schedule: false)',
    modules: [{ request: 'cron-parser', from: 'pg-boss', esModule: false }]
  }
]

const requireHere = createRequire(import.meta.url)

/** require() as `from` (Parse Server by default) calls it. */
function requireFrom (from = 'parse-server'): NodeJS.Require {
  return createRequire(requireHere.resolve(from))
}

/** Where a stand-in keeps its state: on its own require.cache entry (a module's load is process-wide by nature). */
const STAND_IN = Symbol.for('fastify-parse-kit.deferred-module')

interface StandInState {
  real?: Record<PropertyKey, unknown>
  onLoad: Array<(exports: Record<PropertyKey, unknown>) => void>
  load: () => Record<PropertyKey, unknown>
}

type CachedModule = NodeJS.Module & { [STAND_IN]?: StandInState }

/** The file a deferred module resolves to, as Parse (or `from`) resolves it. */
export function deferredModuleFile (request: string, from?: string): string {
  return requireFrom(from).resolve(request)
}

/** Puts the stand-ins in place; does nothing for a module already loaded (or already deferred). Call before Parse (or the library) loads: defer-modules.ts does. */
export function deferParseSubsystems (): void {
  for (const subsystem of DEFERRED_SUBSYSTEMS) {
    for (const entry of subsystem.modules) deferModule(entry)
  }
}

/**
 * Runs `use` with the module's real exports as soon as it loads (at once if
 * it is loaded): a patch of a deferred module waits for its first use.
 */
export function whenModuleLoads (request: string, use: (exports: Record<PropertyKey, unknown>) => void): void {
  const state = standInOf(request)
  if (state && !state.real) state.onLoad.push(use)
  else use(loadModule(request))
}

/** The module's real exports (loading it if it was deferred). */
export function loadModule (request: string, from?: string): Record<PropertyKey, unknown> {
  return standInOf(request, from)?.load() ?? requireFrom(from)(deferredModuleFile(request, from)) as Record<PropertyKey, unknown>
}

/** Whether the module's real exports are loaded (false while it is deferred). */
export function isModuleLoaded (request: string, from?: string): boolean {
  const entry = requireHere.cache[deferredModuleFile(request, from)] as CachedModule | undefined
  return entry !== undefined && (entry[STAND_IN] === undefined || entry[STAND_IN].real !== undefined)
}

function standInOf (request: string, from?: string): StandInState | undefined {
  return (requireHere.cache[deferredModuleFile(request, from)] as CachedModule | undefined)?.[STAND_IN]
}

function deferModule (entry: DeferredModule): void {
  const requireAsUser = requireFrom(entry.from)
  const file = deferredModuleFile(entry.request, entry.from)
  if (requireAsUser.cache[file]) return
  const load = (): Record<PropertyKey, unknown> => {
    if (state.real) return state.real
    if (requireAsUser.cache[file] === standIn) delete requireAsUser.cache[file]
    const real = requireAsUser(file) as Record<PropertyKey, unknown>
    state.real = real
    for (const use of state.onLoad.splice(0)) use(real)
    return real
  }
  const state: StandInState = { onLoad: [], load }
  const standIns = new Map((entry.standIns ?? []).map((name) => [name, forwardingStandIn(() => load()[name] as ClassLike, () => state.real?.[name] as ClassLike | undefined)]))
  // A bound function can be called and constructed and has no own `prototype` (which a proxy could not report as the real one's).
  // eslint-disable-next-line no-extra-bind -- the binding is what drops `prototype`
  const target = entry.constructible === true ? function () {}.bind(null) : entry.callable === true ? () => {} : {}
  const exports: object = new Proxy(target, {
    apply: (_target, self, args) => Reflect.apply(load() as unknown as (...args: unknown[]) => unknown, self, args),
    construct: (_target, args, newTarget) => {
      const real = load() as unknown as new (...args: unknown[]) => object
      return Reflect.construct(real, args, newTarget === exports ? real : newTarget)
    },
    get (_target, key) {
      if (!state.real && key === '__esModule') return entry.esModule || undefined
      if (!state.real && typeof key === 'string' && standIns.has(key)) return standIns.get(key)
      return Reflect.get(load(), key)
    },
    set: (_target, key, value) => Reflect.set(load(), key, value),
    has: (_target, key) => Reflect.has(load(), key),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor (_target, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(load(), key)
      // The proxy's own target has no such property: the descriptor must say it may change.
      return descriptor && { ...descriptor, configurable: true }
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(load(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(load(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(load())
  })
  const standIn = new Module(file) as CachedModule
  standIn.filename = file
  standIn.loaded = true
  standIn.exports = exports
  standIn[STAND_IN] = state
  requireAsUser.cache[file] = standIn
}

type ClassLike = abstract new (...args: unknown[]) => unknown

/** Calls, constructs and reads through to the real export; `instanceof` is false while the real one is not loaded (none of its instances can exist yet). */
function forwardingStandIn (real: () => ClassLike, loaded: () => ClassLike | undefined): ClassLike {
  const target = function () {} as unknown as ClassLike
  const proxy: ClassLike = new Proxy(target, {
    construct: (_target, args, newTarget) => Reflect.construct(real() as unknown as new (...args: unknown[]) => object, args, newTarget === proxy ? real() : newTarget),
    apply: (_target, self, args) => Reflect.apply(real() as unknown as (...args: unknown[]) => unknown, self, args),
    get (_target, key) {
      if (key === Symbol.hasInstance) {
        return (value: unknown) => {
          const cls = loaded()
          return cls !== undefined && value instanceof cls
        }
      }
      return Reflect.get(real(), key)
    },
    set: (_target, key, value) => Reflect.set(real(), key, value)
  })
  return proxy
}

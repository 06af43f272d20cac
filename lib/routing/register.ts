// One Fastify route per declared function, at {mount}/{prefix}/{name} (plain
// JSON) and {mount}/functions/{name} ({result}, as Parse answers), both going
// through the same checks and the same rate-limit counter.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, onRequestHookHandler, preHandlerAsyncHookHandler, preHandlerHookHandler } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import Parse from 'parse/node'
import { masterKeyVerdict, readCredentials, secretsEqual, SDK_BODY_KEYS, type Credentials, type MasterKeyRule } from '../access/credentials.js'
import { actingAs, callerWithoutLookup, resolveCaller, type Caller } from '../access/session.js'
import { getUserRoles } from '../access/roles.js'
import { KitError } from '../errors.js'
import { acceptTextPlainJson, replyWithParseShape } from '../http.js'
import { encodeLikeCloudRun } from '../parse/internals.js'
import { buildCloudRequest } from './request.js'
import { inputSchema, outputSchema } from './schema.js'
import { lazyValidation, type LazyValidation } from './lazy-validation.js'
import { sharedSerializers, type SharedSerializers } from './shared-serializers.js'
import { Type } from '@sinclair/typebox'
import { HTTP_METHODS, needsSession, type HttpMethod } from './options.js'
import { declaredFunctions, type DeclaredFunction } from './registry.js'
import { answerRefusals, type Refusal, type RefusalGuards } from './refusals.js'

export interface DeclaredRoutesOptions {
  mountPath: string
  appId: string
  masterKey: string
  /** Where the master key is honoured from: Parse's masterKeyIps (its default when unset). */
  masterKeyIps: string[]
  /** When Parse is configured with a REST API key, callers must present it (or the master key). */
  restApiKey?: string
  /** @fastify/rate-limit's `store` (shared counters in cluster mode); unset: in memory. */
  rateLimitStore?: unknown
}

declare module 'fastify' {
  interface FastifyRequest {
    kitCredentials: Credentials | null
    kitCaller: Caller | null
  }
  interface FastifyContextConfig {
    /** Set on routes the kit registers for a declared function. */
    cloudFunction?: DeclaredFunction
  }
}

const QUERY_METHODS = new Set<HttpMethod>(['GET', 'HEAD'])

export async function registerDeclaredRoutes (fastify: FastifyInstance, options: DeclaredRoutesOptions): Promise<DeclaredFunction[]> {
  const functions = declaredFunctions()
  await fastify.register(async (scope) => {
    acceptTextPlainJson(scope)
    scope.setErrorHandler(replyWithParseShape)
    scope.decorateRequest('kitCredentials', null)
    scope.decorateRequest('kitCaller', null)
    await scope.register(rateLimit, { global: false, ...(options.rateLimitStore ? { store: options.rateLimitStore as never } : {}) })
    const compilers = { validation: lazyValidation(scope), serializers: sharedSerializers(scope) }
    const masterKey: MasterKeyRule = { key: options.masterKey, ips: options.masterKeyIps }
    const refusals: Refusal[] = []
    for (const fn of functions) registerFunction(scope, fn, options, compilers, refusals)
    // A verb a path does not take is answered only to a caller with the right app id.
    const guards: RefusalGuards = { onRequest: refuseWrongAppIdHeader(options), preValidation: asyncAdmit(checkApplication(options, masterKey)) }
    answerRefusals(scope, baseOf(options), refusals, guards)
  })
  return functions
}

const baseOf = (options: DeclaredRoutesOptions) => options.mountPath === '/' ? '' : options.mountPath

function registerFunction (
  scope: FastifyInstance, fn: DeclaredFunction, options: DeclaredRoutesOptions,
  compilers: { validation: LazyValidation, serializers: SharedSerializers }, refusals: Refusal[]
): void {
  const base = baseOf(options)
  const schema = inputSchema(fn.options)
  const returns = outputSchema(fn.options)
  const masterKey: MasterKeyRule = { key: options.masterKey, ips: options.masterKeyIps }
  // Order: app id, rate limit, session and roles, and only then the input schema,
  // so a caller who may not call the function learns nothing about its input.
  const onRequest = refuseWrongAppIdHeader(options)
  const admit = checkApplication(options, masterKey)
  const decide = authorize(fn, options, masterKey)
  const limits = limiter(scope, fn, masterKey)
  // Without a rate limit, one callback-style hook does both steps (no promise per request when no session is looked up).
  const preValidation: preHandlerHookHandler[] = limits.length === 0
    ? [admitAndAuthorize(admit, decide)]
    : [asyncAdmit(admit), ...limits as unknown as preHandlerHookHandler[], async (request) => decide(request)]
  const route = (methods: HttpMethod[], url: string, handler: RouteHandlerMethod, response?: object) => {
    const inQuery = methods.every((method) => QUERY_METHODS.has(method))
    const routeSchema = { ...(schema ? (inQuery ? { querystring: schema } : { body: schema }) : {}), ...(response ? { response } : {}) }
    scope.route({
      method: methods,
      url,
      schema: Object.keys(routeSchema).length > 0 ? routeSchema : undefined,
      // Compiled on first use (boot stays cheap with many functions), shared with the twin.
      ...(schema ? { validatorCompiler: compilers.validation.forRoute() } : {}),
      // Compiled at boot, once per schema object (the entity routes share one, the twin's routes another).
      ...(response ? { serializerCompiler: compilers.serializers.forRoute() } : {}),
      config: { cloudFunction: fn },
      onRequest,
      preValidation: schema && !inQuery ? [...preValidation, declaredFieldsOnlyInBody(fn) as unknown as preHandlerHookHandler] : preValidation,
      handler
    })
  }
  // Verbs the function does not take: answered 405 by answerRefusals, once every path is known.
  const refuse = (refused: HttpMethod[], url: string, served: HttpMethod, allowed: HttpMethod[]) => {
    if (refused.length > 0) refusals.push({ url, served, refused, allowed })
  }

  if (fn.prefix) {
    const url = `${base}/${fn.prefix}/${fn.name}`
    const declared = fn.options.methods ?? ['POST']
    // Fastify answers HEAD for every GET route itself.
    const served = declared.includes('GET') ? declared.filter((method) => method !== 'HEAD') : declared
    const inQuery = served.filter((method) => QUERY_METHODS.has(method))
    const inBody = served.filter((method) => !QUERY_METHODS.has(method))
    // With `returns`, Fastify serialises the answer (fast-json-stringify) and the docs show it as the 200 response.
    const response = returns ? { 200: returns } : undefined
    if (inQuery.length > 0) route(inQuery, url, entityHandler(fn), response)
    if (inBody.length > 0) route(inBody, url, entityHandler(fn), response)
    refuse(HTTP_METHODS.filter((method) => !declared.includes(method) && !(method === 'HEAD' && declared.includes('GET'))), url, served[0], [...declared])
  }
  // Parse's /functions twin: POST always (the verb Parse.Cloud.run sends; a body-less
  // read is harmless), GET only for functions that declare GET, every other verb 405.
  const twin = `${base}/functions/${fn.name}`
  const twinVerbs: HttpMethod[] = (fn.options.methods ?? ['POST']).includes('GET') ? ['POST', 'GET'] : ['POST']
  const wrapped = returns ? { 200: Type.Object({ result: returns }) } : undefined
  route(['POST'], twin, functionsHandler(fn), wrapped)
  if (twinVerbs.includes('GET')) route(['GET'], twin, functionsHandler(fn), wrapped)
  refuse(HTTP_METHODS.filter((method) => !twinVerbs.includes(method) && !(method === 'HEAD' && twinVerbs.includes('GET'))), twin, 'POST', twinVerbs)
}

/** A wrong app id in the header is refused before the body is even read. */
function refuseWrongAppIdHeader (options: DeclaredRoutesOptions): onRequestHookHandler {
  return (request, reply, done) => {
    const presented = request.headers['x-parse-application-id']
    if (presented !== undefined && presented !== options.appId) {
      reply.code(403).send({ error: 'unauthorized' })
      return
    }
    done()
  }
}

type Admit = (request: FastifyRequest, reply: FastifyReply) => boolean

/** Application id (and REST API key when configured) before anything else; SDK keys leave the body. False once refused (answered 403). */
function checkApplication (options: DeclaredRoutesOptions, masterKey: MasterKeyRule): Admit {
  return (request, reply) => {
    const credentials = readCredentials(request.headers, request.body)
    if (credentials.appId !== options.appId || (options.restApiKey && !restKeyOrMaster(credentials, request.ip, options.restApiKey, masterKey))) {
      reply.code(403).send({ error: 'unauthorized' })
      return false
    }
    request.kitCredentials = credentials
    if (request.body && typeof request.body === 'object') {
      const body = request.body as Record<string, unknown>
      // Only keys that are there: a delete changes the object's shape, which slows every later read of it.
      for (const key of SDK_BODY_KEYS) if (key in body) delete body[key]
    }
    return true
  }
}

function restKeyOrMaster (credentials: Credentials, ip: string, restApiKey: string, masterKey: MasterKeyRule): boolean {
  return masterKeyVerdict(credentials.masterKey, ip, masterKey) === 'master' || secretsEqual(credentials.restApiKey, restApiKey)
}

function asyncAdmit (admit: Admit): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    if (!admit(request, reply)) return reply
  }
}

function admitAndAuthorize (admit: Admit, decide: Authorize): preHandlerHookHandler {
  return (request, reply, done) => {
    if (!admit(request, reply)) return
    let pending: Promise<void> | undefined
    try {
      pending = decide(request)
    } catch (error) {
      done(error as Error)
      return
    }
    if (pending) pending.then(() => done(), done)
    else done()
  }
}

/** The function's own rate limit, one counter for both of its routes; the master key is not limited. */
function limiter (scope: FastifyInstance, fn: DeclaredFunction, masterKey: MasterKeyRule): preHandlerAsyncHookHandler[] {
  const limit = fn.options.rateLimit
  if (!limit) return []
  return [scope.rateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => `${fn.name}|${request.ip}`,
    allowList: (request) => masterKeyVerdict((request as FastifyRequest).kitCredentials?.masterKey, request.ip, masterKey) === 'master',
    errorResponseBuilder: (_request, context) => new KitError(
      Parse.Error.REQUEST_LIMIT_EXCEEDED,
      fn.options.customErrorMessage ?? `Too many requests to ${fn.name}: at most ${context.max} per ${limit.windowMs} ms. Retry in ${context.after}.`,
      429
    )
  }) as preHandlerAsyncHookHandler]
}

type Authorize = (request: FastifyRequest) => Promise<void> | undefined

/**
 * Session, requiresAuth / requireUser, then roles — all before the body runs.
 * Answers synchronously (undefined) when nothing has to be looked up: no session token, no roles.
 */
function authorize (fn: DeclaredFunction, options: DeclaredRoutesOptions, masterKey: MasterKeyRule): Authorize {
  const { requireMaster, requireRoles = [], requireAllRoles = false, roleCacheMs, customErrorMessage } = fn.options
  const needsUser = needsSession(fn.options)
  const judge = (caller: Caller): Promise<void> | undefined => {
    if (caller.master) return undefined
    if (requireMaster === true) {
      throw new KitError(Parse.Error.OPERATION_FORBIDDEN, customErrorMessage ?? 'Master key required: this function answers only callers presenting the master key.', 403)
    }
    if (needsUser && !caller.userId) {
      throw new KitError(Parse.Error.OBJECT_NOT_FOUND, customErrorMessage ?? 'Authentication required: send a session token (X-Parse-Session-Token).', 400)
    }
    if (requireRoles.length === 0) return undefined
    return getUserRoles(caller.userId!, { cacheMs: roleCacheMs }).then((roles) => {
      const held = new Set(roles)
      const allowed = requireAllRoles ? requireRoles.every((role) => held.has(role)) : requireRoles.some((role) => held.has(role))
      if (!allowed) {
        throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, customErrorMessage ??
          `Insufficient permissions: requires ${requireAllRoles ? 'every' : 'one'} of the roles ${requireRoles.join(', ')}`)
      }
    })
  }
  return (request) => {
    const credentials = request.kitCredentials!
    const known = callerWithoutLookup(credentials, masterKey, request.ip)
    if (known) {
      request.kitCaller = known
      return judge(known)
    }
    return resolveCaller(credentials, options.appId, masterKey, request.ip).then((caller) => {
      request.kitCaller = caller
      return judge(caller)
    })
  }
}

/**
 * The handler's params merge the query string into the body, but the schema checks
 * only the body of a POST/PUT/PATCH/DELETE: a declared field sent in the query
 * string would reach the handler unchecked, so it is refused.
 */
function declaredFieldsOnlyInBody (fn: DeclaredFunction): preHandlerAsyncHookHandler {
  const declared = new Set(Object.keys(fn.options.validation?.fields ?? {}))
  return async (request) => {
    const query = request.query && typeof request.query === 'object' ? Object.keys(request.query) : []
    const misplaced = query.find((name) => declared.has(name))
    if (misplaced === undefined) return
    throw new KitError(Parse.Error.VALIDATION_ERROR, fn.options.customErrorMessage ??
      `${misplaced} is a declared input of ${fn.name}: send it in the request body, not the query string`, 400)
  }
}

/** Runs the function; SDK saves it makes with the caller's own session reuse the caller resolved for this request. */
function invoke (fn: DeclaredFunction, request: FastifyRequest): unknown {
  const caller = request.kitCaller!
  const credentials = request.kitCredentials!
  const cloudRequest = buildCloudRequest(request, fn.name, caller, credentials)
  return actingAs(caller, credentials.sessionToken, () => fn.invoke(cloudRequest))
}

function entityHandler (fn: DeclaredFunction): RouteHandlerMethod {
  const typed = fn.options.returns !== undefined
  return async (request, reply) => {
    const result = await invoke(fn, request)
    // The response schema's serialiser calls toJSON() itself and sends only the fields it lists.
    if (typed) return reply.send(result)
    // Parse objects serialise through their toJSON(): objectId, ISO dates, pointers.
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(result ?? null))
  }
}

function functionsHandler (fn: DeclaredFunction): RouteHandlerMethod {
  const typed = fn.options.returns !== undefined
  return async (request, reply) => {
    const result = await invoke(fn, request)
    // With `returns`, the answer is the schema's plain JSON (a Parse.Object through its toJSON()).
    if (typed) return reply.send({ result })
    // Exactly Parse's answer, so Parse.Cloud.run in the SDKs decodes it.
    return reply.type('application/json; charset=utf-8').send(JSON.stringify({ result: encodeLikeCloudRun(result) }))
  }
}

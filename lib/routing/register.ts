// One Fastify route per declared function, at {mount}/{prefix}/{name} (plain
// JSON) and {mount}/functions/{name} ({result}, as Parse answers), both going
// through the same checks and the same rate-limit counter.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, onRequestHookHandler, preHandlerAsyncHookHandler, preHandlerHookHandler } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import Parse from 'parse/node'
import { masterKeyVerdict, readCredentials, readHeaderCredentials, secretsEqual, SDK_BODY_KEYS, type Credentials, type MasterKeyRule } from '../access/credentials.js'
import { actingAs, callerNow, lookUpCaller, type Caller } from '../access/session.js'
import { getUserRoles } from '../access/roles.js'
import { cachedRolesNow } from '../access/role-cache.js'
import { metricHooks } from '../metrics/hooks.js'
import { inSpan } from '../tracing/spans.js'
import { KitError } from '../errors.js'
import { acceptTextPlainJson, replyWithParseShape } from '../http.js'
import { encodeLikeCloudRun } from '../parse/internals.js'
import { buildCloudRequest } from './request.js'
import { inputSchema, outputSchema } from './schema.js'
import { lazyValidation, type LazyValidation } from './lazy-validation.js'
import { sharedSerializers, type SharedSerializers } from './shared-serializers.js'
import { Type, type TSchema } from '@sinclair/typebox'
import { HTTP_METHODS, needsSession, type HttpMethod } from './options.js'
import { declaredFunctions, type DeclaredFunction } from './registry.js'
import { bodyIsAnObject } from './body-shape.js'
import { answerRefusals, type Refusal, type RefusalGuards } from './refusals.js'

export interface ClientKeys { clientKey?: string, javascriptKey?: string, dotNetKey?: string }

export interface DeclaredRoutesOptions {
  mountPath: string
  appId: string
  masterKey: string
  /** Where the master key is honoured from: Parse's masterKeyIps (its default when unset). */
  masterKeyIps: string[]
  /** When Parse is configured with a REST API key, callers must present it (or the master key). */
  restApiKey?: string
  /**
   * Parse's other client keys (clientKey, javascriptKey, dotNetKey): when any client key is
   * configured, callers must present one that matches (or the master key), as Parse requires.
   */
  clientKeys?: ClientKeys
  /** @fastify/rate-limit's `store` (shared counters in cluster mode); unset: in memory. */
  rateLimitStore?: unknown
}

// What the kit keeps on a declared route's request, under symbols (as
// @fastify/rate-limit keeps its own): no name an application's decorations could take.
const kCredentials = Symbol('fastify-parse-kit.credentials')
const kCaller = Symbol('fastify-parse-kit.caller')

declare module 'fastify' {
  interface FastifyRequest {
    [kCredentials]: Credentials | null
    [kCaller]: Caller | null
  }
  interface FastifyContextConfig {
    /** Set on routes the kit registers for a declared function. */
    cloudFunction?: DeclaredFunction
  }
}

const QUERY_METHODS = new Set<HttpMethod>(['GET', 'HEAD'])

export async function registerDeclaredRoutes (fastify: FastifyInstance, options: DeclaredRoutesOptions): Promise<DeclaredFunction[]> {
  const functions = declaredFunctions()
  await fastify.register(async function declaredFunctions (scope) {
    acceptTextPlainJson(scope)
    scope.setErrorHandler(replyWithParseShape)
    scope.decorateRequest(kCredentials, null)
    scope.decorateRequest(kCaller, null)
    await scope.register(rateLimit, { global: false, ...(options.rateLimitStore ? { store: options.rateLimitStore as never } : {}) })
    const compilers = { validation: lazyValidation(), serializers: sharedSerializers(scope) }
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
  const refuseWrongAppId = refuseWrongAppIdHeader(options)
  const admit = checkApplication(options, masterKey)
  const decide = authorize(fn, options, masterKey)
  const limits = limiter(scope, fn, masterKey)
  // Without a rate limit, a caller whose headers name the application is admitted and authorized by
  // one onRequest hook, before the body is read; a caller whose credentials are in the body (the
  // JavaScript SDK's text/plain requests) is judged once it is parsed, before validation (and before
  // any preHandler hook of the application's). With a rate limit, the limit comes between
  // the application check and the session lookup, so each step keeps its own hook.
  const early = limits.length === 0
  const onRequest = early ? admitFromHeaders(options.appId, admit, decide) : refuseWrongAppId
  const late = admitFromBody(admit, decide)
  const preValidation: preHandlerHookHandler[] = early
    ? [lateAdmissionHook(late)]
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
      preValidation: inQuery
        ? preValidation
        : [...preValidation, bodyIsAnObject, ...(schema ? [declaredFieldsOnlyInBody(fn) as unknown as preHandlerHookHandler] : [])],
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
  const wrapped = returns ? { 200: Type.Object({ result: asCloudRunResult(returns) }) } : undefined
  route(['POST'], twin, functionsHandler(fn), wrapped)
  if (twinVerbs.includes('GET')) route(['GET'], twin, functionsHandler(fn), wrapped)
  refuse(HTTP_METHODS.filter((method) => !twinVerbs.includes(method) && !(method === 'HEAD' && twinVerbs.includes('GET'))), twin, 'POST', twinVerbs)
}

/** A wrong app id in the header is refused before the body is even read. */
function refuseWrongAppIdHeader (options: DeclaredRoutesOptions): onRequestHookHandler {
  return (request, reply, done) => {
    if (refusedAppIdHeader(request, reply, options.appId)) return
    done()
  }
}

/** True once a wrong X-Parse-Application-Id header was answered 403. */
function refusedAppIdHeader (request: FastifyRequest, reply: FastifyReply, appId: string): boolean {
  const presented = request.headers['x-parse-application-id']
  if (presented === undefined || presented === appId) return false
  reply.code(403).send({ error: 'unauthorized' })
  return true
}

type Admit = (request: FastifyRequest, reply: FastifyReply, credentials?: Credentials) => boolean

/**
 * Application id (and REST API key when configured) before anything else; SDK keys leave the body.
 * False once refused (answered 403). `credentials`: already read from the headers (onRequest, no body yet).
 */
function checkApplication (options: DeclaredRoutesOptions, masterKey: MasterKeyRule): Admit {
  const keys = options.clientKeys ?? {}
  const keysConfigured = Boolean(options.restApiKey || keys.clientKey || keys.javascriptKey || keys.dotNetKey)
  return (request, reply, credentials = readCredentials(request.headers, request.body)) => {
    if (credentials.appId !== options.appId || (keysConfigured && !clientKeyOrMaster(credentials, request.ip, options, masterKey))) {
      reply.code(403).send({ error: 'unauthorized' })
      return false
    }
    request[kCredentials] = credentials
    withoutSdkKeys(request.body)
    return true
  }
}

function withoutSdkKeys (body: unknown): void {
  if (!body || typeof body !== 'object') return
  const fields = body as Record<string, unknown>
  // Only keys that are there: a delete changes the object's shape, which slows every later read of it.
  for (const key of SDK_BODY_KEYS) if (key in fields) delete fields[key]
}

/**
 * onRequest: a caller whose headers name the application (header or Basic auth) is judged here,
 * exactly as readCredentials would read it with the body (the body's keys do not count then),
 * checks in the usual order: the app id header, the app id and REST key, then session and roles.
 * Other callers go on to admitFromBody.
 */
function admitFromHeaders (appId: string, admit: Admit, decide: Authorize): onRequestHookHandler {
  return (request, reply, done) => {
    if (refusedAppIdHeader(request, reply, appId)) return
    const credentials = readHeaderCredentials(request.headers)
    if (credentials === undefined) {
      done()
      return
    }
    if (!admit(request, reply, credentials)) return
    settle(decide, request, done)
  }
}

/** Runs the authorization step, then `done` (at once when nothing was looked up). */
function settle (decide: Authorize, request: FastifyRequest, done: (error?: Error) => void): void {
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

/**
 * After the body is parsed: a caller admitted from the headers only loses the SDK keys from the body;
 * any other is admitted from the body and authorized now. True once admitted, false once refused
 * (answered 403), a promise while a session or roles are looked up; authorization errors are thrown.
 */
type LateAdmission = (request: FastifyRequest, reply: FastifyReply) => boolean | Promise<boolean>

function admitFromBody (admit: Admit, decide: Authorize): LateAdmission {
  return (request, reply) => {
    if (request[kCaller] !== null) {
      withoutSdkKeys(request.body)
      return true
    }
    if (!admit(request, reply)) return false
    const pending = decide(request)
    return pending ? pending.then(() => true) : true
  }
}

function lateAdmissionHook (late: LateAdmission): preHandlerHookHandler {
  return (request, reply, done) => {
    let verdict: boolean | Promise<boolean>
    try {
      verdict = late(request, reply)
    } catch (error) {
      done(error as Error)
      return
    }
    if (verdict === true) done()
    else if (verdict !== false) verdict.then((admitted) => { if (admitted) done() }, done)
  }
}

/** Parse's rule: when client keys are configured, any one of them matching (or the master key) admits. */
function clientKeyOrMaster (credentials: Credentials, ip: string, options: DeclaredRoutesOptions, masterKey: MasterKeyRule): boolean {
  const keys = options.clientKeys ?? {}
  return masterKeyVerdict(credentials.masterKey, ip, masterKey) === 'master' ||
    secretsEqual(credentials.restApiKey, options.restApiKey) ||
    secretsEqual(credentials.javascriptKey, keys.javascriptKey) ||
    secretsEqual(credentials.clientKey, keys.clientKey) ||
    secretsEqual(credentials.dotNetKey, keys.dotNetKey)
}

function asyncAdmit (admit: Admit): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    if (!admit(request, reply)) return reply
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
    onExceeded: () => metricHooks().rateLimited(fn.name),
    allowList: (request) => masterKeyVerdict((request as FastifyRequest)[kCredentials]?.masterKey, request.ip, masterKey) === 'master',
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
    // Roles the cache holds answer at once; others are read (and cached) first.
    const cached = cachedRolesNow(caller.userId!, roleCacheMs)
    if (cached) return judgeRoles(cached)
    return getUserRoles(caller.userId!, { cacheMs: roleCacheMs }).then(judgeRoles)
  }
  const judgeRoles = (roles: string[]): undefined => {
    const allowed = requireAllRoles ? requireRoles.every((role) => roles.includes(role)) : requireRoles.some((role) => roles.includes(role))
    if (!allowed) {
      throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, customErrorMessage ??
        `Insufficient permissions: requires ${requireAllRoles ? 'every' : 'one'} of the roles ${requireRoles.join(', ')}`)
    }
    return undefined
  }
  return (request) => {
    const credentials = request[kCredentials]!
    // The master key, no session, or a session Parse's in-process cache holds: no promise.
    const known = callerNow(credentials, options.appId, masterKey, request.ip)
    if (known) {
      request[kCaller] = known
      return judge(known)
    }
    return lookUpCaller(credentials, options.appId).then((caller) => {
      request[kCaller] = caller
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
  const caller = request[kCaller]!
  const credentials = request[kCredentials]!
  const cloudRequest = buildCloudRequest(request, fn.name, caller, credentials)
  return inSpan(`fpk.function ${fn.name}`, { 'fpk.function.name': fn.name }, () => actingAs(caller, credentials.sessionToken, () => fn.invoke(cloudRequest)))
}

/** Answers with what the function returned; a function that returns a value (not a promise) is answered without a promise. */
function answering (fn: DeclaredFunction, send: (reply: FastifyReply, result: unknown) => void): RouteHandlerMethod {
  return (request, reply) => {
    const result = invoke(fn, request)
    if (isThenable(result)) return Promise.resolve(result).then((value) => { send(reply, value) })
    send(reply, result)
    return undefined
  }
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

const JSON_TYPE = 'application/json; charset=utf-8'

function entityHandler (fn: DeclaredFunction): RouteHandlerMethod {
  // The response schema's serialiser calls toJSON() itself and sends only the fields it lists.
  if (fn.options.returns !== undefined) return answering(fn, (reply, result) => { reply.send(result) })
  // Parse objects serialise through their toJSON(): objectId, ISO dates, pointers.
  return answering(fn, (reply, result) => { reply.type(JSON_TYPE).send(JSON.stringify(result ?? null)) })
}

function functionsHandler (fn: DeclaredFunction): RouteHandlerMethod {
  // With `returns`, the answer is the schema's JSON; a Parse.Object keeps the tags Parse.Cloud.run
  // decodes back into a Parse.Object (`__type`, `className`), as Parse Cloud Code answers it.
  if (fn.options.returns !== undefined) return answering(fn, (reply, result) => { reply.send({ result: taggedIfParseObject(result) }) })
  // Exactly Parse's answer, so Parse.Cloud.run in the SDKs decodes it.
  return answering(fn, (reply, result) => { reply.type(JSON_TYPE).send(JSON.stringify({ result: encodeLikeCloudRun(result) })) })
}

function taggedIfParseObject (result: unknown): unknown {
  if (!(result instanceof Parse.Object)) return result
  return { ...result.toJSON(), __type: 'Object', className: result.className }
}

/**
 * The /functions twin's `result`: the declared answer and, when it is an object, the two tags
 * a returned Parse.Object carries there (without them in the schema, the serialiser drops them).
 */
function asCloudRunResult (returns: TSchema): TSchema {
  const schema = returns as TSchema & { type?: unknown, properties?: Record<string, unknown> }
  if (schema.type !== 'object' || !schema.properties || '__type' in schema.properties) return returns
  return {
    ...schema,
    properties: {
      ...schema.properties,
      __type: { type: 'string', enum: ['Object'], description: 'Set when the function answered a Parse.Object: Parse.Cloud.run decodes it into one' },
      className: { type: 'string', description: 'The Parse class of that object' }
    }
  } as TSchema
}

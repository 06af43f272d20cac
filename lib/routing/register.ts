// One Fastify route per declared function, at {mount}/{prefix}/{name} (plain
// JSON) and {mount}/functions/{name} ({result}, as Parse answers), both going
// through the same checks and the same rate-limit counter.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod, onRequestHookHandler, preHandlerAsyncHookHandler, preHandlerHookHandler } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import Parse from 'parse/node'
import { SDK_BODY_KEYS } from '../access/credentials.js'
import { Admitter, UNAUTHORIZED, type Admission, type ClientKeys } from '../access/admission.js'
import { authorization, type Authorize } from '../access/authorization.js'
import { actingAs } from '../access/session.js'
import { metricHooks } from '../metrics/hooks.js'
import { inSpan } from '../tracing/spans.js'
import { KitError } from '../errors.js'
import { acceptTextPlainJson, replyWithParseShape } from '../http.js'
import { encodeLikeCloudRun } from '../parse/internals.js'
import { buildCloudRequest } from './request.js'
import { createdRowClass } from '../model/create-row.js'
import { inputSchema, outputSchema, type ObjectSchema } from './schema.js'
import { lazyValidation, type LazyValidation } from './lazy-validation.js'
import { sharedSerializers, type SharedSerializers } from './shared-serializers.js'
import { Type, type TSchema } from '@sinclair/typebox'
import { HTTP_METHODS, needsSession, type HttpMethod } from './options.js'
import { declaredFunctions, type DeclaredFunction } from './registry.js'
import { bodyIsAnObject } from './body-shape.js'
import { dateFields, decodeDates, parseDatesAsIso } from './parse-dates.js'
import { parseDatesToIso } from './answer-dates.js'
import { getVerbs } from './head-route.js'
import { Refusals, type Refusal, type RefusalGuards } from './refusals.js'
import { FunctionAliases } from './function-aliases.js'
import { mountPrefix } from '../mount-prefix.js'

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

// What the kit keeps on a declared route's request: its one admission (credentials,
// master-key verdict, caller; lib/access/admission.ts), under a symbol (as
// @fastify/rate-limit keeps its own): no name an application's decorations could take.
const kAdmission = Symbol('fastify-parse-kit.admission')

// Which declared function a request is for, as its route's config names it (read where a
// request is answered, the error reply and the metrics, without importing this code).
declare module 'fastify' {
  interface FastifyRequest {
    [kAdmission]: Admission | null
  }
  interface FastifyContextConfig {
    /** Set on routes the kit registers for one declared function. */
    cloudFunction?: DeclaredFunction
    /** Set on the route the /functions twins share (function-aliases.ts): the function a request's path parameters name. */
    cloudFunctionOf?: (params: unknown) => DeclaredFunction | undefined
  }
}

const QUERY_METHODS = new Set<HttpMethod>(['GET', 'HEAD'])

export async function registerDeclaredRoutes (fastify: FastifyInstance, options: DeclaredRoutesOptions): Promise<DeclaredFunction[]> {
  const functions = declaredFunctions()
  let aliases: FunctionAliases | undefined
  await fastify.register(async function declaredFunctions (scope) {
    acceptTextPlainJson(scope)
    scope.setErrorHandler(replyWithParseShape)
    scope.decorateRequest(kAdmission, null)
    await scope.register(rateLimit, { global: false, ...(options.rateLimitStore ? { store: options.rateLimitStore as never } : {}) })
    const compilers = { validation: lazyValidation(), serializers: sharedSerializers(scope) }
    // One admitter (and one master-key rule, whose digest is kept per rule object) for every route.
    const admitter = new Admitter({
      appId: options.appId,
      masterKey: { key: options.masterKey, ips: options.masterKeyIps },
      restApiKey: options.restApiKey,
      clientKeys: options.clientKeys
    })
    const refusals: Refusal[] = []
    const answerer = new Refusals(scope)
    aliases = new FunctionAliases(scope, baseOf(options))
    for (const fn of functions) registerFunction(scope, fn, options, admitter, compilers, refusals, aliases)
    aliases.register(compilers.serializers.compile)
    // A verb a path does not take is answered only to a caller with the right app id.
    const guards: RefusalGuards = { onRequest: refuseWrongAppIdHeader(admitter), preValidation: admitInPreValidation(admitter) }
    answerer.answer(baseOf(options), refusals, guards)
  })
  aliases?.refuseLaterRoutes(fastify)
  return functions
}

const baseOf = (options: DeclaredRoutesOptions) => mountPrefix(options.mountPath)

function registerFunction (
  scope: FastifyInstance, fn: DeclaredFunction, options: DeclaredRoutesOptions, admitter: Admitter,
  compilers: { validation: LazyValidation, serializers: SharedSerializers }, refusals: Refusal[], aliases: FunctionAliases
): void {
  const base = baseOf(options)
  const schema = inputSchema(fn.options)
  const returns = outputSchema(fn.options)
  // Order: app id, rate limit, session and roles, and only then the input schema,
  // so a caller who may not call the function learns nothing about its input.
  const authorize = authorization(fn.options, needsSession(fn.options), admitter.appId)
  const limits = limiter(scope, fn)
  // Without a rate limit, a caller whose headers name the application is admitted and authorized by
  // one onRequest hook, before the body is read; a caller whose credentials are in the body (the
  // JavaScript SDK's text/plain requests) is judged once it is parsed, before validation (and before
  // any preHandler hook of the application's). With a rate limit, the limit comes between
  // the admission and the session lookup, so each step keeps its own hook.
  const early = limits.length === 0
  const onRequest = early ? admitFromHeaders(admitter, authorize) : refuseWrongAppIdHeader(admitter)
  const preValidation: preHandlerHookHandler[] = early
    ? [admitFromBody(admitter, authorize)]
    : [admitInPreValidation(admitter), ...limits as unknown as preHandlerHookHandler[], async (request) => authorize(request[kAdmission]!)]
  const dates = dateFields(fn.options)
  const bodyChecks = schema
    ? [bodyIsAnObject, declaredFieldsOnlyInBody(fn) as unknown as preHandlerHookHandler, ...(dates.length > 0 ? [parseDatesAsIso(dates)] : [])]
    : [bodyIsAnObject]
  const route = (methods: HttpMethod[], url: string, handler: RouteHandlerMethod, response?: object) => {
    const inQuery = methods.every((method) => QUERY_METHODS.has(method))
    const routeSchema = { ...(schema ? (inQuery ? { querystring: schema } : { body: schema }) : {}), ...(response ? { response } : {}) }
    scope.route({
      ...(inQuery && methods.includes('GET') ? getVerbs(scope, methods, url) : { method: methods }),
      url,
      schema: Object.keys(routeSchema).length > 0 ? routeSchema : undefined,
      // Compiled on first use (boot stays cheap with many functions), shared with the twin.
      ...(schema ? { validatorCompiler: compilers.validation.forRoute() } : {}),
      // Compiled at boot, once per schema object (the entity routes share one, the twin's routes another).
      ...(response ? { serializerCompiler: compilers.serializers.forRoute() } : {}),
      config: { cloudFunction: fn },
      onRequest,
      preValidation: inQuery ? preValidation : [...preValidation, ...bodyChecks],
      handler
    })
  }
  // A routed function's twin: the same steps, run by the twins' shared route (function-aliases.ts).
  const alias = (verb: 'POST' | 'GET', url: string, answer?: object) => {
    const inQuery = verb === 'GET'
    const validate = schema ? compilers.validation.forRoute()({ schema: schema as FastifySchema, method: verb, url, httpPart: inQuery ? 'querystring' : 'body' }) : undefined
    aliases.add(fn, url, verb, {
      onRequest,
      preValidation: inQuery ? preValidation : [...preValidation, ...bodyChecks],
      ...(validate ? { validate } : {}),
      handler: functionsHandler(fn),
      ownRoute: () => route([verb], url, functionsHandler(fn), answer ? { 200: answer } : undefined)
    }, answer)
  }
  // Verbs the function does not take: answered 405 by Refusals#answer, once every path is known.
  const refuse = (refused: HttpMethod[], url: string, served: HttpMethod, allowed: HttpMethod[], reaches?: (url: string) => boolean) => {
    if (refused.length > 0) refusals.push({ url, served, refused, allowed, ...(reaches ? { reaches } : {}) })
  }

  if (fn.prefix) {
    const url = `${base}/${fn.prefix}/${fn.name}`
    const declared = fn.options.methods ?? ['POST']
    // A GET route answers HEAD too (head-route.ts).
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
  // Without @Route the twin is the function's only path, so it takes every declared verb.
  const twin = `${base}/functions/${fn.name}`
  const declaredVerbs = fn.options.methods ?? ['POST']
  const twinVerbs: HttpMethod[] = fn.prefix
    ? declaredVerbs.includes('GET') ? ['POST', 'GET'] : ['POST']
    : ['POST', ...declaredVerbs.filter((method) => method !== 'POST' && method !== 'HEAD')]
  const wrapped = returns ? Type.Object({ result: asCloudRunResult(returns) }) : undefined
  const aliased = fn.prefix !== undefined && aliases.takes(fn, twin, twinVerbs)
  if (aliased) {
    alias('POST', twin, wrapped)
    if (twinVerbs.includes('GET')) alias('GET', twin, wrapped)
  } else {
    const response = wrapped ? { 200: wrapped } : undefined
    route(['POST'], twin, functionsHandler(fn), response)
    if (twinVerbs.includes('GET')) route(['GET'], twin, functionsHandler(fn), response)
    const inBody = twinVerbs.filter((method) => method !== 'POST' && !QUERY_METHODS.has(method))
    if (inBody.length > 0) route(inBody, twin, functionsHandler(fn), response)
  }
  refuse(HTTP_METHODS.filter((method) => !twinVerbs.includes(method) && !(method === 'HEAD' && twinVerbs.includes('GET'))), twin, 'POST', twinVerbs, aliased ? aliases.reaches(fn) : undefined)
}

/** A wrong app id in the header is refused before the body is even read. */
function refuseWrongAppIdHeader (admitter: Admitter): onRequestHookHandler {
  return (request, reply, done) => {
    if (admitter.refusesAppIdHeader(request.headers)) {
      refuse(reply)
      return
    }
    done()
  }
}

/** Admission's refusal, as Parse answers it (a new object each time: an application's preSerialization hook may change it). */
function refuse (reply: FastifyReply): void {
  reply.code(403).send({ error: UNAUTHORIZED })
}

/**
 * onRequest: a caller whose headers name the application (header or Basic auth) is admitted and
 * authorized here, before the body is read, in the usual order: the app id header, the app id and
 * client keys, then session and roles. Other callers go on to admitFromBody.
 */
function admitFromHeaders (admitter: Admitter, authorize: Authorize): onRequestHookHandler {
  return (request, reply, done) => {
    const admission = admitter.fromHeaders(request)
    if (admission === undefined) {
      done()
      return
    }
    if (admission === UNAUTHORIZED) {
      refuse(reply)
      return
    }
    request[kAdmission] = admission
    settle(authorize, admission, done)
  }
}

/**
 * preValidation, after the body is parsed: a caller admitted from the headers only loses the SDK
 * keys from the body; any other is admitted from headers and body, then authorized.
 */
function admitFromBody (admitter: Admitter, authorize: Authorize): preHandlerHookHandler {
  return (request, reply, done) => {
    if (request[kAdmission] !== null) {
      withoutSdkKeys(request.body)
      done()
      return
    }
    const admission = admitter.admit(request)
    if (admission === UNAUTHORIZED) {
      refuse(reply)
      return
    }
    request[kAdmission] = admission
    withoutSdkKeys(request.body)
    settle(authorize, admission, done)
  }
}

/** Runs the authorization, then `done` (at once when nothing was looked up). */
function settle (authorize: Authorize, admission: Admission, done: (error?: Error) => void): void {
  let pending: Promise<void> | undefined
  try {
    pending = authorize(admission)
  } catch (error) {
    done(error as Error)
    return
  }
  if (pending) pending.then(() => done(), done)
  else done()
}

/** Admission alone (headers and body), for routes whose rate limit comes before the authorization, and for 405s. */
function admitInPreValidation (admitter: Admitter): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const admission = admitter.admit(request)
    if (admission === UNAUTHORIZED) {
      refuse(reply)
      return reply
    }
    request[kAdmission] = admission
    withoutSdkKeys(request.body)
  }
}

function withoutSdkKeys (body: unknown): void {
  if (!body || typeof body !== 'object') return
  const fields = body as Record<string, unknown>
  // Only keys that are there: a delete changes the object's shape, which slows every later read of it.
  for (const key of SDK_BODY_KEYS) if (key in fields) delete fields[key]
}

/** The function's own rate limit, one counter for both of its routes; the master key (the admission's verdict) is not limited. */
function limiter (scope: FastifyInstance, fn: DeclaredFunction): preHandlerAsyncHookHandler[] {
  const limit = fn.options.rateLimit
  if (!limit) return []
  return [scope.rateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => `${fn.name}|${request.ip}`,
    onExceeded: () => metricHooks().rateLimited(fn.name),
    allowList: (request) => (request as FastifyRequest)[kAdmission]?.verdict === 'master',
    errorResponseBuilder: (_request, context) => new KitError(
      Parse.Error.REQUEST_LIMIT_EXCEEDED,
      fn.options.customErrorMessage ?? `Too many requests to ${fn.name}: at most ${context.max} per ${limit.windowMs} ms. Retry in ${context.after}.`,
      429
    )
  }) as preHandlerAsyncHookHandler]
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
      `querystring/${misplaced} must be sent in the request body: it is a declared input of ${fn.name}`, 400)
  }
}

/** Runs the function; SDK saves it makes with the caller's own session reuse the caller resolved for this request. */
function invoke (fn: DeclaredFunction, request: FastifyRequest, dates: string[]): unknown {
  const admission = request[kAdmission]!
  const caller = admission.caller!
  const credentials = admission.credentials
  const cloudRequest = buildCloudRequest(request, fn.name, caller, credentials)
  // Dates as Parse's functions router hands them over (routing/parse-dates.ts).
  decodeDates(cloudRequest.params, dates)
  return inSpan(`fpk.function ${fn.name}`, { 'fpk.function.name': fn.name }, () => actingAs(caller, credentials.sessionToken, () => fn.invoke(cloudRequest)))
}

/** Answers with what the function returned; a function that returns a value (not a promise) is answered without a promise. */
function answering (fn: DeclaredFunction, send: (reply: FastifyReply, result: unknown) => void): RouteHandlerMethod {
  const dates = dateFields(fn.options)
  return (request, reply) => {
    const result = invoke(fn, request, dates)
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
  if (fn.options.returns !== undefined) {
    const isoDates = parseDatesToIso(outputSchema(fn.options))
    // Fastify sends a string as it is (text/plain), past the serialiser: a string is answered as JSON here.
    return answering(fn, (reply, result) => {
      if (typeof result === 'string') reply.type(JSON_TYPE).send(JSON.stringify(result))
      else reply.send(isoDates ? isoDates(result) : result)
    })
  }
  // Parse objects serialise through their toJSON(): objectId, ISO dates, pointers.
  return answering(fn, (reply, result) => { reply.type(JSON_TYPE).send(JSON.stringify(result ?? null)) })
}

function functionsHandler (fn: DeclaredFunction): RouteHandlerMethod {
  // With `returns`, the answer is the schema's JSON; a Parse.Object keeps the tags Parse.Cloud.run
  // decodes back into a Parse.Object (`__type`, `className`), as Parse Cloud Code answers it.
  if (fn.options.returns !== undefined) {
    const isoDates = parseDatesToIso(outputSchema(fn.options)) ?? ((value: unknown) => value)
    // A string is answered as on the function's own route, whatever schema `returns` gives (its serialiser would throw).
    return answering(fn, (reply, result) => {
      if (typeof result === 'string') reply.type(JSON_TYPE).send(JSON.stringify({ result }))
      else reply.send({ result: isoDates(taggedIfParseObject(result)) })
    })
  }
  // Exactly Parse's answer, so Parse.Cloud.run in the SDKs decodes it.
  return answering(fn, (reply, result) => { reply.type(JSON_TYPE).send(JSON.stringify({ result: encodeLikeCloudRun(taggedIfCreatedRow(result)) })) })
}

function taggedIfParseObject (result: unknown): unknown {
  if (result instanceof Parse.Object) return { ...result.toJSON(), __type: 'Object', className: result.className }
  return taggedIfCreatedRow(result)
}

/** A row createRow answered carries the same tags, so Parse.Cloud.run decodes it as it decodes a saved object. */
function taggedIfCreatedRow (result: unknown): unknown {
  const rowClass = createdRowClass(result)
  return rowClass ? { ...result as object, __type: 'Object', className: rowClass } : result
}

/**
 * The /functions twin's `result`: the declared answer and, when it is an object, the two tags
 * a returned Parse.Object carries there (without them in the schema, the serialiser drops them).
 */
function asCloudRunResult (returns: TSchema | ObjectSchema): TSchema {
  const schema = returns as TSchema & { type?: unknown, properties?: Record<string, unknown> }
  if (schema.type !== 'object' || !schema.properties || '__type' in schema.properties) return schema
  return {
    ...schema,
    properties: {
      ...schema.properties,
      __type: { type: 'string', enum: ['Object'], description: 'Set when the function answered a Parse.Object: Parse.Cloud.run decodes it into one' },
      className: { type: 'string', description: 'The Parse class of that object' }
    }
  } as TSchema
}

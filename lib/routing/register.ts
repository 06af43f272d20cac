// One Fastify route per declared function, at {mount}/{prefix}/{name} (plain
// JSON) and {mount}/functions/{name} ({result}, as Parse answers), both going
// through the same checks and the same rate-limit counter.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod, RouteOptions, onRequestHookHandler, preHandlerAsyncHookHandler, preHandlerHookHandler } from 'fastify'
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
import type { TSchema } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { HTTP_METHODS, needsSession, type HttpMethod } from './options.js'
import { declaredFunctions, type DeclaredFunction } from './registry.js'
import { bodyIsAnObject } from './body-shape.js'
import { dateFields, decodeDates, parseDatesAsIso } from './parse-dates.js'
import { parseDatesToIso } from './answer-dates.js'
import { exposesHeadRoutes, getVerbs } from './head-route.js'
import { Refusals, type Refusal, type RefusalGuards } from './refusals.js'
import { FunctionAliases, type AliasSteps } from './function-aliases.js'
import { mountPrefix } from '../mount-prefix.js'
import { rateLimitAddress } from '../access/client-address.js'

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
    // One admitter (and one master-key rule, whose digest is kept per rule object) for every route.
    const admitter = new Admitter({
      appId: options.appId,
      masterKey: { key: options.masterKey, ips: options.masterKeyIps },
      restApiKey: options.restApiKey,
      clientKeys: options.clientKeys
    })
    const base = baseOf(options)
    aliases = new FunctionAliases(scope, base)
    const answerer = new Refusals(scope)
    const shared: SharedParts = {
      scope,
      base,
      admitter,
      validation: lazyValidation(),
      serializers: sharedSerializers(scope),
      refusals: [],
      aliases,
      // Tested once for the scope, not per GET route (head-route.ts).
      headRoutes: exposesHeadRoutes(scope),
      verbLists: new Map()
    }
    for (const fn of functions) registerFunction(shared, fn)
    aliases.register(shared.serializers.compile)
    // A verb a path does not take is answered only to a caller with the right app id.
    const guards: RefusalGuards = { onRequest: refuseWrongAppIdHeader(admitter), preValidation: admitInPreValidation(admitter) }
    answerer.answer(base, shared.refusals, guards, aliases)
  })
  aliases?.refuseLaterRoutes(fastify)
  return functions
}

const baseOf = (options: DeclaredRoutesOptions) => mountPrefix(options.mountPath)

/** What every declared function's routes share: made once per boot, not once per function. */
interface SharedParts {
  scope: FastifyInstance
  /** The mount's path prefix. */
  base: string
  admitter: Admitter
  validation: LazyValidation
  serializers: SharedSerializers
  /** Verbs the declared paths do not take, answered 405 by Refusals#answer once every path is known. */
  refusals: Refusal[]
  aliases: FunctionAliases
  headRoutes: boolean
  /** A path's refused and allowed verbs by the verbs it takes: a few distinct lists, shared by every path. */
  verbLists: Map<string, VerbLists>
}

/** The verbs a path refuses, and those its 405 names; read only, shared by the paths taking the same verbs. */
interface VerbLists {
  refused: HttpMethod[]
  allowed: HttpMethod[]
}

function registerFunction (shared: SharedParts, fn: DeclaredFunction): void {
  const { scope, base, admitter, aliases } = shared
  const fnOptions = fn.options
  const schema = inputSchema(fnOptions)
  const returns = fnOptions.returns === undefined ? undefined : outputSchema(fnOptions)
  // Order: app id, rate limit, session and roles, and only then the input schema,
  // so a caller who may not call the function learns nothing about its input.
  const authorize = authorization(fnOptions, needsSession(fnOptions), admitter.appId)
  // Without a rate limit, a caller whose headers name the application is admitted and authorized by
  // one onRequest hook, before the body is read; a caller whose credentials are in the body (the
  // JavaScript SDK's text/plain requests) is judged once it is parsed, before validation (and before
  // any preHandler hook of the application's). With a rate limit, the limit comes between
  // the admission and the session lookup, so each step keeps its own hook.
  const limit = fnOptions.rateLimit ? limiter(scope, fn) : undefined
  const onRequest = limit === undefined ? admitFromHeaders(admitter, authorize) : refuseWrongAppIdHeader(admitter)
  const preValidation: preHandlerHookHandler[] = limit === undefined
    ? [admitFromBody(admitter, authorize)]
    : [admitInPreValidation(admitter), limit as unknown as preHandlerHookHandler, async (request) => authorize(request[kAdmission]!)]
  const dates = dateFields(fnOptions)
  const bodyChecks: preHandlerHookHandler[] = schema
    ? dates.length > 0
      ? [bodyIsAnObject, declaredFieldsOnlyInBody(fn) as unknown as preHandlerHookHandler, parseDatesAsIso(dates)]
      : [bodyIsAnObject, declaredFieldsOnlyInBody(fn) as unknown as preHandlerHookHandler]
    : [bodyIsAnObject]
  const parts: FunctionParts = { fn, schema, dates, onRequest, preValidation, bodyChecks, twinHandler: undefined }

  const declared = fnOptions.methods ?? DEFAULT_METHODS
  if (fn.prefix) {
    const url = `${base}/${fn.prefix}/${fn.name}`
    // A GET route answers HEAD too (head-route.ts).
    const served = declared.includes('GET') ? declared.filter((method) => method !== 'HEAD') : declared
    const inQuery = served.filter((method) => QUERY_METHODS.has(method))
    const inBody = served.filter((method) => !QUERY_METHODS.has(method))
    // With `returns`, Fastify serialises the answer (fast-json-stringify) and the docs show it as the 200 response.
    const response = returns ? { 200: returns } : undefined
    // One handler for both of the path's routes (Fastify binds each route its own).
    const handler = entityHandler(fn, dates)
    if (inQuery.length > 0) route(shared, parts, inQuery, url, handler, response)
    if (inBody.length > 0) route(shared, parts, inBody, url, handler, response)
    refuseVerbs(shared, verbListsOf(shared, declared), url, served[0], undefined, undefined)
  }
  // Parse's /functions twin: POST always (the verb Parse.Cloud.run sends; a body-less
  // read is harmless), GET only for functions that declare GET, every other verb 405.
  // Without @Route the twin is the function's only path, so it takes every declared verb.
  const twin = `${base}/functions/${fn.name}`
  const twinVerbs: HttpMethod[] = fn.prefix
    ? declared.includes('GET') ? ['POST', 'GET'] : ['POST']
    : ['POST', ...declared.filter((method) => method !== 'POST' && method !== 'HEAD')]
  const wrapped = returns ? Type.Object({ result: asCloudRunResult(returns) }) : undefined
  const aliased = fn.prefix !== undefined && aliases.takes(fn, twin)
  if (aliased) {
    alias(shared, parts, 'POST', twin, wrapped)
    if (twinVerbs.includes('GET')) alias(shared, parts, 'GET', twin, wrapped)
  } else {
    const response = wrapped ? { 200: wrapped } : undefined
    route(shared, parts, ['POST'], twin, functionsAnswer(parts), response)
    if (twinVerbs.includes('GET')) route(shared, parts, ['GET'], twin, functionsAnswer(parts), response)
    const inBody = twinVerbs.filter((method) => method !== 'POST' && !QUERY_METHODS.has(method))
    if (inBody.length > 0) route(shared, parts, inBody, twin, functionsAnswer(parts), response)
  }
  refuseVerbs(shared, verbListsOf(shared, twinVerbs), twin, 'POST', fn.prefix !== undefined ? aliases.looseKeyOf(twin) : undefined, aliased ? fn : undefined)
}

const DEFAULT_METHODS: HttpMethod[] = ['POST']

/**
 * One function's steps, shared by its routes and its twin. Its routes are registered by the
 * functions below rather than by closures made per function: a thousand functions' boot
 * then allocates (and, under tsx, names) four fewer functions each.
 */
interface FunctionParts {
  fn: DeclaredFunction
  schema: ObjectSchema | undefined
  dates: string[]
  onRequest: onRequestHookHandler
  preValidation: preHandlerHookHandler[]
  bodyChecks: preHandlerHookHandler[]
  /** The /functions twin's handler (`{ result }`), made on first use and shared by its verbs. */
  twinHandler: RouteHandlerMethod | undefined
}

/** A route's preValidation hooks: a fresh array for each body route (an application's onRoute hook may change it). */
function hooksFor (parts: FunctionParts, inQuery: boolean): preHandlerHookHandler[] {
  return inQuery ? parts.preValidation : parts.preValidation.concat(parts.bodyChecks)
}

function functionsAnswer (parts: FunctionParts): RouteHandlerMethod {
  return (parts.twinHandler ??= functionsHandler(parts.fn, parts.dates))
}

function route (shared: SharedParts, parts: FunctionParts, methods: HttpMethod[], url: string, handler: RouteHandlerMethod, response?: object): void {
  const { schema } = parts
  const inQuery = isQueryOnly(methods)
  // Every key this code or Fastify's copy of the options may set is in the literal: Fastify
  // copies the options with a spread and adds path, routePath, prefix, logLevel and
  // attachValidation to the copy, which (like any key added to a spread's result) turns it
  // into a slow dictionary object, about 2 KB per route at boot. Given here, they are
  // overwritten in place. Undefined means what an absent key means to Fastify.
  const options = {
    method: methods,
    url,
    path: undefined,
    routePath: undefined,
    prefix: undefined,
    logLevel: undefined,
    attachValidation: undefined,
    exposeHeadRoute: undefined,
    schema: undefined,
    config: { cloudFunction: parts.fn },
    onRequest: parts.onRequest,
    preValidation: hooksFor(parts, inQuery),
    onSend: undefined,
    validatorCompiler: undefined,
    serializerCompiler: undefined,
    handler
  } as RouteOptions
  if (inQuery && methods.includes('GET')) headVerbs(shared, options, methods, url)
  if (schema || response) options.schema = routeSchema(schema, inQuery, response)
  // Compiled on first use (boot stays cheap with many functions), shared with the twin.
  if (schema) options.validatorCompiler = shared.validation.forRoute()
  // Compiled at boot, once per schema object (the entity routes share one, the twin's routes another).
  if (response) options.serializerCompiler = shared.serializers.forRoute()
  shared.scope.route(options)
}

/**
 * A route's `schema`: its input part and its answer. Keys set on a literal, not spread into one:
 * Fastify adds a key of its own to this object, and one made by spreads then turns into a slow
 * dictionary object (about three times the size), once per route at boot.
 */
function routeSchema (input: ObjectSchema | undefined, inQuery: boolean, response: object | undefined): FastifySchema {
  const schema: FastifySchema = {}
  if (input) {
    if (inQuery) schema.querystring = input
    else schema.body = input
  }
  if (response) schema.response = response
  return schema
}

/** A routed function's twin: the same steps, run by the twins' shared route (function-aliases.ts). */
function alias (shared: SharedParts, parts: FunctionParts, verb: 'POST' | 'GET', url: string, answer?: object): void {
  const { schema } = parts
  const inQuery = verb === 'GET'
  const validate = schema ? shared.validation.forRoute()({ schema: schema as FastifySchema, method: verb, url, httpPart: inQuery ? 'querystring' : 'body' }) : undefined
  shared.aliases.add(parts.fn, url, verb, new TwinSteps(shared, parts, verb, url, answer, hooksFor(parts, inQuery), validate), answer)
}

/**
 * A twin's steps for one verb. Its handler is made on the twin's first call and its own
 * route only when the shared route cannot serve it: a class, so that a thousand twins'
 * boot makes neither closure (one object per twin verb, its methods on the prototype).
 */
class TwinSteps implements AliasSteps {
  readonly onRequest: onRequestHookHandler
  constructor (
    private readonly shared: SharedParts,
    private readonly parts: FunctionParts,
    private readonly verb: 'POST' | 'GET',
    private readonly url: string,
    private readonly answer: object | undefined,
    readonly preValidation: preHandlerHookHandler[],
    readonly validate: AliasSteps['validate']
  ) {
    this.onRequest = parts.onRequest
  }

  get handler (): RouteHandlerMethod {
    return functionsAnswer(this.parts)
  }

  ownRoute (): void {
    const { shared, parts, verb, url, answer } = this
    route(shared, parts, [verb], url, functionsAnswer(parts), answer ? { 200: answer } : undefined)
  }
}

/** The refused and allowed verbs of a path taking `taken`: made once per list of verbs, not once per path. */
function verbListsOf (shared: SharedParts, taken: readonly HttpMethod[]): VerbLists {
  const key = taken.join(',')
  let lists = shared.verbLists.get(key)
  if (lists === undefined) shared.verbLists.set(key, lists = { refused: refusedVerbs(taken), allowed: [...taken] })
  return lists
}

/** Every verb a path answering `taken` refuses (HEAD is taken with GET). */
function refusedVerbs (taken: readonly HttpMethod[]): HttpMethod[] {
  const withGet = taken.includes('GET')
  return HTTP_METHODS.filter((method) => !taken.includes(method) && !(method === 'HEAD' && withGet))
}

/** Verbs the path does not take: answered 405 by Refusals#answer, once every path is known. */
function refuseVerbs (shared: SharedParts, { refused, allowed }: VerbLists, url: string, served: HttpMethod, key: string | undefined, twin: DeclaredFunction | undefined): void {
  // Every key in the literal (undefined when unset): one shape for every refusal.
  if (refused.length > 0) shared.refusals.push({ url, served, refused, allowed, key, twin })
}

function isQueryOnly (methods: HttpMethod[]): boolean {
  for (const method of methods) if (!QUERY_METHODS.has(method)) return false
  return true
}

/** A GET route's verbs and HEAD answer (head-route.ts), set on its options. */
function headVerbs (shared: SharedParts, options: RouteOptions, methods: HttpMethod[], url: string): void {
  if (!shared.headRoutes) return
  const verbs = getVerbs(shared.scope, methods, url)
  options.method = verbs.method
  if (verbs.exposeHeadRoute === false) options.exposeHeadRoute = false
  if (verbs.onSend) options.onSend = verbs.onSend
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

/** The function's own rate limit (it declares one), one counter for both of its routes; the master key (the admission's verdict) is not limited. */
function limiter (scope: FastifyInstance, fn: DeclaredFunction): preHandlerAsyncHookHandler {
  const limit = fn.options.rateLimit!
  return scope.rateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => `${fn.name}|${rateLimitAddress(request.ip)}`,
    onExceeded: () => metricHooks().rateLimited(fn.name),
    allowList: (request) => (request as FastifyRequest)[kAdmission]?.verdict === 'master',
    errorResponseBuilder: (_request, context) => new KitError(
      Parse.Error.REQUEST_LIMIT_EXCEEDED,
      fn.options.customErrorMessage ?? `Too many requests to ${fn.name}: at most ${context.max} per ${limit.windowMs} ms. Retry in ${context.after}.`,
      429
    )
  }) as preHandlerAsyncHookHandler
}

/**
 * The handler's params merge the query string into the body, but the schema checks
 * only the body of a POST/PUT/PATCH/DELETE: a declared field sent in the query
 * string would reach the handler unchecked, so it is refused.
 */
function declaredFieldsOnlyInBody (fn: DeclaredFunction): preHandlerAsyncHookHandler {
  // The declaration's own field map, read in place (no copy of its names per function at boot).
  const declared = fn.options.validation?.fields ?? {}
  return async (request) => {
    const query = request.query && typeof request.query === 'object' ? Object.keys(request.query) : []
    const misplaced = query.find((name) => Object.hasOwn(declared, name))
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
function answering (fn: DeclaredFunction, dates: string[], send: (reply: FastifyReply, result: unknown) => void): RouteHandlerMethod {
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

function entityHandler (fn: DeclaredFunction, dates: string[]): RouteHandlerMethod {
  // The response schema's serialiser calls toJSON() itself and sends only the fields it lists.
  if (fn.options.returns !== undefined) {
    const isoDates = parseDatesToIso(outputSchema(fn.options))
    // Fastify sends a string as it is (text/plain), past the serialiser: a string is answered as JSON here.
    return answering(fn, dates, (reply, result) => {
      if (typeof result === 'string') reply.type(JSON_TYPE).send(JSON.stringify(result))
      else reply.send(isoDates ? isoDates(result) : result)
    })
  }
  return answering(fn, dates, sendAsJson)
}

/** Parse objects serialise through their toJSON(): objectId, ISO dates, pointers. (One function for every route: none made per function.) */
function sendAsJson (reply: FastifyReply, result: unknown): void {
  reply.type(JSON_TYPE).send(JSON.stringify(result ?? null))
}

function functionsHandler (fn: DeclaredFunction, dates: string[]): RouteHandlerMethod {
  // With `returns`, the answer is the schema's JSON; a Parse.Object keeps the tags Parse.Cloud.run
  // decodes back into a Parse.Object (`__type`, `className`), as Parse Cloud Code answers it.
  if (fn.options.returns !== undefined) {
    const isoDates = parseDatesToIso(outputSchema(fn.options)) ?? ((value: unknown) => value)
    // A string is answered as on the function's own route, whatever schema `returns` gives (its serialiser would throw).
    return answering(fn, dates, (reply, result) => {
      if (typeof result === 'string') reply.type(JSON_TYPE).send(JSON.stringify({ result }))
      else reply.send({ result: isoDates(taggedIfParseObject(result)) })
    })
  }
  return answering(fn, dates, sendAsCloudRun)
}

/** Exactly Parse's answer, so Parse.Cloud.run in the SDKs decodes it. */
function sendAsCloudRun (reply: FastifyReply, result: unknown): void {
  reply.type(JSON_TYPE).send(JSON.stringify({ result: encodeLikeCloudRun(taggedIfCreatedRow(result)) }))
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

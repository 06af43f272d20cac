// The /functions/{name} twins of routed functions (those with @Route) are served
// by one route per verb (POST; GET, answering HEAD too) instead of one route per
// function: what Fastify spends on each route (its context, hooks and router
// entry) was most of the boot with many functions, and these twins were more
// than half of the routes. Each function keeps its own steps (admission and
// authorization, rate limit, body checks, input validation, answer), which the
// shared route runs for the function its path names.
//
// The route sits behind a router constraint derived only for a twin path asked
// with a verb the twin takes, spelled so that the router maps it to that name
// (as it would have mapped it to the twin's own route): every other request goes
// where it went before, to Parse's mount or to a 405.
import { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifySchema, type FastifySchemaCompiler, type FastifySerializerCompiler, type HTTPMethods, type RouteHandlerMethod, type onRequestHookHandler, type preHandlerHookHandler } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { DeclaredFunction } from './registry.js'
import { getVerbs } from './head-route.js'
import { looseKey } from './loose-key.js'
import { runHooks } from './run-hooks.js'
import { addTrueConstraint } from './true-constraint.js'

const CONSTRAINT = 'fastifyParseKitFunctionAlias'

/** An absolute-form target's scheme and authority, as the router strips them (find-my-way). */
const SCHEME_AND_AUTHORITY = /^https?:\/\/.*?\//

/**
 * `$` percent-encoded: the router keeps it encoded when it matches a fixed path,
 * but decodes it in a path parameter. A twin's own route never took that spelling.
 */
const ENCODED_DOLLAR = /%24/i

const JSON_TYPE = 'application/json; charset=utf-8'

type Validator = ReturnType<FastifySchemaCompiler<FastifySchema>>
type Serializer = (payload: unknown) => string

/** What a twin's own route would have run for one verb. */
export interface AliasSteps {
  onRequest: onRequestHookHandler
  /** In order, as a route's preValidation hooks. */
  preValidation: preHandlerHookHandler[]
  /** The input's validator (the body for POST, the query string for GET). */
  validate?: Validator
  handler: RouteHandlerMethod
  /** Registers the twin's own route for this verb instead (when the shared route cannot serve it). */
  ownRoute: () => void
}

interface Alias {
  fn: DeclaredFunction
  url: string
  steps: Partial<Record<'POST' | 'GET', AliasSteps>>
  /** The 200 answer's schema, when the function declares `returns`; its serialiser once compiled. */
  answer?: { schema: object, serialize?: Serializer }
}

export class FunctionAliases {
  private readonly byLooseKey = new Map<string, Alias>()
  private readonly byKey = new Map<string, Alias>()
  private readonly url: string
  /** Whether the router compares paths without case (asked of the router once the routes are in). */
  private caseBlind = false
  private headTaken = false
  /** The last twin path asked about and its loose key: `takes` then `add` ask for the same path. */
  private lastLoose = { url: '', key: '' }

  constructor (private readonly scope: FastifyInstance, base: string) {
    this.url = `${base}/functions/:name`
    addTrueConstraint(scope, CONSTRAINT, (request) => this.aliasOf(request) !== undefined)
  }

  /**
   * Whether `fn`'s twin can be served here: one whose spellings another twin's take keeps
   * routes of its own. One whose path already has a route of the application's for one of
   * its verbs is found by `register`, which asks the router for each twin's path and verbs
   * once every twin is in (the boot then fails on the duplicate, as it did).
   */
  takes (fn: DeclaredFunction, twinUrl: string): boolean {
    const existing = this.byLooseKey.get(this.looseKeyOf(twinUrl))
    return existing === undefined || existing.fn === fn
  }

  /** Adds the steps of `fn`'s twin for one verb (`answer`: its 200 schema, when it declares `returns`). */
  add (fn: DeclaredFunction, twinUrl: string, verb: 'POST' | 'GET', steps: AliasSteps, answer?: object): void {
    const loose = this.looseKeyOf(twinUrl)
    let alias = this.byLooseKey.get(loose)
    if (alias === undefined) {
      alias = { fn, url: twinUrl, steps: {}, ...(answer ? { answer: { schema: answer } } : {}) }
      this.byLooseKey.set(loose, alias)
    }
    alias.steps[verb] = steps
  }

  /** For a 405 on a twin path: whether the router maps this spelling to `fn`'s twin, as it did to the twin's own route. */
  reaches (fn: DeclaredFunction, url: string): boolean {
    const alias = this.byLooseKey.get(looseKey(url))
    if (alias !== undefined && alias.fn === fn) return this.namedBy(alias, url, 'POST')
    // A twin on routes of its own: the router maps the spelling to them.
    const route = this.scope.findRoute({ method: 'POST', url })
    return route !== null && !('*' in route.params) && !('name' in route.params)
  }

  /** Registers the shared routes, once every twin is added; `compile` makes a 200 answer's serialiser. */
  register (compile: FastifySerializerCompiler<unknown>): void {
    if (this.byLooseKey.size === 0) return
    const aliases = [...this.byLooseKey.values()]
    this.route('POST', aliases)
    if (aliases.some((alias) => alias.steps.GET)) this.route('GET', aliases)
    // The router's case rule, asked of the router: names are keyed the way it compares them.
    const probe = this.scope.findRoute({ method: 'POST', url: this.url.replace(':name', 'probe').toUpperCase(), constraints: { [CONSTRAINT]: true } })
    this.caseBlind = probe !== null && 'name' in probe.params
    for (const alias of aliases) this.byKey.set(this.keyOf(alias.fn.name), alias)
    // A name the router would not take as a path parameter (longer than its maxParamLength), or a path
    // where the router finds another route for a verb the twin takes (an application's, added before
    // the kit): own routes, as before.
    for (const alias of aliases) {
      if (this.namedBy(alias, alias.url, 'POST') && (alias.steps.GET === undefined || this.namedBy(alias, alias.url, 'GET'))) continue
      this.byKey.delete(this.keyOf(alias.fn.name))
      this.byLooseKey.delete(looseKey(alias.url))
      for (const steps of Object.values(alias.steps)) steps.ownRoute()
    }
    // `returns` serialisers, compiled once Fastify has compiled the routes' schemas: a broken one fails the boot.
    this.scope.addHook('onReady', async () => {
      for (const alias of this.byKey.values()) {
        if (alias.answer) alias.answer.serialize ??= compile({ schema: alias.answer.schema, method: 'POST', url: alias.url, httpStatus: '200' })
      }
    })
  }

  /**
   * A route the application adds later on a twin's path, for a verb the twin takes, fails as
   * a duplicate route (Fastify's own error), as it did when the twin had a route of its own.
   */
  refuseLaterRoutes (fastify: FastifyInstance): void {
    if (this.byKey.size === 0) return
    fastify.addHook('onRoute', (route) => {
      // A route with constraints of its own (a host, a version) shares the path, as it shared the twin's own route.
      if (route.constraints && Object.keys(route.constraints).length > 0) return
      const url = route.url ?? ''
      const alias = this.byLooseKey.get(looseKey(url))
      if (alias === undefined) return
      // Every spelling the router takes for the twin's path collides (a trailing slash, case, as the router options say).
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      const taken = methods.find((method) => this.verbOf(alias, method) !== undefined && this.namedBy(alias, url, method as HTTPMethods))
      if (taken !== undefined) throw new errorCodes.FST_ERR_DUPLICATED_ROUTE(taken, url)
    })
  }

  private route (verb: 'POST' | 'GET', aliases: Alias[]): void {
    const validating = aliases.some((alias) => alias.steps[verb]?.validate)
    const aliasFor = (request: FastifyRequest): Alias => this.named(request.params)!
    // Each input is validated by its own function's validator. Fastify validates a route's path
    // parameters first, then its body or query string, in one synchronous call: the parameters'
    // validator names the function, the input's validator takes that name and forgets it. An
    // input without a name (Fastify's order changed) is an internal error, never unvalidated.
    let named: AliasSteps | undefined
    const nameTheFunction: Validator = (params) => {
      named = this.named(params)?.steps[verb]
      return true
    }
    const validateInput: Validator = (data) => {
      const steps = named
      named = undefined
      if (steps === undefined) throw new Error(`${this.url}: the input was validated before the path named its function`)
      if (steps.validate === undefined) return true
      const valid = steps.validate(data)
      validateInput.errors = steps.validate.errors
      return valid
    }
    const answers = aliases.some((alias) => alias.answer && alias.steps[verb]) ? answerHandOff() : undefined
    const verbs = verb === 'GET' ? getVerbs(this.scope, ['GET'], undefined) : { method: [verb] as HTTPMethods[] }
    if (verb === 'GET') this.headTaken = verbs.method.includes('HEAD')
    this.scope.route({
      ...verbs,
      url: this.url,
      constraints: { [CONSTRAINT]: true },
      config: { cloudFunctionOf: (params) => this.named(params)?.fn },
      ...(validating || answers
        ? {
            schema: {
              ...(validating ? { params: {}, [verb === 'GET' ? 'querystring' : 'body']: {} } : {}),
              ...(answers ? { response: { 200: {} } } : {})
            }
          }
        : {}),
      ...(validating ? { validatorCompiler: ({ httpPart }: { httpPart?: string }) => httpPart === 'params' ? nameTheFunction : validateInput } : {}),
      ...(answers ? { serializerCompiler: () => answers.routeSerializer } : {}),
      onRequest (request, reply, done) {
        aliasFor(request).steps[verb]!.onRequest.call(this, request, reply, done)
      },
      preValidation (request, reply, done) {
        runHooks(aliasFor(request).steps[verb]!.preValidation, this, request, reply, done)
      },
      handler (request, reply) {
        const alias = aliasFor(request)
        const serialize = alias.answer?.serialize
        if (serialize && answers) reply.serializer(answers.forReply(reply, serialize))
        return alias.steps[verb]!.handler.call(this, request, reply)
      }
    })
  }

  /** A twin path's loose key (loose-key.ts), kept from `takes` for `add` and the path's refusal. */
  looseKeyOf (twinUrl: string): string {
    const last = this.lastLoose
    if (last.url !== twinUrl) {
      last.url = twinUrl
      last.key = looseKey(twinUrl)
    }
    return last.key
  }

  /** The twin the shared route's path parameters name. */
  private named (params: unknown): Alias | undefined {
    return this.byKey.get(this.keyOf((params as { name: string }).name))
  }

  private keyOf (name: string): string {
    return this.caseBlind ? name.toLowerCase() : name
  }

  /** The verb whose steps serve `method` on a twin, if the twin takes it here. */
  private verbOf (alias: Alias, method: string): 'POST' | 'GET' | undefined {
    const verb = method === 'POST' ? 'POST' : method === 'GET' || (method === 'HEAD' && this.headTaken) ? 'GET' : undefined
    return verb !== undefined && alias.steps[verb] ? verb : undefined
  }

  /** The twin a request is for, when it is for one with a verb that twin takes. */
  private aliasOf (request: IncomingMessage): Alias | undefined {
    let url = request.url ?? ''
    // Every request on the instance passes here: an absolute-form target is read as the router reads it.
    if (url.charCodeAt(0) !== 47) url = url.replace(SCHEME_AND_AUTHORITY, '/')
    if (url.charCodeAt(0) !== 47) return undefined
    const alias = this.byLooseKey.get(looseKey(url))
    if (alias === undefined || this.verbOf(alias, request.method ?? '') === undefined) return undefined
    // The loose key takes more spellings than the router: this one must name the function.
    return this.namedBy(alias, url, request.method as HTTPMethods) ? alias : undefined
  }

  private namedBy (alias: Alias, url: string, method: HTTPMethods): boolean {
    if (ENCODED_DOLLAR.test(pathOf(url))) return false
    const route = this.scope.findRoute({ method, url, constraints: { [CONSTRAINT]: true } })
    const name = route?.params.name
    return name !== undefined && this.named({ name }) === alias
  }
}

/**
 * A `returns` answer is serialised as by a route whose response schema is the function's
 * own: in Fastify's order (an instance-wide reply serialiser first, then the schema for a
 * 200, plain JSON otherwise), whatever payload the hooks left. The twins share a route, so
 * the function is known on the reply: the reply's serialiser hands it to the route's 200
 * serialiser and lets Fastify choose, in one synchronous call.
 */
function answerHandOff (): { routeSerializer: Serializer, forReply: (reply: FastifyReply, serialize: Serializer) => Serializer } {
  let handedOff: Serializer | undefined
  return {
    routeSerializer: (payload) => handedOff !== undefined ? handedOff(payload) : JSON.stringify(payload),
    forReply: (reply, serialize) => (payload) => {
      reply.serializer(null as never)
      if (typeof payload === 'string') return payload
      // Fastify types JSON itself only when no serialiser is set on the reply.
      if (!reply.hasHeader('content-type')) reply.type(JSON_TYPE)
      handedOff = serialize
      try {
        return reply.serialize(payload) as string
      } finally {
        handedOff = undefined
      }
    }
  }
}

/** The path of a target: before its query string, fragment or path parameters. */
function pathOf (url: string): string {
  const end = url.search(/[?#;]/)
  return end === -1 ? url : url.slice(0, end)
}

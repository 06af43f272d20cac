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
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, FastifySchemaCompiler, FastifySerializerCompiler, HTTPMethods, RouteHandlerMethod, onRequestHookHandler, preHandlerHookHandler } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { DeclaredFunction } from './registry.js'
import { getVerbs } from './head-route.js'
import { looseKey } from './loose-key.js'

const CONSTRAINT = 'fastifyParseKitFunctionAlias'

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
  /** The name as the router compares it. */
  key: string
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

  constructor (private readonly scope: FastifyInstance, base: string) {
    this.url = `${base}/functions/:name`
    // Added before any declared route: adding a strategy rebuilds the instance's router.
    if (scope.hasConstraintStrategy(CONSTRAINT)) return
    scope.addConstraintStrategy({
      name: CONSTRAINT,
      storage () {
        const stores = new Map<unknown, unknown>()
        return { get: (value: unknown) => stores.get(value) ?? null, set: (value: unknown, store: unknown) => { stores.set(value, store) } } as never
      },
      deriveConstraint: (request: IncomingMessage) => this.aliasOf(request) === undefined ? undefined : true,
      mustMatchWhenDerived: false,
      validate (value: unknown) {
        if (value !== true) throw new Error(`${CONSTRAINT} takes only true`)
      }
    })
  }

  /** Whether `fn`'s twin can be served here: one whose spellings another twin's take keeps routes of its own. */
  takes (fn: DeclaredFunction, twinUrl: string): boolean {
    const existing = this.byLooseKey.get(looseKey(twinUrl))
    return existing === undefined || existing.fn === fn
  }

  /** Adds the steps of `fn`'s twin for one verb (`answer`: its 200 schema, when it declares `returns`). */
  add (fn: DeclaredFunction, twinUrl: string, verb: 'POST' | 'GET', steps: AliasSteps, answer?: object): void {
    const loose = looseKey(twinUrl)
    let alias = this.byLooseKey.get(loose)
    if (alias === undefined) {
      alias = { fn, url: twinUrl, key: fn.name, steps: {}, ...(answer ? { answer: { schema: answer } } : {}) }
      this.byLooseKey.set(loose, alias)
    }
    alias.steps[verb] = steps
  }

  /** For a 405 on a twin path: whether the router maps this spelling to the twin, as it did to the twin's own route. */
  reaches (fn: DeclaredFunction): (url: string) => boolean {
    return (url) => {
      const alias = this.byLooseKey.get(looseKey(url))
      if (alias !== undefined && alias.fn === fn) return this.namedBy(alias, url, 'POST')
      // A twin on routes of its own: the router maps the spelling to them.
      const route = this.scope.findRoute({ method: 'POST', url })
      return route !== null && !('*' in route.params) && !('name' in route.params)
    }
  }

  /** Registers the shared routes, once every twin is added; `compile` makes a 200 answer's serialiser. */
  register (compile: FastifySerializerCompiler<unknown>): void {
    if (this.byLooseKey.size === 0) return
    const aliases = [...this.byLooseKey.values()]
    this.route('POST', aliases, compile)
    if (aliases.some((alias) => alias.steps.GET)) this.route('GET', aliases, compile)
    // The router's case rule, asked of the router: names are keyed the way it compares them.
    const probe = this.scope.findRoute({ method: 'POST', url: this.url.replace(':name', 'probe').toUpperCase(), constraints: { [CONSTRAINT]: true } })
    this.caseBlind = probe !== null && 'name' in probe.params
    for (const alias of aliases) {
      alias.key = this.keyOf(alias.fn.name)
      this.byKey.set(alias.key, alias)
    }
    // A name the router would not take as a path parameter (longer than its maxParamLength): own routes, as before.
    for (const alias of aliases) {
      if (this.namedBy(alias, alias.url, 'POST')) continue
      this.byKey.delete(alias.key)
      this.byLooseKey.delete(looseKey(alias.url))
      for (const steps of Object.values(alias.steps)) steps.ownRoute()
    }
  }

  private route (verb: 'POST' | 'GET', aliases: Alias[], compile: FastifySerializerCompiler<unknown>): void {
    const validating = aliases.some((alias) => alias.steps[verb]?.validate)
    const answering = aliases.some((alias) => alias.answer && alias.steps[verb])
    // Each input is validated by its function's own validator, found from the very object Fastify validates.
    const pending = new WeakMap<object, Validator>()
    const validate: Validator = (data) => {
      const validator = data !== null && typeof data === 'object' ? pending.get(data) : undefined
      if (validator === undefined) return true
      const valid = validator(data)
      validate.errors = validator.errors
      return valid
    }
    // Each 200 answer is serialised by its function's own serialiser, found from the payload Fastify serialises.
    const serializers = new WeakMap<object, Serializer>()
    const serialize: Serializer = (payload) => {
      const own = payload !== null && typeof payload === 'object' ? serializers.get(payload) : undefined
      return own ? own(payload) : JSON.stringify(payload)
    }
    const verbs = verb === 'GET' ? getVerbs(this.scope, ['GET'], this.url) : { method: [verb] as HTTPMethods[] }
    if (verb === 'GET') this.headTaken = verbs.method.includes('HEAD')
    const aliasFor = (request: FastifyRequest): Alias => this.byKey.get(this.keyOf((request.params as { name: string }).name))!
    const schema = {
      ...(validating ? { [verb === 'GET' ? 'querystring' : 'body']: {} } : {}),
      ...(answering ? { response: { 200: {} } } : {})
    }
    this.scope.route({
      ...verbs,
      url: this.url,
      constraints: { [CONSTRAINT]: true },
      config: { cloudFunctionOf: (params) => this.byKey.get(this.keyOf((params as { name: string }).name))?.fn },
      ...(validating || answering ? { schema } : {}),
      ...(validating ? { validatorCompiler: () => validate } : {}),
      ...(answering
        ? {
            serializerCompiler: () => {
              // Compiled when Fastify compiles the routes' schemas: a broken one fails the boot.
              for (const alias of aliases) {
                if (alias.answer) alias.answer.serialize ??= compile({ schema: alias.answer.schema, method: verb, url: this.url.replace(':name', alias.fn.name), httpStatus: '200' })
              }
              return serialize
            },
            // The route's last hook before serialisation: the schema serialises whatever the application's hooks made of the payload.
            preSerialization: (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
              const own = aliasFor(request).answer?.serialize
              if (own && payload !== null && typeof payload === 'object') serializers.set(payload, own)
              done(null, payload)
            }
          }
        : {}),
      onRequest (request, reply, done) {
        aliasFor(request).steps[verb]!.onRequest.call(this, request, reply, done)
      },
      preValidation (request, reply, done) {
        const steps = aliasFor(request).steps[verb]!
        runHooks(steps.preValidation, this, request, reply, (error) => {
          if (error) return done(error)
          const input = verb === 'GET' ? request.query : request.body
          if (steps.validate && input !== null && typeof input === 'object') pending.set(input, steps.validate)
          done()
        })
      },
      handler (request, reply) {
        return aliasFor(request).steps[verb]!.handler.call(this, request, reply)
      }
    })
  }

  private keyOf (name: string): string {
    return this.caseBlind ? name.toLowerCase() : name
  }

  /** The twin a request is for, when it is for one with a verb that twin takes. */
  private aliasOf (request: IncomingMessage): Alias | undefined {
    const url = request.url ?? ''
    // Every request on the instance passes here: origin-form targets only (the mount refuses the others).
    if (url.charCodeAt(0) !== 47) return undefined
    const alias = this.byLooseKey.get(looseKey(url))
    if (alias === undefined) return undefined
    const method = request.method
    const verb = method === 'POST' ? 'POST' : method === 'GET' || (method === 'HEAD' && this.headTaken) ? 'GET' : undefined
    if (verb === undefined || !alias.steps[verb]) return undefined
    // The loose key takes more spellings than the router: this one must name the function.
    return this.namedBy(alias, url, method as HTTPMethods) ? alias : undefined
  }

  private namedBy (alias: Alias, url: string, method: HTTPMethods): boolean {
    const route = this.scope.findRoute({ method, url, constraints: { [CONSTRAINT]: true } })
    const name = route?.params.name
    return name !== undefined && this.byKey.get(this.keyOf(name)) === alias
  }
}

/** Runs route hooks in order as Fastify does: a hook that answered ends the run. */
function runHooks (hooks: preHandlerHookHandler[], instance: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  let index = 0
  const next = (error?: Error): void => {
    if (error) return done(error)
    if (index === hooks.length) return done()
    if (reply.sent) return
    const hook = hooks[index++]
    let result: unknown
    try {
      result = hook.call(instance, request, reply, next as never)
    } catch (thrown) {
      return done(thrown as Error)
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(() => next(), (rejected: Error | undefined) => done(rejected ?? new Error('a preValidation hook rejected without an error')))
    }
  }
  next()
}

// Fastify compiles every route's input schema (ajv) when the server gets ready:
// about a millisecond each, seconds for an application with a thousand declared
// functions, most of which one process may never see called. Declared routes
// compile theirs on first use instead, with the very compiler Fastify would have
// used (the scope's: same ajv instance and options — coercion, defaults), once
// per schema object and request part, so a function's entity route and its
// /functions twin share one validator.
// The schemas are built by the kit from field options checked at import
// (routing/options.ts), so none can fail to compile later than boot would have.
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler } from 'fastify'
import { afterFirstRoute, type AfterFirstRoute } from './after-first-route.js'

type Validator = ReturnType<FastifySchemaCompiler<FastifySchema>>
type RouteSchemaDef = Parameters<FastifySchemaCompiler<FastifySchema>>[0]

/** Compiles on first call, once per schema; the first route with an input schema is Fastify's own. */
export type LazyValidation = AfterFirstRoute<FastifySchemaCompiler<FastifySchema>>

export function lazyValidation (scope: FastifyInstance): LazyValidation {
  const byPart = new Map<string, WeakMap<object, Validator>>()
  const compiler: FastifySchemaCompiler<FastifySchema> = (route) => {
    const part = route.httpPart ?? ''
    let cache = byPart.get(part)
    if (!cache) byPart.set(part, cache = new WeakMap())
    const key = route.schema as object
    let validator = cache.get(key)
    if (!validator) cache.set(key, validator = deferred(scope, route))
    return validator
  }
  return afterFirstRoute(compiler)
}

/** A validator that compiles on its first call; `errors` mirrors the real one's, where Fastify reads them. */
function deferred (scope: FastifyInstance, route: RouteSchemaDef): Validator {
  let real: Validator | undefined
  const validate: Validator = (data) => {
    if (!real) {
      const compile = scope.validatorCompiler as FastifySchemaCompiler<FastifySchema> | undefined
      if (!compile) throw new Error(`no validator compiler set up for ${route.method} ${route.url}`)
      real = compile(route)
    }
    const valid = real(data)
    validate.errors = real.errors
    return valid
  }
  return validate
}

// Declared routes validate with compilers of their own, built the way Fastify
// builds its default (@fastify/ajv-compiler, ajv-formats, defaults applied):
// - bodies are validated, not converted: a JSON body already has types, and a
//   wrong one (12345 for a title, null for a list) is refused naming the field;
// - query strings keep Fastify's conversion ("20" → 20), since every value
//   arrives as text; numbers only from decimal text of a finite number.
// Fastify compiles every route's input schema when the server gets ready:
// about a millisecond each, seconds for an application with a thousand
// declared functions, most of which one process may never see called. So each
// schema compiles on first use instead, once per schema object and request
// part: a function's entity route and its /functions twin share one validator.
// The schemas are built by the kit from field options checked at import
// (routing/options.ts), so none can fail to compile later than boot would have.
import type { FastifySchema, FastifySchemaCompiler } from 'fastify'
import { AjvCompiler } from '@fastify/ajv-compiler'
import { numberFields, readNumbers } from './strict-query-numbers.js'

type Validator = ReturnType<FastifySchemaCompiler<FastifySchema>>
type RouteSchemaDef = Parameters<FastifySchemaCompiler<FastifySchema>>[0]

export interface LazyValidation {
  /** The compiler for a declared route: compiles each schema on its first call. */
  forRoute (): FastifySchemaCompiler<FastifySchema>
}

/** Fastify's defaults for ajv (useDefaults, removeAdditional, coerceTypes 'array') but, for bodies, no conversion. */
const BODY_OPTIONS = { coerceTypes: false }
const QUERY_OPTIONS = { coerceTypes: 'array' as const }

export function lazyValidation (): LazyValidation {
  const factory = AjvCompiler()
  const compilers = {
    body: factory({}, { customOptions: BODY_OPTIONS }) as FastifySchemaCompiler<FastifySchema>,
    other: factory({}, { customOptions: QUERY_OPTIONS }) as FastifySchemaCompiler<FastifySchema>
  }
  // Maps, not WeakMaps: the schemas live as long as the routes that hold them, and a WeakMap's
  // insertions cost several times a Map's (a thousand functions insert one or two each at boot).
  const byPart = new Map<string, Map<object, Validator>>()
  const compiler: FastifySchemaCompiler<FastifySchema> = (route) => {
    const part = route.httpPart ?? ''
    let cache = byPart.get(part)
    if (!cache) byPart.set(part, cache = new Map())
    const key = route.schema as object
    let validator = cache.get(key)
    if (!validator) cache.set(key, validator = deferred(part === 'body' ? compilers.body : compilers.other, route, part === 'querystring'))
    return validator
  }
  return { forRoute: () => compiler }
}

/** A validator that compiles on its first call; `errors` mirrors the real one's, where Fastify reads them. */
function deferred (compile: FastifySchemaCompiler<FastifySchema>, route: RouteSchemaDef, query: boolean): Validator {
  const state: Deferred = { compile, route, query, real: undefined, numbers: undefined, validate: undefined }
  const validate = validating(state)
  state.validate = validate
  return validate
}

/** A deferred validator's compiler, schema and, once called, its real validator. */
interface Deferred {
  compile: FastifySchemaCompiler<FastifySchema>
  route: RouteSchemaDef
  query: boolean
  real: Validator | undefined
  numbers: ReturnType<typeof numberFields>
  validate: Validator | undefined
}

/**
 * The validator itself, returned unnamed: tsx names a function assigned to a
 * variable, which makes each of a thousand functions' validators a slower object.
 */
function validating (state: Deferred): Validator {
  return (data) => {
    let real = state.real
    if (real === undefined) {
      real = state.real = state.compile(state.route)
      // A query string's numbers are read strictly (strict-query-numbers.ts) before ajv converts the rest.
      if (state.query) state.numbers = numberFields(state.route.schema)
    }
    if (state.numbers) readNumbers(data, state.numbers)
    const valid = real(data)
    state.validate!.errors = real.errors
    return valid
  }
}

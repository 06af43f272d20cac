// Fastify compiles a response schema (fast-json-stringify) once per route, even
// when routes share the schema object: a function's entity routes share its
// `returns`, the /functions twin's POST and GET share their `{ result }` wrapper.
// Declared routes compile each schema object once, at boot as before (a broken
// schema still fails boot), with the scope's own serializer compiler.
import type { FastifyInstance, FastifySerializerCompiler } from 'fastify'
import { afterFirstRoute, type AfterFirstRoute } from './after-first-route.js'

type Serializer = ReturnType<FastifySerializerCompiler<unknown>>

/** One serializer per schema object; the first route with a response schema is Fastify's own (its preReady work runs first). */
export interface SharedSerializers extends AfterFirstRoute<FastifySerializerCompiler<unknown>> {
  /** Compiles (or finds) the serializer of a schema, once Fastify has set up the scope's compiler. */
  compile: FastifySerializerCompiler<unknown>
}

export function sharedSerializers (scope: FastifyInstance): SharedSerializers {
  const compiled = new WeakMap<object, Serializer>()
  const compile: FastifySerializerCompiler<unknown> = (route) => {
    const key = route.schema as object
    let serialize = compiled.get(key)
    if (!serialize) {
      const scopeCompiler = scope.serializerCompiler as FastifySerializerCompiler<unknown> | undefined
      if (!scopeCompiler) throw new Error(`no serializer compiler set up for ${route.method} ${route.url}`)
      compiled.set(key, serialize = scopeCompiler(route))
    }
    return serialize
  }
  return { ...afterFirstRoute(compile), compile }
}

// Fastify compiles a response schema (fast-json-stringify) once per route, even
// when routes share the schema object: a function's entity routes share its
// `returns`, the /functions twin's POST and GET share their `{ result }` wrapper.
// Declared routes compile each schema object once, at boot as before (a broken
// schema still fails boot), with the scope's own serializer compiler.
import type { FastifyInstance, FastifySerializerCompiler } from 'fastify'

type Serializer = ReturnType<FastifySerializerCompiler<unknown>>

export interface SharedSerializers {
  /**
   * The serializerCompiler for the next route with a response schema: undefined for
   * the first one, which Fastify compiles itself and so sets up the scope's compiler
   * the others use (their preReady work runs after the first route's).
   */
  forRoute (): FastifySerializerCompiler<unknown> | undefined
}

export function sharedSerializers (scope: FastifyInstance): SharedSerializers {
  let eagerTaken = false
  const compiled = new WeakMap<object, Serializer>()
  const compiler: FastifySerializerCompiler<unknown> = (route) => {
    const key = route.schema as object
    let serialize = compiled.get(key)
    if (!serialize) {
      const compile = scope.serializerCompiler as FastifySerializerCompiler<unknown> | undefined
      if (!compile) throw new Error(`no serializer compiler set up for ${route.method} ${route.url}`)
      compiled.set(key, serialize = compile(route))
    }
    return serialize
  }
  return {
    forRoute () {
      if (eagerTaken) return compiler
      eagerTaken = true
      return undefined
    }
  }
}

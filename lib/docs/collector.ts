// @fastify/swagger on the application's instance. It learns routes from an
// onRoute hook, so it must be registered before the routes it documents:
// kitPlugin does so before mounting Parse. Routes the kit adds for its own
// plumbing are marked while they are added, and hidden from the document.
import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { documentRoute } from './operations.js'
import { securitySchemes } from './security.js'

export type OpenApiDocument = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export interface RouteCollector {
  /** True when the application registered @fastify/swagger itself: its setup is left alone. */
  external: boolean
  /** Runs `add`; the routes it adds are the kit's own: only declared functions among them are documented. */
  kitRoutes<T> (add: () => Promise<T>): Promise<T>
  /** The document @fastify/swagger built from the routes (once, on first use, after ready); a copy to build on. */
  routeDocument (): OpenApiDocument
  /** What `fastify.swagger()` returns: the first setupSwagger's complete document (set once). */
  completeWith (complete: (routeDocument: OpenApiDocument) => OpenApiDocument): void
}

const COLLECTOR = Symbol.for('fastify-parse-kit.docs.collector')

/** The collector already on this instance (or an ancestor), if any. */
export function findCollector (fastify: FastifyInstance): RouteCollector | undefined {
  return (fastify as unknown as Record<symbol, RouteCollector | undefined>)[COLLECTOR]
}

/**
 * Registers @fastify/swagger (once per instance). When the application has
 * already registered @fastify/swagger itself, its own setup stays in charge:
 * the collector returned is then `external` and documents nothing.
 */
export async function collectRoutes (fastify: FastifyInstance): Promise<RouteCollector> {
  const existing = findCollector(fastify)
  if (existing) return existing
  if (fastify.hasPlugin('@fastify/swagger')) return externalCollector

  const kitOwned = new WeakSet<object>()
  let marking = false
  fastify.addHook('onRoute', (route) => {
    if (marking) kitOwned.add(route)
  })

  let built: OpenApiDocument | undefined
  let complete: ((routeDocument: OpenApiDocument) => OpenApiDocument) | undefined
  await fastify.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'API', version: '0' }, // replaced by setupSwagger's configuration
      components: { securitySchemes: securitySchemes() as never }
    },
    transform: ({ schema, url, route }) => {
      const docs = documentRoute(route as RouteOptions, schema as never, url, kitOwned.has(route))
      return { schema: docs.schema as never, url: docs.url }
    },
    transformObject: (documentObject) => {
      const routeDocument = (documentObject as { openapiObject: OpenApiDocument }).openapiObject
      built = structuredClone(routeDocument)
      return complete ? complete(routeDocument) : routeDocument
    }
  })

  const collector: RouteCollector = {
    external: false,
    async kitRoutes (add) {
      marking = true
      try {
        return await add()
      } finally {
        marking = false
      }
    },
    routeDocument () {
      if (!built) fastify.swagger()
      if (!built) throw new Error('@fastify/swagger produced no OpenAPI document')
      return structuredClone(built)
    },
    completeWith (fn) {
      complete ??= fn
    }
  }
  fastify.decorate(COLLECTOR, collector)
  return collector
}

const externalCollector: RouteCollector = {
  external: true,
  kitRoutes: (add) => add(),
  routeDocument () { throw new Error('@fastify/swagger is registered by the application, not by fastify-parse-kit') },
  completeWith () {}
}

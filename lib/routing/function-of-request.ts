// Which declared function a request is for. A function's own routes name it in
// their config; the route the /functions twins of routed functions share
// (function-aliases.ts) names it from the request's path.
import type { FastifyRequest } from 'fastify'
import type { DeclaredFunction } from './registry.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on routes the kit registers for one declared function. */
    cloudFunction?: DeclaredFunction
    /** Set on a route several declared functions share: the one a request's path parameters name. */
    cloudFunctionOf?: (params: unknown) => DeclaredFunction | undefined
  }
}

/** The declared function this request is for, if it is for one. */
export function declaredFunctionOf (request: FastifyRequest): DeclaredFunction | undefined {
  const config = request.routeOptions.config
  return config?.cloudFunction ?? config?.cloudFunctionOf?.(request.params)
}

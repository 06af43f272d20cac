// Cross-origin access to everything under the mount path (Parse's routes and the
// declared endpoints) through one @fastify/cors policy. Registered on the
// instance the kit is registered on, its onRequest hook answers preflights
// before the app id check, and Parse's own CORS headers never reach the client.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fastifyCors from '@fastify/cors'
import { PARSE_REQUEST_HEADERS, type ResolvedCors } from '../access/cors-policy.js'
import { OptionInvalidError } from '../errors.js'

export type { CorsOptions, CorsOrigin, ResolvedCors } from '../access/cors-policy.js'
export { resolveCors, PARSE_REQUEST_HEADERS } from '../access/cors-policy.js'

const EXPOSED_HEADERS = ['X-Parse-Job-Status-Id', 'X-Parse-Push-Status-Id', 'Retry-After']
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

export async function registerCors (fastify: FastifyInstance, cors: ResolvedCors, mountPath: string): Promise<void> {
  if (fastify.hasRequestDecorator('corsPreflightEnabled')) {
    throw new OptionInvalidError('kitPlugin option "cors": @fastify/cors is already registered on this instance. Set cors: false to let that registration answer for the kit\'s routes too, or register yours inside your own encapsulated scope.')
  }
  const policy = {
    origin: cors.origin.includes('*') ? '*' : cors.origin,
    methods: METHODS,
    allowedHeaders: [...PARSE_REQUEST_HEADERS, ...cors.allowedHeaders],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: cors.maxAge,
    credentials: false // Parse's credentials are headers, never cookies
  }
  const outside = { origin: false as const }
  await fastify.register(fastifyCors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: object) => void) => {
      // A request without Origin is no CORS request (a browser sends Origin on every cross-origin call):
      // its answer needs no Access-Control-* headers, only the `Vary: Origin` every answer gets here.
      // A preflight without Origin still meets the policy (and its 400).
      const corsRequest = request.headers.origin !== undefined || request.method === 'OPTIONS'
      callback(null, corsRequest && underMount(request.url, mountPath) ? policy : outside)
    }
  })
}

/**
 * Parse sends `Access-Control-Expose-Headers: X-Parse-Job-Status-Id, X-Parse-Push-Status-Id` on
 * every answer, CORS request or not: the JavaScript SDK reads those headers only when that
 * header names them (Parse.Cloud.startJob's id, Parse.Push.send's status id). Every answer
 * under the mount gets it here, whatever the cors option; a CORS policy's own list (which
 * names them too) is left as it is.
 */
export function exposeParseHeaders (fastify: FastifyInstance, mountPath: string): void {
  const value = EXPOSED_HEADERS.join(', ')
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!reply.hasHeader('access-control-expose-headers') && underMount(request.url, mountPath)) reply.header('access-control-expose-headers', value)
    done()
  })
}

function underMount (url: string, mountPath: string): boolean {
  if (mountPath === '/') return true
  if (!url.startsWith(mountPath)) return false
  // What follows the mount: nothing, a path, or the query string.
  const next = url[mountPath.length]
  return next === undefined || next === '/' || next === '?'
}

/**
 * Express middleware placed before Parse's app: from here on the response keeps the
 * CORS headers Fastify already set and ignores the ones Parse's allowCrossDomain writes.
 */
export function keepKitCorsHeaders (_request: unknown, response: { setHeader: (name: string, value: unknown) => unknown }, next: () => void): void {
  const setHeader = response.setHeader
  response.setHeader = function (this: unknown, name: string, value: unknown) {
    if (typeof name === 'string' && name.toLowerCase().startsWith('access-control-')) return this
    return setHeader.call(this, name, value)
  }
  next()
}

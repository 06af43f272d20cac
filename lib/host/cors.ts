// Cross-origin access to everything under the mount path (Parse's routes and the
// declared endpoints) through one @fastify/cors policy. Registered on the
// instance the kit is registered on, its onRequest hook answers preflights
// before the app id check, and Parse's own CORS headers never reach the client.
//
// The policy rides on each route under the mount as @fastify/cors's per-route
// options (route config `cors`); the registration's own options refuse CORS
// (origin: false), so every other route of the application is left alone
// (mounted at '/', the policy is the registration's own).
// Per-route options are resolved once at registration: a delegator, resolved
// on every request, made the plugin copy and normalise its options each time.
import type { FastifyInstance } from 'fastify'
import fastifyCors, { type FastifyCorsOptions, type OriginFunction } from '@fastify/cors'
import Parse from 'parse/node'
import { PARSE_REQUEST_HEADERS, type ResolvedCors } from '../access/cors-policy.js'
import { OptionInvalidError } from '../errors.js'

export type { CorsOptions, CorsOrigin, ResolvedCors } from '../access/cors-policy.js'
export { resolveCors, PARSE_REQUEST_HEADERS } from '../access/cors-policy.js'

// X-Request-Id: a page can quote the id of a failed call (request-ids.ts; the default header name).
const EXPOSED_HEADERS = ['X-Parse-Job-Status-Id', 'X-Parse-Push-Status-Id', 'Retry-After', 'X-Request-Id']
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
export async function registerCors (fastify: FastifyInstance, cors: ResolvedCors, mountPath: string): Promise<void> {
  if (fastify.hasRequestDecorator('corsPreflightEnabled')) {
    throw new OptionInvalidError('kitPlugin option "cors": @fastify/cors is already registered on this instance. Set cors: false to let that registration answer for the kit\'s routes too, or register yours inside your own encapsulated scope.')
  }
  const allowed = cors.origin.includes('*') ? '*' : cors.origin
  // A request without Origin is no CORS request (a browser sends Origin on every cross-origin
  // call): it meets an allow-list that allows nothing, so its answer gets no
  // Access-Control-Allow-Origin, only the `Vary: Origin` every answer under the mount gets;
  // a preflight without Origin still meets the policy (and its 400).
  const noOrigin: string[] = []
  const origin: OriginFunction = (requestOrigin, callback) => callback(null, requestOrigin === undefined ? noOrigin : allowed)
  const policy: FastifyCorsOptions = {
    origin,
    methods: METHODS,
    allowedHeaders: [...PARSE_REQUEST_HEADERS, ...cors.allowedHeaders],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: cors.maxAge,
    credentials: false // Parse's credentials are headers, never cookies
  }
  refuseBareOptions(fastify, mountPath)
  // Mounted at the root, everything is under the mount: the policy is the registration's own.
  if (mountPath === '/') {
    await fastify.register(fastifyCors, policy)
    return
  }
  // Every route added from here on under the mount (the kit's, and an application's own
  // route there unless it brings its own `cors` config) carries the policy. A route added
  // under the mount before the kit cannot be reached from here: the guide says so.
  fastify.addHook('onRoute', (route) => {
    if (!underMount(route.url, mountPath)) return
    const config = route.config as { cors?: unknown } | undefined
    route.config = { ...config, cors: config?.cors ?? policy } as typeof route.config
  })
  await fastify.register(fastifyCors, { origin: false })
}

/**
 * An OPTIONS request under the mount is answered as a CORS preflight; one that is not a
 * preflight (no Origin or no Access-Control-Request-Method) is refused in Parse's shape,
 * where @fastify/cors answers `400 Invalid Preflight Request` as text. Its answer is
 * rewritten on the way out, so the CORS headers it set (a page can read the refusal) stay.
 */
function refuseBareOptions (fastify: FastifyInstance, mountPath: string): void {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (request.method !== 'OPTIONS' || reply.statusCode !== 400 || payload !== 'Invalid Preflight Request' ||
      // A router that ignores case hands /PARSE/… to the mount's routes too.
      !underMount(request.url.toLowerCase(), mountPath.toLowerCase())) {
      done(null, payload)
      return
    }
    reply.type('application/json; charset=utf-8')
    done(null, JSON.stringify({
      code: Parse.Error.INVALID_QUERY,
      error: 'Request refused: OPTIONS is answered as a CORS preflight only, with Origin and Access-Control-Request-Method headers.'
    }))
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

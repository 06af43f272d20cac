// HEAD on a declared GET path, served by the GET route itself. Fastify would
// add a second route for it (exposeHeadRoute), which costs as much boot time
// as the GET route: with many GET functions, a tenth of the boot. The answer
// is the one Fastify's own HEAD route gives: the GET's status and headers,
// Content-Length of the body it would have sent, and no body. Where Fastify
// would add no HEAD route (the instance's exposeHeadRoutes is false, or the
// application has its own HEAD route there), none is taken.
import type { FastifyInstance, HTTPMethods, onSendHookHandler } from 'fastify'

interface GetVerbs { method: HTTPMethods[], exposeHeadRoute?: false, onSend?: onSendHookHandler }

/**
 * Route options for a GET route at `url`: answering HEAD too where Fastify would have added a HEAD route.
 * `url` undefined: a route shared by many paths, where an application's HEAD route on one path is
 * more specific to the router than the shared route, and keeps that path's HEAD.
 */
export function getVerbs (scope: FastifyInstance, methods: HTTPMethods[], url: string | undefined): GetVerbs {
  if (!exposesHeadRoutes(scope)) return { method: methods }
  if (url !== undefined && scope.hasRoute({ method: 'HEAD', url })) return { method: methods, exposeHeadRoute: false }
  return { method: [...methods, 'HEAD'], exposeHeadRoute: false, onSend: headWithoutBody }
}

/** Whether Fastify would add HEAD routes on this instance (its exposeHeadRoutes option). */
export function exposesHeadRoutes (scope: FastifyInstance): boolean {
  return (scope.initialConfig as { exposeHeadRoutes?: boolean }).exposeHeadRoutes !== false
}

type Payload = string | Buffer | null | undefined | {
  resume?: () => void
  on?: (event: 'error', listener: (error: Error) => void) => void
  getReader?: unknown
  cancel?: (reason: string) => Promise<void>
}

const headWithoutBody: onSendHookHandler = (request, reply, payload, done) => {
  if (request.method !== 'HEAD') {
    done(null, payload)
    return
  }
  const body = payload as Payload
  const logError = (error: unknown) => reply.log.error({ err: error }, 'stream error on a HEAD answer')
  if (body === undefined || body === null) {
    reply.header('content-length', '0')
  } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
    reply.header('content-length', String(Buffer.byteLength(body)))
  } else if (typeof body.resume === 'function') {
    // A Node stream (an application's onSend hook may make one): drained, never sent.
    body.on?.('error', logError)
    body.resume()
  } else if (typeof body.getReader === 'function' && typeof body.cancel === 'function') {
    // A web stream: cancelled, never read.
    body.cancel('HEAD answer').catch(logError)
  }
  done(null, null)
}

// HEAD on a declared GET path, served by the GET route itself. Fastify would
// add a second route for it (exposeHeadRoute), which costs as much boot time
// as the GET route: with many GET functions, a tenth of the boot. The answer
// is the one Fastify's own HEAD route gives: the GET's status and headers,
// Content-Length of the body it would have sent, and no body.
import type { HTTPMethods, onSendHookHandler } from 'fastify'

/** Route options for a GET route that answers HEAD too. */
export function alsoAnsweringHead (methods: HTTPMethods[]): { method: HTTPMethods[], exposeHeadRoute: false, onSend: onSendHookHandler } {
  return { method: [...methods, 'HEAD'], exposeHeadRoute: false, onSend: headWithoutBody }
}

const headWithoutBody: onSendHookHandler = (request, reply, payload, done) => {
  if (request.method !== 'HEAD') {
    done(null, payload)
    return
  }
  if (payload === undefined || payload === null) {
    reply.header('content-length', '0')
  } else if (typeof (payload as { resume?: unknown }).resume === 'function') {
    // A stream (an application's onSend hook may make one): drained, never sent.
    const stream = payload as NodeJS.ReadableStream & { on (event: 'error', listener: (error: Error) => void): unknown }
    stream.on('error', (error) => reply.log.error({ err: error }, 'stream error on a HEAD answer'))
    stream.resume()
  } else {
    reply.header('content-length', String(Buffer.byteLength(payload as string | Buffer)))
  }
  done(null, null)
}

// Fastify's `clientErrorHandler` for the kit's recommended server options:
// what Node's HTTP parser refuses before any route runs (a request that did not
// arrive within requestTimeout, headers over the size limit, a malformed
// request) is answered in the kit's `{code, error}` shape, with
// `Connection: close`, since the socket closes right after: a keep-alive client
// (a pooled agent) must not send its next request on it.
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Parse from 'parse/node'

/** How long a refused socket may take to read its answer before it is destroyed. */
const LINGER_MS = 1_000

interface Refusal { status: number, reason: string, code: number, error: string }

function refusalFor (error: NodeJS.ErrnoException): Refusal {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', code: Parse.Error.TIMEOUT, error: 'The request (headers and body) did not arrive in time.' }
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', code: Parse.Error.INVALID_QUERY, error: 'The request headers are too large.' }
  }
  return { status: 400, reason: 'Bad Request', code: Parse.Error.INVALID_QUERY, error: 'Malformed HTTP request.' }
}

export function answerClientError (this: FastifyInstance, error: Error, socket: Socket): void {
  const errno = error as NodeJS.ErrnoException
  // A reset or a socket already gone: nobody is there to answer.
  if (errno.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = refusalFor(errno)
  this.log.debug({ err: error }, `client error answered ${refusal.status}`)
  // As Node's own handler: never write into a response already under way on this socket.
  // Node's own clientError handler reads the same member (not Parse's surface, so not behind lib/parse/).
  // eslint-disable-next-line no-restricted-syntax
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && inFlight?.headersSent !== true) {
    const body = JSON.stringify({ code: refusal.code, error: refusal.error })
    socket.end(`HTTP/1.1 ${refusal.status} ${refusal.reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    setTimeout(() => socket.destroy(), LINGER_MS).unref()
  } else {
    socket.destroy()
  }
}

/**
 * Fastify's `frameworkErrors`: a path it cannot decode (FST_ERR_BAD_URL) is refused before any
 * hook runs, so it would answer Fastify's own shape without the request id; here it is the kit's
 * shape, the id under `idHeader` as on every other answer.
 */
export function answerFrameworkError (idHeader: string | false) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    if (idHeader !== false) reply.header(idHeader, request.id)
    if (error.code !== 'FST_ERR_BAD_URL') reply.send(error)
    else reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: 'Request refused: the path is not valid percent-encoding.' })
  }
}

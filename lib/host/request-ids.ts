// Request correlation. Fastify's request id (`reqId` on every line a request
// logs) is made when the request arrives, before any plugin runs, so taking
// it from a client's `x-request-id` is the server's option: kitServerOptions()
// sets `genReqId` to `requestIdFrom(header)`. The kit's part, as a plugin:
// every answer carries the id (Parse's too) under the same header, and Parse
// Server's own lines for the request carry it (parse-logger.ts reads the
// request's logger from here).
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'

export const DEFAULT_REQUEST_ID_HEADER = 'x-request-id'

/** Up to 128 characters a log line or header can carry as they are; anything else is replaced by a generated id. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** Fastify's `genReqId`: the client's id from `header` when it is safe, else a fresh UUID. */
export function requestIdFrom (header: string | false = DEFAULT_REQUEST_ID_HEADER): (request: IncomingMessage) => string {
  const name = header === false ? false : header.toLowerCase()
  return (request) => {
    const given = name === false ? undefined : request.headers[name]
    return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID()
  }
}

/** The logger of the request being served (Fastify's request.log, with its reqId), wherever its work has gone since. */
const requestLogs = new AsyncLocalStorage<FastifyBaseLogger>()

export function currentRequestLog (): FastifyBaseLogger | undefined {
  return requestLogs.getStore()
}

/** Echoes request.id under `header` on every answer (set on the raw response, so Parse's Express answers carry it too), and keeps the request's logger for Parse's lines. */
export function registerRequestIds (fastify: FastifyInstance, header: string | false): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (header !== false) reply.raw.setHeader(header, String(request.id))
    requestLogs.run(request.log, done)
  })
}

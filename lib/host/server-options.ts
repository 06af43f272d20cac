// Fastify server options the kit recommends for an application that hosts it:
// request logs that never carry a password, session token or key, one body
// limit, and timeouts that end slow or stalled requests. The example app and
// generated projects build their Fastify instance from these.
import type { FastifyServerOptions } from 'fastify'
import { answerClientError, answerFrameworkError } from './client-errors.js'
import { createRequire } from 'node:module'
import { DEFAULT_REQUEST_ID_HEADER, requestIdFrom } from './request-ids.js'

export interface KitServerOptionsInput {
  /** Log level; default 'info'. */
  level?: string
  /** Largest request body in bytes, every content type alike; default 1 MiB. */
  bodyLimit?: number
  /** Time for a whole request (headers and body) to arrive, in ms; default 30 s. */
  requestTimeout?: number
  /** Idle socket timeout in ms; default 60 s. */
  connectionTimeout?: number
  /** Time a plugin may take to start, in ms; default 60 s (Parse Server's boot runs schema migrations). */
  pluginTimeout?: number
  /** Human-readable lines (pino-pretty) instead of JSON. Default: LOG_PRETTY when set, else on unless NODE_ENV=production. */
  pretty?: boolean
  /** Header whose value (up to 128 safe characters) becomes the request id, `reqId` in its log lines; else one is generated. Default 'x-request-id'; false: always generated. Give the plugin the same `requestIdHeader`. */
  requestIdHeader?: string | false
}

/** LOG_PRETTY (true/false, 1/0, yes/no, on/off) when set; otherwise pretty everywhere but production. */
export function prettyLogs (env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.LOG_PRETTY?.trim().toLowerCase()
  if (value && ['true', '1', 'yes', 'on'].includes(value)) return true
  if (value && ['false', '0', 'no', 'off'].includes(value)) return false
  return env.NODE_ENV !== 'production'
}

/** pino-pretty as a transport, resolved from the kit (an application need not install it). */
function prettyTransport (): { target: string, options: Record<string, unknown> } {
  return {
    target: createRequire(import.meta.url).resolve('pino-pretty'),
    // Time of day and message first; an error's stack prints as lines (pino-pretty's errorLikeObjectKeys: err, error).
    options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', singleLine: false }
  }
}

export const KIT_SERVER_DEFAULTS = { bodyLimit: 1024 * 1024, requestTimeout: 30_000, connectionTimeout: 60_000, pluginTimeout: 60_000 }

/**
 * Query-string, body and header keys whose values never reach a log line: one
 * list for Fastify's request logs and Parse Server's own lines (parse-logger.ts).
 */
export const SECRET_KEYS = /^(password|new_?password|sessiontoken|_sessiontoken|masterkey|_masterkey|maintenancekey|_restapikey|_javascriptkey|token|access_?token|refresh_?token|authdata|secret|x-parse-(master|session|maintenance)-(key|token)|x-parse-rest-api-key|x-parse-javascript-key|authorization|cookie)$/i
export const CENSOR = '[redacted]'

/** A quarter of the request timeout, between 250 ms and 5 s. */
function checkingInterval (requestTimeout: number): number {
  return Math.max(250, Math.min(5_000, Math.floor(requestTimeout / 4)))
}

export function kitServerOptions (input: KitServerOptionsInput = {}): FastifyServerOptions & { http: { requestTimeout: number, headersTimeout: number, connectionsCheckingInterval: number } } {
  const requestTimeout = input.requestTimeout ?? KIT_SERVER_DEFAULTS.requestTimeout
  return {
    bodyLimit: input.bodyLimit ?? KIT_SERVER_DEFAULTS.bodyLimit,
    requestTimeout,
    // Also given to Node's server at creation: set only afterwards (as Fastify does), Node keeps
    // its 60 s headersTimeout as the effective limit, and a slow body outlives requestTimeout.
    // Node checks those timeouts only every connectionsCheckingInterval (30 s by default), so a
    // slow request would be ended up to 30 s late: check often enough for the bound to hold.
    http: { requestTimeout, headersTimeout: Math.min(requestTimeout, 60_000), connectionsCheckingInterval: checkingInterval(requestTimeout) },
    connectionTimeout: input.connectionTimeout ?? KIT_SERVER_DEFAULTS.connectionTimeout,
    // 408, 431 and 400 from Node's parser: the kit's error shape, and Connection: close.
    clientErrorHandler: answerClientError,
    // The drain (shutdown.drainDelayMs): once close begins, requests are still served, each
    // with Connection: close, while readiness answers 503; Fastify's default answers them all
    // 503 at once, before a balancer can notice. Idle keep-alive sockets close when listening stops.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // A client's (or proxy's) request id when it is safe to log and echo; a UUID otherwise.
    genReqId: requestIdFrom(input.requestIdHeader),
    // A path Fastify cannot decode, answered before any hook: the kit's shape and the id too.
    frameworkErrors: answerFrameworkError(input.requestIdHeader === undefined ? DEFAULT_REQUEST_ID_HEADER : input.requestIdHeader === false ? false : input.requestIdHeader.toLowerCase()),
    // Fastify's 10 s default is short for Parse Server's boot on a busy machine (migrations, retries).
    pluginTimeout: input.pluginTimeout ?? KIT_SERVER_DEFAULTS.pluginTimeout,
    logger: {
      level: input.level ?? 'info',
      ...((input.pretty ?? prettyLogs()) ? { transport: prettyTransport() } : {}),
      serializers: { req: serializeRequest },
      redact: {
        paths: [
          'req.headers["x-parse-master-key"]', 'req.headers["x-parse-session-token"]', 'req.headers["x-parse-maintenance-key"]',
          'req.headers.authorization', 'req.headers.cookie',
          'password', '*.password', 'sessionToken', '*.sessionToken', 'masterKey', '*.masterKey'
        ],
        censor: CENSOR
      }
    }
  }
}

interface LoggedRequest {
  method: string
  url: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

/** Fastify's request summary, with the values of secret query parameters replaced. */
export function serializeRequest (request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}

export function redactUrl (url: string): string {
  const queryAt = url.indexOf('?')
  if (queryAt === -1) return url
  const query = url.slice(queryAt + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const rawKey = equals === -1 ? pair : pair.slice(0, equals)
    let key = rawKey
    try { key = decodeURIComponent(rawKey.replace(/\+/g, ' ')) } catch {}
    // Bracketed keys (authData[facebook][access_token]) are judged by each part.
    const secret = key.split(/[[\]]+/).some((part) => SECRET_KEYS.test(part))
    return secret && equals !== -1 ? `${rawKey}=${CENSOR}` : pair
  })
  return `${url.slice(0, queryAt)}?${query.join('&')}`
}

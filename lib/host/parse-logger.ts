// Parse Server's own log lines through Fastify's logger (Parse's `loggerAdapter`
// option): one stream, one format, one level setting, and the same list of
// secrets kept out of them (server-options.ts SECRET_KEYS) as the request logs.
import { format } from 'node:util'
import Parse from 'parse/node'
import type { FastifyBaseLogger } from 'fastify'
import { CENSOR, SECRET_KEYS } from './server-options.js'
import { isParseError, statusForParseCode } from '../errors.js'
import { currentRequestLog } from './request-ids.js'

type PinoLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** Parse's (winston's) levels on pino's: verbose and debug are detail, silly is trace. */
const LEVELS: Record<string, PinoLevel> = { error: 'error', warn: 'warn', info: 'info', verbose: 'debug', debug: 'debug', silly: 'trace' }

/** Parse silences every level above its logLevel before the adapter sees it: give it the logger's own. */
const PARSE_LEVEL_OF: Record<string, string> = { fatal: 'error', error: 'error', warn: 'warn', info: 'info', debug: 'verbose', trace: 'silly', silent: 'silent' }

export function parseLogLevelFor (log: FastifyBaseLogger): string {
  return PARSE_LEVEL_OF[log.level] ?? 'info'
}

/** A Parse LoggerAdapter (its one required method is `log`) writing to `log`; Parse's lines start with "[parse]", as the kit's own say "[seed]" or "[indexes]". */
export function parseLoggerAdapter (log: FastifyBaseLogger): { log: (level: string, message: unknown, ...meta: unknown[]) => void } {
  const parseLines = log.child({}, { msgPrefix: '[parse] ' })
  return {
    log (level, message, ...rest) {
      // A line written while serving a request carries that request's reqId (request-ids.ts).
      const parse = currentRequestLog()?.child({}, { msgPrefix: '[parse] ' }) ?? parseLines
      const method = LEVELS[level] ?? 'info'
      // Winston's splat: printf-style placeholders take the arguments after the message.
      const placeholders = typeof message === 'string' ? (message.match(/%[sdifjoO]/g) ?? []).length : 0
      const text = redactText(placeholders > 0 ? format(message as string, ...rest.slice(0, placeholders)) : messageText(message))
      const fields: Record<string, unknown> = {}
      for (const extra of rest.slice(placeholders)) {
        if (extra instanceof Error) fields.err = extra
        else if (isPlainObject(extra)) Object.assign(fields, redactValue(extra))
        // A stack passed beside its error (Parse's `error(message, err, err.stack)`) is already in `err`.
        else if (extra !== undefined && !(typeof extra === 'string' && /^\s+at /m.test(extra))) fields.detail = redactValue(extra)
      }
      if (message instanceof Error && !fields.err) fields.err = message
      const error = fields.error
      if (error instanceof Error && !fields.err) { fields.err = error; delete fields.error }
      if (method === 'error' && REDIS_CLIENT_ERROR.test(text)) {
        // Each reconnect attempt or failed read of Parse's Redis clients: the kit's own outage line already says Redis is gone.
        parse.debug(fields, text)
        return
      }
      if (method === 'error' && clientCaused(text)) {
        // A LiveQuery message the client got wrong: Parse answers it an error frame, and the server is fine.
        const { err, detail: _request, ...rest } = fields // the raw message is the client's text, of any size
        parse.info(err instanceof Error ? { ...rest, error: err.message } : rest, text)
        return
      }
      // Parse logs a refusal it answers with a 4xx (a failed validation, a missing object, an
      // unknown function) as an error, stack and all: the client's mistake is no fault of the
      // server. Kept, one level down.
      if (method === 'error' && answeredAsClientError(fields.err)) {
        const { err, ...rest } = fields
        const { code, message } = err as { code: number, message: string }
        parse.info({ ...rest, code, error: message }, text) // the answer's own shape, {code, error}
        return
      }
      parse[method](fields, text)
    }
  }
}

/**
 * A Parse error the client is answered with a 4xx for; a failed script (141), a lost connection
 * (100) and codes under it are the server's, except 141 for a function that does not exist.
 */
function answeredAsClientError (error: unknown): boolean {
  if (!isParseError(error)) return false
  if (error.code === Parse.Error.SCRIPT_FAILED) return /^Invalid function: /.test(error.message)
  return clientErrorCode(error.code)
}

function clientErrorCode (code: number): boolean {
  return code > 100 && code !== Parse.Error.SCRIPT_FAILED && statusForParseCode(code) < 500
}

/**
 * Parse's line for a refused subscription, its error as JSON text: the client's query
 * (an invalid $regex, nesting too deep) or a @BeforeSubscribe's refusal is the client's;
 * a handler that threw (141) stays the server's.
 */
const REFUSED_SUBSCRIPTION = /^Failed running beforeSubscribe on \S+ for session .* with:\n Error: (\{.*\})$/s

function refusedSubscription (text: string): boolean {
  const json = REFUSED_SUBSCRIPTION.exec(text)?.[1]
  if (json === undefined) return false
  try {
    const { code } = JSON.parse(json) as { code?: unknown }
    return typeof code === 'number' && clientErrorCode(code)
  } catch {
    return false
  }
}

/** Lines Parse's LiveQuery server writes at error level for a message a client sent wrong. */
const CLIENT_CAUSED = [
  /^unable to parse request/, // not JSON
  /^Connect message error /, // refused by its schema: an unknown op, a missing className…
  /^Get unknown operation/,
  /^Key in request is not valid/, // a wrong application id or key
  /^Can not find this client/, // subscribe or unsubscribe before connect
  /^Can not find subscription with clientId /, // unsubscribe or update of an unknown subscription
  /^Can not fetch userId for sessionToken / // an invalid or expired session token
]

/**
 * The details Parse logs at error level, then answers "Permission denied" (its
 * enableSanitizedErrorResponse): a refusal of what the client sent or may do, a 4xx,
 * caused at will (no token on /users/me, a CLP refusal, a wrong application id).
 */
const REFUSAL_DETAILS = [
  /^Invalid session token$/,
  /^Insufficient auth\.$/,
  /^Permission denied for action \w+ on class /,
  /^Permission denied, user needs to be authenticated\.$/,
  /^This user is not allowed to (query|sort by|access) /,
  /^Clients aren't allowed to /,
  /^Cannot modify user /,
  /^Invalid (application|object) ID\.$/,
  /^(unauthorized: )?master key is required$/,
  /^Master Key is required to /,
  /^read-only masterKey isn't allowed to /,
  /^Cannot perform a write operation when using readOnlyMasterKey$/,
  /^Route not allowed by routeAllowList: /,
  /^\$\w+ must be an array$/
]

function clientCaused (text: string): boolean {
  return CLIENT_CAUSED.some((pattern) => pattern.test(text)) || REFUSAL_DETAILS.some((pattern) => pattern.test(text)) || refusedSubscription(text)
}

/** Parse's Redis clients (pub/sub, cache) report every failed reconnect attempt and every failed read. */
const REDIS_CLIENT_ERROR = /^Redis(PubSub (Publisher|Subscriber) client|CacheAdapter( client)?) error/

function messageText (message: unknown): string {
  if (typeof message === 'string') return message
  if (message instanceof Error) return message.message
  try { return JSON.stringify(redactValue(message)) } catch { return String(message) }
}

/** `"sessionToken":"r:…"` in a line Parse wrote itself (its request and response dumps), and any `r:…` session token. */
export function redactText (text: string): string {
  return text.replace(/("([^"\\]+)"\s*:\s*)"(?:[^"\\]|\\.)*"/g, (whole, head: string, key: string) => SECRET_KEYS.test(key) ? `${head}"${CENSOR}"` : whole)
    // A session token in running text (LiveQuery's "for session r:…", "sessionToken \"r:…\"").
    .replace(/\br:[0-9a-f]{32}\b/g, CENSOR)
}

/** A copy with every value under a secret key replaced, at any depth (Parse nests bodies and headers). */
export function redactValue (value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return typeof value === 'string' ? redactText(value) : value
  if (value instanceof Error) return value
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1))
  const copy: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) copy[key] = SECRET_KEYS.test(key) ? CENSOR : redactValue(item, depth + 1)
  return copy
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

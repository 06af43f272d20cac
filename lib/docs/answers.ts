// Every answer a declared function's operation can give besides its 200, from
// what the function declares (inputs, session, roles, master key, rate limit)
// and what every declared route does (app id check, verbs, body parsing,
// database outages). All error bodies share one component schema.
import { needsSession, type CloudFunctionOptions } from '../routing/options.js'

export type ResponseObject = Record<string, unknown>

/** Name of the shared error body in components.schemas. */
export const ERROR_SCHEMA = 'ErrorAnswer'

export function errorSchema (): ResponseObject {
  return {
    type: 'object',
    description: 'Parse\'s error shape. `code` is Parse\'s error code (Parse.Error); only the application id refusal (403) has no code.',
    required: ['error'],
    properties: {
      code: { type: 'integer', description: 'Parse error code, e.g. 142 validation, 101 not found / no session, 119 forbidden, 107 invalid JSON, 155 rate limit, 5001 conflict, 5003 database unavailable, 5005 database busy' },
      error: { type: 'string', description: 'What went wrong, for people' }
    }
  }
}

const RETRY_AFTER = { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } }

/**
 * The error responses of one operation (`method` is the OpenAPI method, lower case): the ones the
 * kit itself can give for what the function declares, plus `default` for what its handler throws.
 * A handler's own refusals (101 → 404, 5001 → 409, …) are listed by status when the function
 * declares them in `swagger.responses`.
 */
export function errorResponses (options: CloudFunctionOptions, method: string): Record<string, ResponseObject> {
  const inBody = method !== 'get' && method !== 'head'
  const hasFields = Object.keys(options.validation?.fields ?? {}).length > 0
  const badRequest = [
    hasFields || inBody ? `142: ${inBody ? 'the body is not a JSON object, or ' : ''}a parameter is missing, of the wrong type or out of its bounds (the message names it)` : undefined,
    inBody ? '107: the body is not valid JSON, or has a "__proto__" / "constructor.prototype" key (refused on purpose)' : undefined,
    needsSession(options) && options.requireMaster !== true ? '101: no session token (or an expired one); send X-Parse-Session-Token' : undefined,
    (options.requireRoles?.length ?? 0) > 0 && options.requireMaster !== true
      ? `119: the caller has ${options.requireAllRoles ? 'not every one' : 'none'} of the roles ${options.requireRoles!.join(', ')}`
      : undefined,
    '102: a request the server will not route (odd request target, method override header)',
    '141 / 142 / others: the function refused the call itself (a Parse.Error thrown by the handler)'
  ].filter(Boolean)
  const forbidden = [
    'No code ({"error":"unauthorized"}): a missing or wrong X-Parse-Application-Id (or client key, when the server requires one)',
    options.requireMaster === true ? '119: this function answers only callers presenting the master key' : undefined
  ].filter(Boolean)
  const responses: Record<string, ResponseObject> = {
    400: answer(`Refused request.\n\n${list(badRequest)}`),
    403: answer(`Refused caller.\n\n${list(forbidden)}`),
    405: answer('119: this path does not take that verb; `Allow` lists the ones it takes', { Allow: { description: 'The verbs this path takes', schema: { type: 'string' } } })
  }
  if (inBody) {
    responses[413] = answer('The body is larger than the server\'s body limit')
    responses[415] = answer('The body\'s Content-Type is not application/json or text/plain (JSON text)')
  }
  if (options.rateLimit) {
    responses[429] = answer(`155: more than ${options.rateLimit.max} calls in ${options.rateLimit.windowMs} ms from this address`, { 'Retry-After': RETRY_AFTER })
  }
  responses[500] = answer('1: an unexpected error (logged on the server; the answer says no more)')
  responses[503] = answer('5003: the database cannot be reached, or 5005: no database connection came free in time (overload); try again after `Retry-After`', { 'Retry-After': RETRY_AFTER })
  responses.default = answer(HANDLER_REFUSALS)
  return responses
}

/** What a handler's own Parse.Error answers, when the function does not list that status itself. */
const HANDLER_REFUSALS = 'A refusal the function itself throws (Parse.Error), with Parse\'s status: 101 → 404, 5001 (CONFLICT) → 409, 5003 and 5005 → 503, 1 → 500, any other code → 400'

/** A status the function declares in swagger.responses with only a description: the shared error body. */
export function declaredErrorAnswer (description: string): ResponseObject {
  return answer(description)
}

function answer (description: string, headers?: Record<string, unknown>): ResponseObject {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } }
  }
}

function list (lines: (string | undefined)[]): string {
  return lines.map((line) => `- ${line}`).join('\n')
}

// The cross-origin policy the kit applies under the mount path: its option, checked
// at registration, and the request headers Parse's SDKs send.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { dottedName, optionChecker, typed, type OptionProblem } from '../option-schema.js'

export type CorsOrigin = string | RegExp

const corsOrigin = Type.Union([Type.String(), Type.Object({})])
/** The `cors` option as an object: its type (CorsOptions) and its shape check come from here. */
export const CorsOptionsSchema = Type.Object({
  /** Origins allowed to call: '*' (any), or a list of exact origins ('https://app.example.com') and RegExps. Default '*'. Each string is checked to be an origin below. */
  origin: Type.Optional(typed<CorsOrigin | CorsOrigin[]>(Type.Union([corsOrigin, Type.Array(corsOrigin)], {
    problem: "must be '*', an origin such as 'https://app.example.com', a RegExp, or a list of them"
  }))),
  /** Request headers allowed besides Parse's own (X-Parse-*, Content-Type…). */
  allowedHeaders: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9-]+$' }), { problem: 'must be a list of header names' })),
  /** Seconds a browser may cache a preflight answer. Default 600. */
  maxAge: Type.Optional(Type.Integer({ minimum: 0, problem: 'must be a whole number of seconds ≥ 0' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: "must be false, true, or { origin: ['https://app.example.com'], allowedHeaders?, maxAge? }" })

export type CorsOptions = Static<typeof CorsOptionsSchema>

const checkShape = optionChecker(CorsOptionsSchema)

export interface ResolvedCors {
  origin: CorsOrigin[]
  allowedHeaders: string[]
  maxAge: number
}

/** The headers Parse's SDKs send (Parse Server's own list), plus Content-Type. */
export const PARSE_REQUEST_HEADERS = [
  'X-Parse-Application-Id', 'X-Parse-Session-Token', 'X-Parse-REST-API-Key', 'X-Parse-Master-Key',
  'X-Parse-Javascript-Key', 'X-Parse-Installation-Id', 'X-Parse-Client-Version', 'X-Parse-Revocable-Session',
  'X-Parse-Request-Id', 'X-Requested-With', 'Content-Type', 'Pragma', 'Cache-Control'
]
/**
 * Checks the `cors` option: its shape by CorsOptionsSchema, then what a schema
 * cannot say (each origin a real origin, at least one). `fail` names the option
 * at fault by its path under `cors` ('' for the value as a whole).
 */
export function resolveCors (value: unknown, fail: (option: string, problem: string, kind?: OptionProblem['kind']) => Error): ResolvedCors | false {
  if (value === false) return false
  if (value === undefined || value === true) return { origin: ['*'], allowedHeaders: [], maxAge: 600 }
  // Arrays are objects to the schema: the whole value must be a plain object.
  const shape = Array.isArray(value) ? { kind: 'invalid' as const, path: [], problem: `${CorsOptionsSchema.problem as string} (got a list)` } : checkShape(value)
  if (shape) throw fail(dottedName(shape.path), shape.problem, shape.kind)
  const { origin = '*', allowedHeaders = [], maxAge = 600 } = value as CorsOptions
  const origins = Array.isArray(origin) ? origin : [origin]
  if (origins.length === 0) throw fail('origin', 'lists no origin: list at least one, or set cors: false')
  for (const entry of origins) {
    if (entry instanceof RegExp || entry === '*') continue
    if (typeof entry !== 'string' || !isOrigin(entry)) {
      throw fail('origin', `${JSON.stringify(String(entry))} is not an origin; write scheme://host[:port] with no path or trailing slash, e.g. "https://app.example.com"`)
    }
  }
  return { origin: origins, allowedHeaders, maxAge }
}

function isOrigin (text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text
  } catch {
    return false
  }
}

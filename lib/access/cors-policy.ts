// The cross-origin policy the kit applies under the mount path: its option, checked
// at registration, and the request headers Parse's SDKs send.

export type CorsOrigin = string | RegExp

export interface CorsOptions {
  /** Origins allowed to call: '*' (any), or a list of exact origins ('https://app.example.com') and RegExps. Default '*'. */
  origin?: CorsOrigin | CorsOrigin[]
  /** Request headers allowed besides Parse's own (X-Parse-*, Content-Type…). */
  allowedHeaders?: string[]
  /** Seconds a browser may cache a preflight answer. Default 600. */
  maxAge?: number
}

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
/** Checks the `cors` option; problems come back as text for the caller's option error. */
export function resolveCors (value: unknown, fail: (problem: string, kind?: 'unknown' | 'invalid') => Error): ResolvedCors | false {
  if (value === false) return false
  if (value === undefined || value === true) return { origin: ['*'], allowedHeaders: [], maxAge: 600 }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail("must be false, true, or { origin: ['https://app.example.com'], allowedHeaders?, maxAge? }")
  const { origin = '*', allowedHeaders = [], maxAge = 600, ...rest } = value as CorsOptions
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw fail(`has unknown key "${unknown[0]}" (known: origin, allowedHeaders, maxAge)`, 'unknown')
  const origins = Array.isArray(origin) ? origin : [origin]
  if (origins.length === 0) throw fail('origin: list at least one origin, or set cors: false')
  for (const entry of origins) {
    if (entry instanceof RegExp || entry === '*') continue
    if (typeof entry !== 'string' || !isOrigin(entry)) {
      throw fail(`origin: ${JSON.stringify(String(entry))} is not an origin; write scheme://host[:port] with no path or trailing slash, e.g. "https://app.example.com"`)
    }
  }
  if (!Array.isArray(allowedHeaders) || !allowedHeaders.every((h) => typeof h === 'string' && /^[A-Za-z0-9-]+$/.test(h))) throw fail('allowedHeaders: must be a list of header names')
  if (!Number.isInteger(maxAge) || maxAge < 0) throw fail('maxAge: must be a whole number of seconds ≥ 0')
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

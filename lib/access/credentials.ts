// What a caller presents: Parse SDKs send headers, or (JavaScript SDK, text/plain
// bodies) the same values as underscore keys inside the JSON body.
import { timingSafeEqual, createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

export interface Credentials {
  appId?: string
  masterKey?: string
  sessionToken?: string
  installationId?: string
  restApiKey?: string
  javascriptKey?: string
  /** The SDK's method override (`_method`), upper-cased. */
  method?: string
}

const BODY_KEYS: Record<string, keyof Credentials> = {
  _ApplicationId: 'appId',
  _MasterKey: 'masterKey',
  _SessionToken: 'sessionToken',
  _InstallationId: 'installationId',
  _RestAPIKey: 'restApiKey',
  _JavaScriptKey: 'javascriptKey',
  _method: 'method'
}

/** Underscore keys the SDK adds to a body; a handler never sees them as params. */
export const SDK_BODY_KEYS = [...Object.keys(BODY_KEYS), '_ClientVersion', '_ContentType', '_context', '_RevocableSession']

export function readCredentials (headers: IncomingHttpHeaders, body: unknown): Credentials {
  const fromBody: Credentials = {}
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [key, field] of Object.entries(BODY_KEYS)) {
      const value = (body as Record<string, unknown>)[key]
      if (typeof value === 'string') fromBody[field] = value
    }
  }
  return {
    appId: header(headers, 'x-parse-application-id') ?? fromBody.appId,
    masterKey: header(headers, 'x-parse-master-key') ?? fromBody.masterKey,
    sessionToken: header(headers, 'x-parse-session-token') ?? fromBody.sessionToken,
    installationId: header(headers, 'x-parse-installation-id') ?? fromBody.installationId,
    restApiKey: header(headers, 'x-parse-rest-api-key') ?? fromBody.restApiKey,
    javascriptKey: header(headers, 'x-parse-javascript-key') ?? fromBody.javascriptKey,
    method: fromBody.method?.toUpperCase()
  }
}

function header (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

const digest = (value: string) => createHash('sha256').update(value).digest()
let expectedDigest: { secret: string, digest: Buffer } | undefined

/** Compares secrets in constant time (hashing first so lengths do not leak either). */
export function secretsEqual (presented: string | undefined, expected: string | undefined): boolean {
  if (presented === undefined || expected === undefined || expected === '') return false
  // The expected side is nearly always the master key: hash it once.
  if (expectedDigest?.secret !== expected) expectedDigest = { secret: expected, digest: digest(expected) }
  return timingSafeEqual(digest(presented), expectedDigest.digest)
}

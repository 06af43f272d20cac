// Who may call a declared function, decided once per request: the credentials
// the caller presents, the master-key verdict, then the caller. The verdict is
// taken here, once, and every later step reads it from the admission (the
// client-key check, the caller, the rate limit's allow list) instead of
// hashing the key and matching the address again. Nothing here touches Parse
// Server or the database: a session that has to be read is session.ts's work
// (callerNow, lookUpCaller), a function's own rules authorization.ts's.
import type { IncomingHttpHeaders } from 'node:http'
import Parse from 'parse/node'
import { KitError } from '../errors.js'
import {
  masterKeyVerdict, readCredentials, readHeaderCredentials, secretsEqual,
  type Credentials, type MasterKeyRule, type MasterKeyVerdict
} from './credentials.js'

/** Who is calling: the master key, the user behind a session, or nobody. */
export interface Caller {
  master: boolean
  /** Built on first read. */
  readonly user: Parse.User | undefined
  /** The user's id, known without building the user. */
  readonly userId: string | undefined
}

export const MASTER: Caller = Object.freeze({ master: true, user: undefined, userId: undefined })
export const NOBODY: Caller = Object.freeze({ master: false, user: undefined, userId: undefined })

export interface ClientKeys { clientKey?: string, javascriptKey?: string, dotNetKey?: string }

/** The application's rules, fixed at boot. */
export interface AdmissionRules {
  appId: string
  /** The master key and where it is honoured from (Parse's masterKeyIps). */
  masterKey: MasterKeyRule
  /** When Parse is configured with a REST API key, callers must present it (or the master key). */
  restApiKey?: string
  /** Parse's other client keys: when any is configured, one must match (or the master key), as Parse requires. */
  clientKeys?: ClientKeys
}

/** What admission reads of a request (a FastifyRequest is one). */
export interface Asking {
  readonly headers: IncomingHttpHeaders
  readonly body?: unknown
  readonly ip: string
}

/** Admission's one refusal, Parse's answer to a wrong application id or a missing client key: 403 {"error":"unauthorized"}. */
export const UNAUTHORIZED = 'unauthorized'
export type Unauthorized = typeof UNAUTHORIZED

/** One request's admission. `caller` is set once known (at once, or after a session lookup). */
export class Admission {
  readonly credentials: Credentials
  readonly verdict: MasterKeyVerdict
  /** The caller's address, for the refusal of a master key masterKeyIps does not list. */
  readonly ip: string
  caller: Caller | undefined

  constructor (credentials: Credentials, verdict: MasterKeyVerdict, ip: string) {
    this.credentials = credentials
    this.verdict = verdict
    this.ip = ip
    this.caller = undefined
  }
}

/** Admits the requests of one application; built once at boot and shared by every declared route. */
export class Admitter {
  readonly appId: string
  private readonly masterKey: MasterKeyRule
  private readonly restApiKey: string | undefined
  private readonly keys: ClientKeys
  /** Any client key configured: then one of them (or the master key) must be presented. */
  private readonly keysRequired: boolean

  constructor (rules: AdmissionRules) {
    this.appId = rules.appId
    // Kept as given: the master key's digest is remembered per rule object (credentials.ts).
    this.masterKey = rules.masterKey
    this.restApiKey = rules.restApiKey
    this.keys = rules.clientKeys ?? {}
    this.keysRequired = Boolean(rules.restApiKey || this.keys.clientKey || this.keys.javascriptKey || this.keys.dotNetKey)
  }

  /** A wrong X-Parse-Application-Id header: refused before the body is even read. */
  refusesAppIdHeader (headers: IncomingHttpHeaders): boolean {
    const presented = headers['x-parse-application-id']
    return presented !== undefined && presented !== this.appId
  }

  /**
   * Before the body is read: a caller whose headers name the application is decided now (by
   * Parse's rule the body's keys do not count then); undefined when the body may carry the
   * credentials (the JavaScript SDK's text/plain requests: `admit` once it is parsed).
   */
  fromHeaders (request: Asking): Admission | Unauthorized | undefined {
    if (this.refusesAppIdHeader(request.headers)) return UNAUTHORIZED
    const credentials = readHeaderCredentials(request.headers)
    return credentials === undefined ? undefined : this.decide(credentials, request.ip)
  }

  /** From the headers and the parsed body, as Parse reads them. */
  admit (request: Asking): Admission | Unauthorized {
    return this.decide(readCredentials(request.headers, request.body), request.ip)
  }

  /** The application id, then the master-key verdict (the only time it is taken), then the client keys. */
  private decide (credentials: Credentials, ip: string): Admission | Unauthorized {
    if (credentials.appId !== this.appId) return UNAUTHORIZED
    const verdict = masterKeyVerdict(credentials.masterKey, ip, this.masterKey)
    if (this.keysRequired && verdict !== 'master' && !this.presentsClientKey(credentials)) return UNAUTHORIZED
    return new Admission(credentials, verdict, ip)
  }

  /** Parse's rule: any one configured client key matching admits. */
  private presentsClientKey (credentials: Credentials): boolean {
    return secretsEqual(credentials.restApiKey, this.restApiKey) ||
      secretsEqual(credentials.javascriptKey, this.keys.javascriptKey) ||
      secretsEqual(credentials.clientKey, this.keys.clientKey) ||
      secretsEqual(credentials.dotNetKey, this.keys.dotNetKey)
  }
}

/**
 * The caller when no lookup is needed, from the admission's verdict: the master key, or
 * nobody (no session token); undefined when a session token has to be read (session.ts).
 * Throws for a master key that is wrong or presented from an address masterKeyIps does not
 * list: only here, after the rate limit, so such a caller is counted like any other.
 */
export function callerWithoutLookup (admission: Admission): Caller | undefined {
  const verdict = admission.verdict
  if (verdict === 'master') return MASTER
  if (verdict === 'wrong') throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'Invalid master key')
  if (verdict === 'address') {
    // Parse answers 403 here too.
    throw new KitError(Parse.Error.OPERATION_FORBIDDEN, `The master key is not accepted from ${admission.ip}: Parse Server option masterKeyIps does not include it`, 403)
  }
  return admission.credentials.sessionToken ? undefined : NOBODY
}

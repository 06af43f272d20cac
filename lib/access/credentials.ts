// What a caller presents: Parse SDKs send headers, or (JavaScript SDK, text/plain
// bodies) the same values as underscore keys inside the JSON body. Read exactly
// as Parse's handleParseHeaders reads them, so the kit and Parse never disagree
// about who is calling.
import type { IncomingHttpHeaders } from 'node:http'
import { BlockList, isIP, isIPv4 } from 'node:net'
import { secretDigest, secretsEqual } from '../secret-compare.js'

export interface Credentials {
  appId?: string
  masterKey?: string
  sessionToken?: string
  installationId?: string
  restApiKey?: string
  javascriptKey?: string
  /** X-Parse-Client-Key (iOS/Android SDKs). */
  clientKey?: string
  /** X-Parse-Windows-Key (.NET SDK). */
  dotNetKey?: string
  /** The SDK's method override (`_method`), upper-cased. */
  method?: string
}

/** Underscore keys the SDK adds to a body; a handler never sees them as params. */
export const SDK_BODY_KEYS = [
  '_ApplicationId', '_MasterKey', '_SessionToken', '_InstallationId', '_RestAPIKey', '_JavaScriptKey', '_method',
  '_ClientVersion', '_ContentType', '_context', '_RevocableSession'
]

/**
 * Parse's rule: the headers speak unless the request carries no application id
 * header; then the body's `_ApplicationId` brings its own `_JavaScriptKey`, and its
 * `_SessionToken`, `_MasterKey`, `_InstallationId` replace the headers' when present.
 */
export function readCredentials (headers: IncomingHttpHeaders, body: unknown): Credentials {
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : NO_FIELDS
  // Parse overrides only on a non-empty string.
  const method = bodyString(fields, '_method')?.toUpperCase()
  const headerValues = fromHeaders(headers, method)
  if (headerValues.appId !== undefined || bodyString(fields, '_ApplicationId') === undefined) return headerValues
  return {
    ...headerValues,
    appId: bodyString(fields, '_ApplicationId'),
    javascriptKey: bodyString(fields, '_JavaScriptKey'),
    masterKey: bodyString(fields, '_MasterKey') ?? headerValues.masterKey,
    sessionToken: bodyString(fields, '_SessionToken') ?? headerValues.sessionToken,
    installationId: bodyString(fields, '_InstallationId') ?? headerValues.installationId,
    restApiKey: bodyString(fields, '_RestAPIKey') ?? headerValues.restApiKey
  }
}

/**
 * The credentials when the headers name an application (then, by Parse's rule,
 * the body's underscore keys do not count and readCredentials answers the same
 * but `method`), read before the body arrives; undefined when the body may decide.
 */
export function readHeaderCredentials (headers: IncomingHttpHeaders): Credentials | undefined {
  const credentials = fromHeaders(headers, undefined)
  return credentials.appId === undefined ? undefined : credentials
}

function fromHeaders (headers: IncomingHttpHeaders, method: string | undefined): Credentials {
  // `Authorization: Basic base64(appId:masterKey)` (or `appId:javascript-key=…`) stands in for the headers.
  const authorization = header(headers, 'authorization')
  const basic = authorization === undefined ? undefined : basicAuth(authorization)
  return {
    appId: basic?.appId || header(headers, 'x-parse-application-id'),
    masterKey: basic?.masterKey || header(headers, 'x-parse-master-key'),
    sessionToken: header(headers, 'x-parse-session-token'),
    installationId: header(headers, 'x-parse-installation-id'),
    restApiKey: header(headers, 'x-parse-rest-api-key'),
    javascriptKey: basic?.javascriptKey || header(headers, 'x-parse-javascript-key'),
    clientKey: header(headers, 'x-parse-client-key'),
    dotNetKey: header(headers, 'x-parse-windows-key'),
    method
  }
}

const NO_FIELDS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

/** A non-empty string the body carries under `key`. */
function bodyString (fields: Record<string, unknown>, key: string): string | undefined {
  const value = fields[key]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** Parse's httpAuth: exactly two colon-separated parts, the second a master key or `javascript-key=…`. */
function basicAuth (value: string | undefined): { appId: string, masterKey?: string, javascriptKey?: string } | undefined {
  if (!value || !value.toLowerCase().startsWith('basic ')) return undefined
  const parts = Buffer.from(value.slice('basic '.length), 'base64').toString().split(':')
  if (parts.length !== 2) return undefined
  const [appId, key] = parts
  return key.startsWith('javascript-key=') ? { appId, javascriptKey: key.slice('javascript-key='.length) } : { appId, masterKey: key }
}

function header (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export { secretDigest, secretsEqual }

/** The master key's digest, made once per rule (a rule is built once per kit at boot) and dropped with it. */
const ruleDigests = new WeakMap<MasterKeyRule, Buffer>()

function masterKeyDigest (rule: MasterKeyRule): Buffer {
  let value = ruleDigests.get(rule)
  if (!value) {
    value = secretDigest(rule.key)
    ruleDigests.set(rule, value)
  }
  return value
}

/** Parse Server's own default for `masterKeyIps` (parse-server 9 Options/Definitions). */
export const PARSE_DEFAULT_MASTER_KEY_IPS = ['127.0.0.1', '::1']

export type MasterKeyVerdict = 'absent' | 'master' | 'wrong' | 'address'

/** The master key is honoured only from the addresses Parse honours it from (masterKeyIps). */
export interface MasterKeyRule {
  key: string
  /** Addresses and CIDR ranges, as Parse's masterKeyIps. */
  ips: string[]
}

/** Decides as Parse's checkIp does: IPv4 and IPv6 are separate; 0.0.0.0/0 and ::/0 open a whole family. */
export function masterKeyVerdict (presented: string | undefined, ip: string, rule: MasterKeyRule): MasterKeyVerdict {
  if (presented === undefined) return 'absent'
  if (!secretsEqual(presented, rule.key, masterKeyDigest(rule))) return 'wrong'
  return addressAllowed(ip, rule.ips) ? 'master' : 'address'
}

/** Why `ranges` cannot be a masterKeyIps list, checked at boot (Node's BlockList would throw on each master-key call). */
export function ipRangesProblem (ranges: unknown): string | undefined {
  if (!Array.isArray(ranges) || !ranges.every((range) => typeof range === 'string')) return 'must be a list of addresses or CIDR ranges'
  for (const range of ranges as string[]) {
    try {
      addressAllowed('127.0.0.1', [range])
    } catch {
      return `"${range}" is not an IPv4/IPv6 address or a CIDR range with a valid prefix length (e.g. 10.0.0.0/8, fd00::/8)`
    }
  }
  return undefined
}

const compiled = new WeakMap<string[], { list: BlockList, allIpv4: boolean, allIpv6: boolean, verdicts: Map<string, boolean> }>()
/** Verdicts remembered per list: a master-key caller comes from a handful of addresses, and BlockList.check showed in profiles. */
const MAX_VERDICTS = 1024

export function addressAllowed (ip: string, ranges: string[]): boolean {
  let entry = compiled.get(ranges)
  if (!entry) {
    entry = { list: new BlockList(), allIpv4: false, allIpv6: false, verdicts: new Map() }
    for (const range of ranges) {
      if (range === '::/0' || range === '::' || range === '::0') { entry.allIpv6 = true; continue }
      if (range === '0.0.0.0/0' || range === '0.0.0.0') { entry.allIpv4 = true; continue }
      const [address, mask] = range.split('/')
      const family = isIPv4(address) ? 'ipv4' : 'ipv6'
      if (mask === undefined) entry.list.addAddress(address, family)
      else entry.list.addSubnet(address, Number(mask), family)
    }
    compiled.set(ranges, entry)
  }
  const known = entry.verdicts.get(ip)
  if (known !== undefined) return known
  const verdict = checkAddress(ip, entry)
  // The list never changes: a full cache is simply started again.
  if (entry.verdicts.size >= MAX_VERDICTS) entry.verdicts.clear()
  entry.verdicts.set(ip, verdict)
  return verdict
}

function checkAddress (ip: string, entry: { list: BlockList, allIpv4: boolean, allIpv6: boolean }): boolean {
  if (!isIP(ip)) return false
  const v4 = isIPv4(ip)
  if (v4 ? entry.allIpv4 : entry.allIpv6) return true
  return entry.list.check(ip, v4 ? 'ipv4' : 'ipv6')
}

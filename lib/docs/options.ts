// setupSwagger's configuration and its checks. A mistake fails at boot with a
// message naming the option; `fail` lets kitPlugin name it "docs.<option>".
import { normaliseMountPath } from '../config.js'

export interface SwaggerConfig {
  /** Document title. Required. */
  title: string
  /** Version of the project's API. Required. */
  version: string
  /** Free text. Default "Auto-generated API documentation". */
  description?: string
  /** Server URL path the documented paths are relative to. Default: the configured mountPath. */
  basePath?: string
  /** Shown in the authorize dialog, so readers know which application id to send. */
  appId?: string
  /** Document the REST API key header as required on every operation. Default false. */
  restApiKey?: boolean
  /** With schemes, builds the server URLs (as OpenAPI 2's host/schemes/basePath would). */
  host?: string
  schemes?: string[]
}

export interface ResolvedSwaggerConfig {
  title: string
  version: string
  description: string
  basePath: string
  appId: string | undefined
  restApiKey: boolean
  host: string | undefined
  schemes: string[]
}

export const DEFAULT_DOCS_PATH = '/api-docs'
export const DEFAULT_DESCRIPTION = 'Auto-generated API documentation'

const KNOWN = new Set<keyof SwaggerConfig>(['title', 'version', 'description', 'basePath', 'appId', 'restApiKey', 'host', 'schemes'])
const SCHEMES = new Set(['http', 'https', 'ws', 'wss'])

/** Builds the error for an option ('' stands for the configuration as a whole). */
export type Fail = (option: string, problem: string) => Error

export class SwaggerConfigError extends Error {
  constructor (option: string, problem: string) {
    super(option === '' ? `setupSwagger configuration: ${problem}` : `setupSwagger option "${option}": ${problem}`)
    this.name = 'SwaggerConfigError'
  }
}

const setupFail: Fail = (option, problem) => new SwaggerConfigError(option, problem)

/** Checks a SwaggerConfig; basePath falls back to `mountPath`. */
export function resolveSwaggerConfig (input: unknown, mountPath: string, fail: Fail = setupFail): ResolvedSwaggerConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw fail('', 'must be an object such as { title: "My API", version: "1.0.0" }')
  }
  const config = input as Record<string, unknown>
  for (const key of Object.keys(config)) {
    if (!KNOWN.has(key as keyof SwaggerConfig)) throw fail(key, `unknown option (known: ${[...KNOWN].join(', ')})`)
  }
  const text = (key: keyof SwaggerConfig, required: boolean): string | undefined => {
    const value = config[key]
    if (value === undefined && !required) return undefined
    if (typeof value !== 'string' || value.trim() === '') {
      throw fail(key, required ? `required: a non-empty string (got ${JSON.stringify(value)})` : 'must be a non-empty string')
    }
    return value
  }
  const title = text('title', true)!
  const version = text('version', true)!
  const description = text('description', false) ?? DEFAULT_DESCRIPTION
  const basePath = normaliseUrlPath(text('basePath', false) ?? mountPath, 'basePath', fail, true)
  const appId = text('appId', false)
  if (config.restApiKey !== undefined && typeof config.restApiKey !== 'boolean') {
    throw fail('restApiKey', `must be true or false (got ${JSON.stringify(config.restApiKey)})`)
  }
  const host = text('host', false)
  if (host !== undefined && !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) {
    throw fail('host', `must be a host name with an optional port, without scheme or path, e.g. "api.example.com" (got ${JSON.stringify(host)})`)
  }
  let schemes: string[] = []
  if (config.schemes !== undefined) {
    const list = config.schemes
    if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string' && SCHEMES.has(s.toLowerCase()))) {
      throw fail('schemes', `must be a non-empty list of ${[...SCHEMES].join(', ')} (got ${JSON.stringify(list)})`)
    }
    schemes = list.map((s: string) => s.toLowerCase())
  }
  return { title, version, description, basePath, appId, restApiKey: config.restApiKey === true, host, schemes }
}

/** Where the docs are served: "/api-docs" by default; "/" and patterns are refused. */
export function resolveDocsPath (input: unknown, fail: Fail = setupFail): string {
  if (input === undefined) return DEFAULT_DOCS_PATH
  if (typeof input !== 'string') throw fail('path', `must be a URL path such as "${DEFAULT_DOCS_PATH}" (got ${JSON.stringify(input)})`)
  return normaliseUrlPath(input, 'path', fail, false)
}

function normaliseUrlPath (value: string, option: string, fail: Fail, rootAllowed: boolean): string {
  if (!value.startsWith('/')) throw fail(option, `must start with "/" (got ${JSON.stringify(value)})`)
  if (!/^[A-Za-z0-9/._~-]*$/.test(value) || /(^|\/)\.{1,2}(\/|$)/.test(value)) {
    throw fail(option, `must be a plain URL path: letters, digits, "/", ".", "_", "~", "-" and no "." or ".." segments (got ${JSON.stringify(value)})`)
  }
  const normalised = normaliseMountPath(value)
  if (normalised === '/' && !rootAllowed) throw fail(option, 'must not be "/": choose a path of its own, such as "/api-docs"')
  return normalised
}

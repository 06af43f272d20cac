// setupSwagger's configuration and its checks. A mistake fails at boot with a
// message naming the option; `fail` lets kitPlugin name it "docs.<option>".
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { normaliseMountPath } from '../config.js'
import { DocsOptionInvalidError, DocsOptionUnknownError } from '../errors.js'
import { dottedName, optionChecker } from '../option-schema.js'
import { packageInfo, type Contact, type License } from './package-info.js'

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/
const SCHEMES = ['http', 'https', 'ws', 'wss']
const nonBlank = (problem: string) => Type.String({ pattern: '\\S', problem })

/** setupSwagger's configuration: its type (SwaggerConfig) and its shape check come from here. */
export const SwaggerConfigSchema = Type.Object({
  /** Document title. Required. */
  title: nonBlank('required: a non-empty string'),
  /** Version of the project's API. Required. */
  version: nonBlank('required: a non-empty string'),
  /** Free text. Default "Auto-generated API documentation". */
  description: Type.Optional(nonBlank('must be a non-empty string')),
  /** Server URL path the documented paths are relative to. Default: the configured mountPath. */
  basePath: Type.Optional(nonBlank('must be a non-empty string')),
  /** Shown in the authorize dialog, so readers know which application id to send. */
  appId: Type.Optional(nonBlank('must be a non-empty string')),
  /** Document the REST API key header as required on every operation. Default false. */
  restApiKey: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  /** With schemes, builds the server URLs (as OpenAPI 2's host/schemes/basePath would). */
  host: Type.Optional(Type.String({ pattern: HOST.source, problem: 'must be a host name with an optional port, without scheme or path, e.g. "api.example.com"' })),
  /** info.license; default: the license of the application's package.json; false: none. */
  license: Type.Optional(Type.Union([
    Type.Literal(false),
    Type.Object({ name: nonBlank('must be a non-empty string'), url: Type.Optional(Type.String({ pattern: '^https?://', problem: 'must be an http(s) URL' })) },
      { additionalProperties: false, unknownKey: 'is not a license field', problem: 'must be { name, url? }' })
  ], { problem: 'must be { name, url? } or false' })),
  /** info.contact; default: the author of the application's package.json; false: none. */
  contact: Type.Optional(Type.Union([
    Type.Literal(false),
    Type.Object({
      name: Type.Optional(nonBlank('must be a non-empty string')),
      url: Type.Optional(Type.String({ pattern: '^https?://', problem: 'must be an http(s) URL' })),
      email: Type.Optional(Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', problem: 'must be an email address' }))
    }, { additionalProperties: false, unknownKey: 'is not a contact field', problem: 'must be { name?, url?, email? }' })
  ], { problem: 'must be { name?, url?, email? } or false' })),
  /** Model schemas in components: 'referenced' (default) only those an operation uses; 'all' every @ParseClass. */
  models: Type.Optional(Type.Union([Type.Literal('referenced'), Type.Literal('all')], { problem: 'must be "referenced" or "all"' })),
  schemes: Type.Optional(Type.Array(
    // Any letter case, as URL schemes are.
    Type.String({ pattern: `^(?:${SCHEMES.map((scheme) => [...scheme].map((c) => `[${c}${c.toUpperCase()}]`).join('')).join('|')})$` }),
    { minItems: 1, problem: `must be a non-empty list of ${SCHEMES.join(', ')}` }
  ))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be an object such as { title: "My API", version: "1.0.0" }' })

export type SwaggerConfig = Static<typeof SwaggerConfigSchema>

const checkShape = optionChecker(SwaggerConfigSchema)

export interface ResolvedSwaggerConfig {
  title: string
  version: string
  description: string
  basePath: string
  appId: string | undefined
  restApiKey: boolean
  host: string | undefined
  schemes: string[]
  license: License | undefined
  contact: Contact | undefined
  models: 'referenced' | 'all'
}

export const DEFAULT_DOCS_PATH = '/api-docs'
export const DEFAULT_DESCRIPTION = 'Auto-generated API documentation'

/** Builds the error for an option ('' stands for the configuration as a whole). */
export type Fail = (option: string, problem: string, kind?: 'unknown' | 'invalid') => Error

const setupFail: Fail = (option, problem, kind = 'invalid') => {
  const message = option === '' ? `setupSwagger configuration: ${problem}` : `setupSwagger option "${option}": ${problem}`
  return kind === 'unknown' ? new DocsOptionUnknownError(message) : new DocsOptionInvalidError(message)
}

/** Checks a SwaggerConfig; basePath falls back to `mountPath`. */
export function resolveSwaggerConfig (input: unknown, mountPath: string, fail: Fail = setupFail): ResolvedSwaggerConfig {
  const shape = checkShape(input)
  if (shape) throw fail(dottedName(shape.path), shape.problem, shape.kind)
  const config = input as SwaggerConfig
  const basePath = normaliseUrlPath(config.basePath ?? mountPath, 'basePath', fail, true)
  return {
    title: config.title,
    version: config.version,
    description: config.description ?? DEFAULT_DESCRIPTION,
    basePath,
    appId: config.appId,
    restApiKey: config.restApiKey === true,
    host: config.host,
    schemes: (config.schemes ?? []).map((scheme) => scheme.toLowerCase()),
    ...fromPackage(config),
    models: config.models ?? 'referenced'
  }
}

/** license and contact as configured, else from the application's package.json (read only when one is missing). */
function fromPackage (config: SwaggerConfig): { license: License | undefined, contact: Contact | undefined } {
  const found = config.license === undefined || config.contact === undefined ? packageInfo() : {}
  return {
    license: config.license === false ? undefined : config.license ?? found.license,
    contact: config.contact === false ? undefined : config.contact ?? found.contact
  }
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

/** kitPlugin's `docs` option, checked now, so a docs mistake fails at registration naming "docs.<option>". */
export function resolveDocsOption (value: unknown, mountPath: string): { config: SwaggerConfig, path: string } | undefined {
  if (value === undefined) return undefined
  const fail: Fail = (option, problem, kind = 'invalid') => {
    const message = `kitPlugin option "${option === '' ? 'docs' : `docs.${option}`}": ${problem}`
    return kind === 'unknown' ? new DocsOptionUnknownError(message) : new DocsOptionInvalidError(message)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('', 'must be an object such as { title: "My API", version: "1.0.0", path: "/api-docs" }')
  const { path, ...config } = value as SwaggerConfig & { path?: unknown }
  resolveSwaggerConfig(config, mountPath, fail)
  return { config, path: resolveDocsPath(path, fail) }
}

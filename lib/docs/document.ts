// The served document: what @fastify/swagger built from the routes, completed
// with the configuration (info, servers, security) and one component schema
// per model. Built on first request; built again when a model or function is
// declared afterwards (the registries' revisions change).
import { modelRevision } from '../model/registry.js'
import { declaredFunctions, functionRevision } from '../routing/registry.js'
import { ERROR_SCHEMA, errorResponses, errorSchema } from './answers.js'
import type { OpenApiDocument, RouteCollector } from './collector.js'
import { FUNCTION_EXTENSION } from './operations.js'
import type { ResolvedSwaggerConfig } from './options.js'
import { modelSchemas } from './schemas.js'
import { SCHEME, withRestApiKey, type SecurityRequirement } from './security.js'

const OPERATIONS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** A getter for the document, cached until a registry changes. */
export function documentSource (collector: RouteCollector, config: ResolvedSwaggerConfig): () => OpenApiDocument {
  let cached: { revision: string, document: OpenApiDocument } | undefined
  return () => {
    const revision = `${modelRevision()}.${functionRevision()}`
    if (cached?.revision !== revision) cached = { revision, document: completeDocument(collector.routeDocument(), config) }
    return cached.document
  }
}

/** The complete document, from a route document (which it may reuse parts of). */
export function completeDocument (routeDocument: OpenApiDocument, config: ResolvedSwaggerConfig): OpenApiDocument {
  const { openapi: _version, info: _info, servers: _servers, security: _security, paths = {}, components = {}, ...rest } = routeDocument
  const origins = serverOrigins(config)

  const schemes = { ...components.securitySchemes }
  if (config.appId) {
    schemes[SCHEME.appId] = { ...schemes[SCHEME.appId], description: `The application id; required on every request. This API's application id is "${config.appId}".` }
  }
  if (!config.restApiKey) delete schemes[SCHEME.restApiKey]

  // Every operation needs the application id (and the REST API key when documented as
  // required); declared functions say more on their own operations.
  const base: SecurityRequirement[] = [{ [SCHEME.appId]: [] }]
  const document: OpenApiDocument = {
    openapi: '3.0.3',
    info: { title: config.title, description: config.description, version: config.version },
    servers: origins.map((origin) => ({ url: `${origin}${config.basePath === '/' ? '' : config.basePath}` || '/' })),
    security: config.restApiKey ? withRestApiKey(base) : base,
    ...rest,
    paths: rebasePaths(paths, config.basePath, origins),
    components: { ...components, schemas: { ...components.schemas, ...modelSchemas() }, securitySchemes: schemes }
  }
  withoutHeadBesideGet(document)
  const functions = new Map(declaredFunctions().map((fn) => [fn.name, fn]))
  let answersErrors = false
  for (const [method, operation] of operations(document)) {
    if (!operation[FUNCTION_EXTENSION]) continue
    if (config.restApiKey && Array.isArray(operation.security)) operation.security = withRestApiKey(operation.security)
    // Every verb but GET and HEAD takes a JSON body, declared fields or not.
    if (method !== 'get' && method !== 'head' && !operation.requestBody) operation.requestBody = openBody()
    const fn = functions.get(operation[FUNCTION_EXTENSION])
    if (!fn) continue
    // What the function documents itself (its 200, swagger.responses) stays as it is.
    const errors = errorResponses(fn.options, method)
    operation.responses = { ...operation.responses, ...Object.fromEntries(Object.entries(errors).filter(([status]) => !operation.responses?.[status])) }
    answersErrors = true
  }
  if (answersErrors) document.components.schemas[ERROR_SCHEMA] ??= errorSchema()
  return document
}

/** A declared GET route answers HEAD too (routing/head-route.ts): shown as its GET alone. */
function withoutHeadBesideGet (document: OpenApiDocument): void {
  for (const item of Object.values(document.paths ?? {}) as OpenApiDocument[]) {
    const fn = item.head?.[FUNCTION_EXTENSION]
    if (fn !== undefined && item.get?.[FUNCTION_EXTENSION] === fn) delete item.head
  }
}

function openBody (): OpenApiDocument {
  return { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } }
}

/** "" (same origin as the document), or scheme://host for each scheme (//host without schemes). */
function serverOrigins (config: ResolvedSwaggerConfig): string[] {
  if (!config.host) return ['']
  return config.schemes.length > 0 ? config.schemes.map((scheme) => `${scheme}://${config.host}`) : [`//${config.host}`]
}

/**
 * Paths under basePath become relative to the server URL; any other path (the
 * application's own routes elsewhere) keeps its full path and its own server root.
 */
function rebasePaths (paths: Record<string, OpenApiDocument>, basePath: string, origins: string[]): Record<string, OpenApiDocument> {
  if (basePath === '/') return paths
  const inside = (path: string) => path === basePath || path.startsWith(`${basePath}/`)
  const outside = new Set(Object.keys(paths).filter((path) => !inside(path)))
  const rootServers = origins.map((origin) => ({ url: origin || '/' }))
  const result: Record<string, OpenApiDocument> = {}
  for (const [path, item] of Object.entries(paths)) {
    const relative = inside(path) ? path.slice(basePath.length) || '/' : undefined
    if (relative !== undefined && !outside.has(relative)) result[relative] = item
    else result[path] = { servers: rootServers, ...item }
  }
  return result
}

function * operations (document: OpenApiDocument): Generator<[string, OpenApiDocument]> {
  for (const item of Object.values(document.paths ?? {}) as OpenApiDocument[]) {
    for (const method of OPERATIONS) if (item[method]) yield [method, item[method]]
  }
}

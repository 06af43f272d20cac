// The served document: what @fastify/swagger built from the routes, completed
// with the configuration (info, servers, security) and one component schema
// per model. Built on first request; built again when a model or function is
// declared afterwards (the registries' revisions change).
import { modelRevision } from '../model/registry.js'
import { declaredFunctions, functionRevision } from '../routing/registry.js'
import { declaredErrorAnswer, ERROR_SCHEMA, errorResponses, errorSchema } from './answers.js'
import type { OpenApiDocument, RouteCollector } from './collector.js'
import { operationIds } from './operation-ids.js'
import { FUNCTION_EXTENSION } from './operations.js'
import type { ResolvedSwaggerConfig } from './options.js'
import { modelSchemas } from './schemas.js'
import { SCHEME, withRestApiKey, type SecurityRequirement } from './security.js'
import { mountPrefix } from '../mount-prefix.js'

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
    info: {
      title: config.title,
      description: config.description,
      version: config.version,
      ...(config.license ? { license: config.license } : {}),
      ...(config.contact ? { contact: config.contact } : {})
    },
    servers: origins.map((origin) => ({ url: `${origin}${mountPrefix(config.basePath)}` || '/' })),
    security: config.restApiKey ? withRestApiKey(base) : base,
    ...rest,
    paths: rebasePaths(paths, config.basePath, origins),
    components: { ...components, schemas: { ...components.schemas, ...modelSchemas() }, securitySchemes: schemes }
  }
  withoutHeadBesideGet(document)
  const declared = declaredFunctions()
  const functions = new Map(declared.map((fn) => [fn.name, fn]))
  const ids = operationIds(declared)
  let answersErrors = false
  for (const [method, operation] of operations(document)) {
    if (!operation[FUNCTION_EXTENSION]) continue
    if (config.restApiKey && Array.isArray(operation.security)) operation.security = withRestApiKey(operation.security)
    // Every verb but GET and HEAD takes a JSON body, declared fields or not.
    if (method !== 'get' && method !== 'head' && !operation.requestBody) operation.requestBody = openBody()
    const fn = functions.get(operation[FUNCTION_EXTENSION])
    if (!fn) continue
    const id = ids.get(fn.name)?.get(method)
    if (id) operation.operationId = id
    // What the function documents itself (its 200, swagger.responses) stays as it is; an error
    // status it declares with only a description answers the shared error body.
    for (const [status, declared] of Object.entries<Record<string, unknown>>(fn.options.swagger?.responses ?? {})) {
      const descriptionOnly = Object.keys(declared).every((key) => key === 'description')
      if (isErrorStatus(status) && descriptionOnly && operation.responses?.[status]) {
        operation.responses[status] = declaredErrorAnswer(String(declared.description ?? `${status}: a refusal of ${fn.name}`))
      }
    }
    withExamples(operation, fn.options.swagger?.examples)
    const errors = errorResponses(fn.options, method)
    operation.responses = { ...operation.responses, ...Object.fromEntries(Object.entries(errors).filter(([status]) => !operation.responses?.[status])) }
    answersErrors = true
  }
  if (answersErrors) document.components.schemas[ERROR_SCHEMA] ??= errorSchema()
  if (config.models === 'referenced') withoutUnreferencedSchemas(document)
  return document
}

/** `swagger.examples`: the request's parameters on the body (or each query parameter), the answer on the 200. */
function withExamples (operation: OpenApiDocument, examples: { request?: Record<string, unknown>, answer?: unknown } | undefined): void {
  if (!examples) return
  const { request, answer } = examples
  const body = operation.requestBody?.content?.['application/json']
  if (request !== undefined && body) {
    operation.requestBody = { ...operation.requestBody, content: { ...operation.requestBody.content, 'application/json': { ...body, example: request } } }
  } else if (request !== undefined && Array.isArray(operation.parameters)) {
    operation.parameters = operation.parameters.map((parameter: OpenApiDocument) =>
      parameter.in === 'query' && request[parameter.name] !== undefined ? { ...parameter, example: request[parameter.name] } : parameter)
  }
  const success = operation.responses?.['200']
  if (answer !== undefined && success?.content?.['application/json']) {
    operation.responses['200'] = { ...success, content: { ...success.content, 'application/json': { ...success.content['application/json'], example: answer } } }
  }
}

function isErrorStatus (status: string): boolean {
  return status === 'default' || /^[45]/.test(status)
}

/**
 * Component schemas no operation uses (directly or through another schema) are left out:
 * a reader (and a linter) takes a listed schema for part of the API.
 */
function withoutUnreferencedSchemas (document: OpenApiDocument): void {
  const schemas: Record<string, unknown> = document.components.schemas ?? {}
  const prefix = '#/components/schemas/'
  const used = new Set<string>()
  const pending = [...references({ ...document, components: { ...document.components, schemas: {} } })]
  while (pending.length > 0) {
    const ref = pending.pop()!
    if (!ref.startsWith(prefix)) continue
    const name = decodeURIComponent(ref.slice(prefix.length).split('/')[0].replace(/~1/g, '/').replace(/~0/g, '~'))
    if (used.has(name) || !(name in schemas)) continue
    used.add(name)
    pending.push(...references(schemas[name]))
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name]
}

/** Every $ref under `value`. */
function references (value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) references(item, found)
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner)
      else references(inner, found)
    }
  }
  return found
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

/**
 * Each operation of each path, as an object of its own: @fastify/swagger shares one object
 * between the verbs of a route (PUT and PATCH), and each verb gets its own operationId.
 */
function * operations (document: OpenApiDocument): Generator<[string, OpenApiDocument]> {
  for (const item of Object.values(document.paths ?? {}) as OpenApiDocument[]) {
    for (const method of OPERATIONS) {
      if (!item[method]) continue
      item[method] = { ...item[method], ...(item[method].responses ? { responses: { ...item[method].responses } } : {}) }
      yield [method, item[method]]
    }
  }
}

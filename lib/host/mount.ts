// Parse Server's Express app, mounted under {mount} in its own encapsulated
// Fastify scope: it only sees requests no Fastify route claimed, and only
// after the app id check and route restriction let them through.
//
// The gate decides on what Parse will act on: the path Express routes (origin
// form only, see request-target.ts), the method after Parse's `_method` override
// (every body Parse would parse is parsed here first, and Parse receives that
// same object), and the credentials as Parse reads them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyExpress from '@fastify/express'
import Parse from 'parse/node'
import { PARSE_DEFAULT_MASTER_KEY_IPS, masterKeyVerdict, readCredentials, readHeaderCredentials, type Credentials, type MasterKeyRule } from '../access/credentials.js'
import { blockedMessage, isRouteAllowed, type RestrictionPolicy } from '../access/restriction.js'
import { closestPath } from '../suggest.js'
import { declaredFunctions } from '../routing/registry.js'
import { readBodyAsParseDoes, replyWithParseShape, type UploadBody } from '../http.js'
import { mapRequestTarget, targetRefusal, targetsMount } from '../access/request-target.js'
import { compileRoutes, parseRoutes } from './parse-routes.js'
import type { ParseHost } from './parse-server.js'
import { batchRoutingPath } from '../parse/parse-calls.js'
import { answerHealth, healthPathKind } from './health.js'
import { failedFileReadsAs503, refuseWhileUnavailable, unavailableAs503 } from './unavailable.js'
import { internalErrorAsKitShape } from './internal-error-shape.js'
import type { DatabaseAvailability } from '../storage/availability.js'
import { refuseNul } from '../storage/nul.js'
import { keepKitCorsHeaders } from './cors.js'
import { authAttempt, pageFormAttempt, type AuthLimiter } from './auth-limits.js'
import { mountPrefix } from '../mount-prefix.js'
import { MAX_BODY_DEPTH, nestedDeeperThan } from './body-depth.js'
import { clientLimitProblem, findQueryProblem, pathListProblem } from './query-shape.js'
import { pipelineProblem } from './pipeline-shape.js'
import { aclProblem } from './acl-shape.js'
import { writeProblem } from './write-shape.js'
import { unknownScheduledJob } from './job-route-shape.js'
import { classNameProblem } from './class-name-shape.js'

export interface MountOptions {
  host: ParseHost
  mountPath: string
  appId: string
  masterKey: string
  policy: RestrictionPolicy
  /** The most rows a find without the master key may ask; false: no bound. */
  maxClientLimit?: number | false
  /** Readiness for {mount}/health, and 503s for Parse routes while the database is unreachable. */
  availability: DatabaseAvailability
  /** Rate limits on login, sign-up and the email routes; unset: none. */
  authLimiter?: AuthLimiter
  /** True from the moment close begins: readiness answers 503 while the server still serves (the drain). */
  draining?: () => boolean
}

/** Headers some proxies and frameworks treat as a method override. Parse ignores them; the kit refuses them. */
const OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override']
const VERBS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE'])
const EMAIL_ROUTES = new Set(['/requestpasswordreset', '/verificationemailrequest'])

export async function mountParse (fastify: FastifyInstance, options: MountOptions): Promise<void> {
  const config = parseConfigOf(options.host)
  const gateOptions: GateOptions = {
    ...options,
    masterKeyRule: { key: options.masterKey, ips: masterKeyIpsOf(options.host) },
    isParseRoute: compileRoutes(parseRoutes(options.host.app)),
    emailMissing: ['emailAdapter', 'publicServerURL', 'appName'].filter((name) => !config[name]),
    pagesEndpoint: (config.pages as { pagesEndpoint?: string } | undefined)?.pagesEndpoint ?? 'apps'
  }
  if (options.policy.allowAuthRoutes && gateOptions.emailMissing.length > 0) {
    fastify.log.warn(`allowAuthRoutes: /requestPasswordReset and /verificationEmailRequest answer 400 until Parse Server options ${gateOptions.emailMissing.join(', ')} are set`)
  }
  // Before routing, for every route under the mount (declared ones too): a target
  // Fastify and Express could route differently is refused.
  // Callback style: no promise per request for a hook every request under the instance passes.
  fastify.addHook('onRequest', (request, reply, done) => {
    const url = request.raw.url ?? '/'
    const refusal = targetsMount(url, options.mountPath) ? targetRefusal(url, options.mountPath) : undefined
    if (refusal !== undefined) {
      reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: ${refusal}.` })
      return
    }
    done()
  })
  await fastify.register(async function parseServerMount (scope) {
    readBodyAsParseDoes(scope, (request) => uploadBody(request, options.mountPath))
    scope.setErrorHandler(replyWithParseShape)
    // Verbs no route takes (PROPFIND, SEARCH, …): through the gate too (it refuses them), never Fastify's own 404 shape.
    scope.setNotFoundHandler((request, reply) => {
      reply.code(404).send({ code: Parse.Error.OBJECT_NOT_FOUND, error: `No route ${request.method} ${request.url.split('?')[0]}.` })
    })
    scope.addHook('preHandler', async (request, reply) => gate(request, reply, gateOptions))
    scope.addHook('preHandler', refuseWhileUnavailable(options.availability))
    // Runs after the gate, with the body Fastify already parsed handed to Express.
    await scope.register(fastifyExpress, { expressHook: 'preHandler' })
    scope.use('/', unavailableAs503 as never)
    scope.use('/', internalErrorAsKitShape as never)
    scope.use('/', failedFileReadsAs503(options.availability) as never)
    // Parse's allowCrossDomain would overwrite the kit's policy (or add one where cors is off).
    scope.use('/', keepKitCorsHeaders as never)
    scope.use(`/${gateOptions.pagesEndpoint}`, pagesAsHtml as never)
    // Express names itself on every answer (X-Powered-By); the kit's own answers do not.
    const expressApp = options.host.app as unknown as { disable?: (setting: string) => void }
    expressApp.disable?.('x-powered-by')
    scope.use('/', options.host.app)
    const unreachable = async (_request: FastifyRequest, reply: FastifyReply) => {
      // Parse answers every request it is given; reaching here means Express passed it on.
      return reply.code(404).send({ code: Parse.Error.OBJECT_NOT_FOUND, error: 'Not found' })
    }
    scope.all('/', unreachable)
    // Mounted at the root, OPTIONS /* may already be a route of the instance's (@fastify/cors's,
    // which answers the preflights): that one keeps answering OPTIONS, this one takes the rest.
    const taken = options.mountPath === '/' && scope.hasRoute({ method: 'OPTIONS', url: '/*' })
    scope.route({ method: taken ? scope.supportedMethods.filter((verb) => verb !== 'OPTIONS') : scope.supportedMethods, url: '/*', handler: unreachable })
  }, { prefix: mountPrefix(options.mountPath) })
}

/**
 * Parse's pages answer with Express's res.send(text), which labels text HTML; under
 * @fastify/express that send is Fastify's reply, which labels it text/plain, and a browser
 * would show the page's source. The label Express would give, unless Parse set one.
 */
function pagesAsHtml (_request: unknown, response: { send (...args: unknown[]): unknown, getHeader (name: string): unknown, setHeader (name: string, value: string): void }, next: () => void): void {
  const send = response.send
  response.send = function sendAsExpress (this: unknown, ...args: unknown[]) {
    if (typeof args[0] === 'string' && response.getHeader('content-type') === undefined) response.setHeader('content-type', 'text/html; charset=utf-8')
    return send.apply(this, args)
  }
  next()
}

const parseConfigOf = (host: ParseHost) => (host.server as unknown as { config: Record<string, unknown> }).config

/** Parse's own masterKeyIps (its default ['127.0.0.1', '::1'] when unset), read from the running server. */
export function masterKeyIpsOf (host: ParseHost): string[] {
  const ips = parseConfigOf(host).masterKeyIps
  return Array.isArray(ips) ? ips as string[] : PARSE_DEFAULT_MASTER_KEY_IPS
}

/** POST {mount}/files/{name}: Parse's files router reads that body raw (an upload), whatever its type. */
function isUpload (request: FastifyRequest, mountPath: string): boolean {
  if (request.method !== 'POST') return false
  const target = mapRequestTarget(request.raw.url ?? '/', mountPath)
  return 'path' in target && /^\/files\/[^/]+\/?$/i.test(target.path)
}

/**
 * How an upload's body is read: left unread for Parse's files router when the headers name the
 * application (streaming stays streaming), read whole ('raw', bounded by the body limit) when
 * they do not, since the JavaScript SDK then sends its credentials inside a JSON body.
 */
function uploadBody (request: FastifyRequest, mountPath: string): UploadBody {
  if (!isUpload(request, mountPath)) return undefined
  return readHeaderCredentials(request.headers) === undefined ? 'raw' : 'unread'
}

/**
 * The credentials as Parse reads them. An upload read whole is a Buffer: Parse parses it as
 * JSON for the SDK's `_ApplicationId`, `_MasterKey`, `_SessionToken` (and ignores `_method`).
 */
function credentialsOf (request: FastifyRequest): Credentials {
  if (!Buffer.isBuffer(request.body)) return readCredentials(request.headers, request.body)
  let fields: unknown
  try {
    fields = JSON.parse(request.body.toString('utf8'))
  } catch {
    fields = undefined // Parse answers such an upload 403 too: no application id
  }
  return { ...readCredentials(request.headers, fields), method: undefined }
}

/** GET/HEAD {mount}/files/{appId}/…: the app id the path names. */
function fileDownloadAppId (method: string, path: string): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined
  const match = /^\/files\/([^/]+)\/./i.exec(path)
  if (!match) return undefined
  try {
    return decodeURIComponent(match[1])
  } catch {
    return undefined
  }
}

/**
 * {mount}/{pages}/…, Parse's pages (the links of its verification and password reset emails,
 * and the pages and forms they lead to): the app id their `appId` query or their path
 * ({pages}/{appId}/verify_email) names, where Parse's pages router reads it. A browser
 * following an email's link sends no headers.
 */
function pageAppId (path: string, query: unknown, pagesEndpoint: string): string | undefined {
  const segments = path.split('/')
  if (segments[1]?.toLowerCase() !== pagesEndpoint.toLowerCase()) return undefined
  const fromQuery = (query as Record<string, unknown> | undefined)?.appId
  if (typeof fromQuery === 'string') return fromQuery
  return segments.length > 3 && segments[2] !== '' ? segments[2] : undefined
}

interface GateOptions extends MountOptions {
  masterKeyRule: MasterKeyRule
  /** Where Parse serves its pages (pages.pagesEndpoint, 'apps' by default). */
  pagesEndpoint: string
  isParseRoute: (path: string) => boolean
  emailMissing: string[]
}

async function gate (request: FastifyRequest, reply: FastifyReply, options: GateOptions): Promise<void> {
  const target = mapRequestTarget(request.raw.url ?? '/', options.mountPath)
  if ('refusal' in target) return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: ${target.refusal}.` })
  const path = target.path
  const health = healthPathKind(path)
  if (health) return answerHealth(health, reply, options.availability, options.draining?.() ?? false)
  const override = OVERRIDE_HEADERS.find((name) => request.headers[name] !== undefined)
  if (override) {
    return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: the ${override} header is not honoured here; send the method itself.` })
  }
  // Fastify leaves GET/HEAD bodies unread; Parse's body parsers would read them.
  if (BODYLESS.has(request.method) && hasBody(request)) {
    return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: a ${request.method} request carries no body here.` })
  }
  const credentials = credentialsOf(request)
  // A file's url carries its app id ({mount}/files/{appId}/{name}), as Parse serves it: a
  // browser's <img src> sends no headers. Whether /files is open is still the policy's call.
  const appId = credentials.appId ?? fileDownloadAppId(request.method, path) ?? pageAppId(path, request.query, options.pagesEndpoint)
  if (appId !== options.appId) {
    return reply.code(403).send({ error: 'unauthorized' })
  }
  // Parse's allowMethodOverride: a POST whose body has a string `_method` runs as that method.
  const method = request.method === 'POST' && credentials.method !== undefined ? credentials.method : request.method
  if (!VERBS.has(method)) {
    const refused = method === request.method ? `the method ${method} is not served here` : `unknown method override "${method}"`
    return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: ${refused}.` })
  }
  if (!options.isParseRoute(path)) {
    const base = mountPrefix(options.mountPath)
    // A declared route asked with a verb it has no 405 route for (OPTIONS, TRACE, …). A verb it
    // takes reaches here only through another spelling of its path: that is the 404 below.
    const declared = declaredVerbs(path)
    if (declared && !declared.includes(request.method)) {
      return reply.code(405).header('allow', declared.join(', ')).send({
        code: Parse.Error.OPERATION_FORBIDDEN, error: `Method ${request.method} is not allowed here; use ${declared.join(' or ')}`
      })
    }
    const suggestion = closestPath(path, declaredPaths())
    return reply.code(404).send({
      code: Parse.Error.OBJECT_NOT_FOUND,
      error: `No route ${request.method} ${base}${path}.` + (suggestion ? ` Did you mean ${base}${suggestion}?` : '')
    })
  }
  const master = masterKeyVerdict(credentials.masterKey, request.ip, options.masterKeyRule) === 'master'
  const batch = isBatch(method, path)
  // Parse throws (a 500) for a batch whose url does not end so: it strips that url, less "/batch", from each inner path.
  if (batch && !originalUrl(request).endsWith('/batch')) {
    return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: a batch is sent to ${mountPrefix(options.mountPath)}/batch, with no query string or trailing slash.` })
  }
  const allowed = master || (isRouteAllowed(method, path, options.policy) && (!batch || innerBatchAllowed(request, options)))
  if (!allowed) return reply.code(403).send({ code: Parse.Error.OPERATION_FORBIDDEN, error: blockedMessage(options.policy) })
  if (!master && options.authLimiter) {
    const attempts = authAttempts(method, path, request, options)
    if (attempts.length > 0 && await options.authLimiter.refuse(request, reply, attempts)) return reply
  }
  // The storage adapter refuses NUL characters too; a JSON body is checked here as well, because
  // Parse answers any failure inside a transactional /batch with an opaque 500.
  if (!Buffer.isBuffer(request.body)) {
    if (nestedDeeperThan(request.body)) {
      return reply.code(400).send({ code: Parse.Error.INVALID_JSON, error: `Request refused: the body is nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays, more than Parse Server can walk.` })
    }
    refuseNul(request.body)
  }
  const findProblem = readProblem(method, path, request.query, request.body) ?? (batch ? innerProblem(request, options, (inner, innerPath, body) => readProblem(inner, innerPath, undefined, body)) : undefined)
  if (findProblem) return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: ${findProblem}.` })
  const bound = master ? false : options.maxClientLimit ?? false
  const overLimit = bound === false
    ? undefined
    : clientLimitProblem(method, path, request.query, request.body, bound) ?? (batch ? innerProblem(request, options, (inner, innerPath, body) => clientLimitProblem(inner, innerPath, undefined, body, bound)) : undefined)
  if (overLimit) return reply.code(400).send({ code: Parse.Error.INVALID_QUERY, error: `Request refused: ${overLimit}.` })
  const badAcl = aclProblem(method, path, request.body) ?? (batch ? innerProblem(request, options, aclProblem) : undefined)
  if (badAcl) return reply.code(400).send({ code: Parse.Error.INVALID_ACL, error: `Request refused: ${badAcl}.` })
  const badClass = classNameProblem(method, path) ?? (batch ? innerProblem(request, options, classNameProblem) : undefined)
  if (badClass) return reply.code(400).send({ code: Parse.Error.INVALID_CLASS_NAME, error: `Request refused: ${badClass}.` })
  const badWrite = writeProblem(method, path, request.body) ?? (batch ? innerProblem(request, options, writeProblem) : undefined)
  if (badWrite) return reply.code(400).send({ code: Parse.Error.INVALID_JSON, error: `Request refused: ${badWrite}.` })
  const unknownJob = unknownScheduledJob(method, path, request.body, options.appId) ?? (batch ? innerProblem(request, options, (inner, innerPath, body) => unknownScheduledJob(inner, innerPath, body, options.appId)) : undefined)
  if (unknownJob !== undefined) return reply.code(400).send({ code: Parse.Error.SCRIPT_FAILED, error: `Request refused: job_schedule.jobName names no job of this application (${JSON.stringify(unknownJob)}).` })
  // Inside a /batch too: there Parse answers the missing setup with code 1 and its own wording.
  const emailOff = (_method: string, innerPath: string) => emailNotSetUp(innerPath, options.emailMissing)
  const noEmail = emailOff(method, path) ?? (batch ? innerProblem(request, options, emailOff) : undefined)
  if (noEmail) return reply.code(400).send({ code: Parse.Error.OPERATION_FORBIDDEN, error: noEmail })
}

/** Why an email route (password reset, verification) cannot run here: the Parse Server options it lacks. */
function emailNotSetUp (path: string, missing: string[]): string | undefined {
  if (missing.length === 0 || !EMAIL_ROUTES.has(path.toLowerCase().replace(/\/$/, ''))) return undefined
  return `Password reset and email verification are not set up on this server: set Parse Server option${missing.length > 1 ? 's' : ''} ` +
    `${missing.join(', ')} (parseServerOptions).`
}

const isBatch = (method: string, path: string) => method === 'POST' && path.toLowerCase().replace(/\/$/, '') === '/batch'

/** The url as Express's req.originalUrl gives it to Parse: the request target as sent, undecoded, with its query string. */
const originalUrl = (request: FastifyRequest) => request.raw.url ?? '/'

/**
 * Parse runs a /batch's inner requests through its own router, past Express and
 * the gate: when an application opens /batch, each inner request must be one the
 * open list allows, its path resolved exactly as Parse's batch resolves it.
 */
function innerBatchAllowed (request: FastifyRequest, options: GateOptions): boolean {
  const requests = (request.body as { requests?: unknown } | undefined)?.requests
  // Parse refuses these itself before running anything.
  if (!Array.isArray(requests)) return true
  const routable = batchRouting(request, options)
  return requests.every((inner: { method?: unknown, path?: unknown } | null) => {
    if (!inner || typeof inner !== 'object' || typeof inner.path !== 'string') return true
    let innerPath: string
    try {
      innerPath = routable(inner.path)
    } catch {
      return true // "cannot route batch path": Parse refuses the batch
    }
    return typeof inner.method === 'string' && isRouteAllowed(inner.method, innerPath, options.policy)
  })
}

/** What Parse's find, get or aggregate cannot read (or should not be given) in a request's query and body, as it reads them (an inner request of a /batch has only a body). */
function readProblem (method: string, path: string, query: unknown, body: unknown): string | undefined {
  return findQueryProblem(method, path, query, body) ?? pathListProblem(method, path, query, body) ?? pipelineProblem(method, path, query, body)
}

/**
 * The first problem `check` finds in the inner requests of a /batch, each path resolved as Parse
 * resolves it: Parse runs them past the gate, and inside a transaction answers a TypeError as a 500.
 */
function innerProblem (request: FastifyRequest, options: GateOptions, check: (method: string, path: string, body: unknown) => string | undefined): string | undefined {
  const requests = (request.body as { requests?: unknown } | undefined)?.requests
  if (!Array.isArray(requests)) return undefined
  const routable = batchRouting(request, options)
  for (const inner of requests as Array<{ method?: unknown, path?: unknown, body?: unknown } | null>) {
    if (!inner || typeof inner !== 'object' || typeof inner.path !== 'string' || typeof inner.method !== 'string') continue
    let innerPath: string
    try {
      innerPath = routable(inner.path)
    } catch {
      continue // Parse refuses the batch
    }
    const problem = check(inner.method.toUpperCase(), innerPath, inner.body)
    if (problem) return problem
  }
  return undefined
}

/** The sign-in attempts a request makes: itself (an auth route, a page's form), or the inner requests of a /batch. */
function authAttempts (method: string, path: string, request: FastifyRequest, options: GateOptions): NonNullable<ReturnType<typeof authAttempt>>[] {
  const direct = authAttempt(method, path, request.body, request.query) ?? pageFormAttempt(method, path, request.body, options.pagesEndpoint)
  if (direct) return [direct]
  if (!isBatch(method, path)) return []
  const requests = (request.body as { requests?: unknown } | undefined)?.requests
  if (!Array.isArray(requests)) return []
  const routable = batchRouting(request, options)
  return requests.flatMap((inner: { method?: unknown, path?: unknown, body?: unknown } | null) => {
    if (!inner || typeof inner !== 'object' || typeof inner.path !== 'string') return []
    let innerPath: string
    try {
      innerPath = routable(inner.path)
    } catch {
      return []
    }
    // Parse runs an inner request without a method as a GET.
    const attempt = authAttempt(typeof inner.method === 'string' ? inner.method.toUpperCase() : 'GET', innerPath, inner.body, undefined)
    return attempt ? [attempt] : []
  })
}

/**
 * Parse's own resolution of inner paths, from the batch's url as Parse reads it (req.originalUrl):
 * it strips that url less "/batch" from each inner path, so `/parse/%62atch` or a query string
 * moves the prefix, and the gate must strip the same one.
 */
function batchRouting (request: FastifyRequest, options: GateOptions): (path: string) => string {
  const config = parseConfigOf(options.host)
  return batchRoutingPath(originalUrl(request), config.serverURL as string, config.publicServerURL as string | undefined)
}

function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** The verbs a declared route answers, when `path` is one (entity route or /functions twin). */
function declaredVerbs (path: string): string[] | undefined {
  const wanted = path.toLowerCase().replace(/\/$/, '')
  for (const fn of declaredFunctions()) {
    const methods: string[] = [...(fn.options.methods ?? ['POST'])]
    const withHead = (verbs: string[]) => verbs.includes('GET') && !verbs.includes('HEAD') ? [...verbs, 'HEAD'] : verbs
    if (fn.prefix && wanted === `/${fn.prefix}/${fn.name}`.toLowerCase()) return withHead(methods)
    if (wanted === `/functions/${fn.name}`.toLowerCase()) return withHead(methods.includes('GET') ? ['POST', 'GET'] : ['POST'])
  }
  return undefined
}

/** Declared routes under the mount, for "did you mean". */
function declaredPaths (): string[] {
  return declaredFunctions().flatMap((fn) => fn.prefix ? [`/${fn.prefix}/${fn.name}`, `/functions/${fn.name}`] : [`/functions/${fn.name}`])
}

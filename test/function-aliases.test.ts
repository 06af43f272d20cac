// The /functions twins of routed functions share one route per verb
// (lib/routing/function-aliases.ts). A router whose maxParamLength is shorter
// than every name gives each twin its own routes instead, as every twin had
// before: the same functions, booted both ways, must answer every request the
// same, byte for byte (status, the headers that matter, body), and count the
// same in the metrics, under application hooks that replace the body and every
// object payload. Requests cover every verb, the spellings a client might
// use, every kind of caller, and bodies valid and not, in one fixed order (the
// rate-limited function's counter runs out the same way on both). Every caller
// and body goes to each function's own path; its other spellings, which decide
// only which route answers, go with the callers and bodies that tell the routes
// apart (3,472 requests a boot, where the full cross made 8,960).
import t, { type Test } from 'tap'
import Parse from 'parse/node'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import type { FastifyInstance, FastifyServerOptions, preSerializationHookHandler, preValidationHookHandler } from 'fastify'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, type CloudRequest } from '../lib/index.js'
import { APP_ID, MASTER_KEY, startKit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const master = { useMasterKey: true }

@ParseClass('AliasNote')
class AliasNote extends BaseModel {
  @ParseField({ type: 'String' }) declare title: string
}

@Route('aliases')
class AliasFunctions {
  @CloudFunction({ validation: { fields: { title: { type: String, required: true }, count: { type: Number } } } })
  static create (request: CloudRequest) { return { fn: 'create', params: request.params } }

  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number }, status: { type: String, options: ['draft', 'live'] } } } })
  static list (request: CloudRequest) { return { fn: 'list', params: request.params } }

  @CloudFunction({ methods: ['GET', 'POST'], returns: { ok: { type: Boolean }, title: { type: String } } })
  static typed () { return { ok: true, title: 'typed', notDeclared: 'dropped by the schema' } }

  @CloudFunction({ methods: ['POST'], returns: { title: { type: String } } })
  static saved () { return new AliasNote({ title: 'saved' }).save(null, master) }

  @CloudFunction({ methods: ['POST'], rateLimit: { max: 3, windowMs: 60_000 } })
  static limited () { return 'within the limit' }

  @CloudFunction({ methods: ['POST'], requiresAuth: true })
  static signedIn (request: CloudRequest) { return { user: request.user?.get('username') ?? null, master: request.master } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['AliasAdmins'] })
  static admins () { return 'admins only' }

  @CloudFunction({ methods: ['POST'], validation: { fields: { n: { type: Number, required: true } } }, customErrorMessage: 'send n, a number' })
  static custom (request: CloudRequest) { return request.params.n }

  @CloudFunction({ methods: ['POST'] })
  static fails () { throw new Parse.Error(Parse.Error.SCRIPT_FAILED, 'failed on purpose') }

  @CloudFunction({ methods: ['PUT'] })
  static onlyPut () { return 'put' }

  @CloudFunction({ methods: ['POST'] })
  static nothing () { return undefined }

  // `$` percent-encoded stays encoded when the router matches a fixed path, but not in a path parameter.
  @CloudFunction({ methods: ['POST', 'GET'] })
  static $dollar () { return 'dollar' }
}

/** A function without @Route: its /functions path is its own route either way. */
class UnroutedFunctions {
  @CloudFunction({ methods: ['POST'] })
  static unrouted () { return 'unrouted' }

  // Its /functions path is its only path: it takes the verb it declares.
  @CloudFunction({ methods: ['PUT'] })
  static unroutedPut () { return 'put without @Route' }
}

const NAMES = ['create', 'list', 'typed', 'saved', 'limited', 'signedIn', 'admins', 'custom', 'fails', 'onlyPut', 'nothing', '$dollar', 'unrouted', 'undeclared']
const VERBS = ['POST', 'GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']

interface Body { payload?: string, contentType?: string }
const BODIES: Record<string, Body> = {
  none: {},
  empty: { payload: '{}', contentType: 'application/json' },
  valid: { payload: JSON.stringify({ title: 'x', count: 2, n: 5, extra: true }), contentType: 'application/json' },
  wrongTypes: { payload: JSON.stringify({ title: 12345, count: 'two', n: 'five' }), contentType: 'application/json' },
  array: { payload: '[1,2]', contentType: 'application/json' },
  invalidJson: { payload: '{"title":', contentType: 'application/json' },
  sdkTextPlain: { payload: JSON.stringify({ _ApplicationId: APP_ID, _MasterKey: MASTER_KEY, title: 'sdk', n: 1 }), contentType: 'text/plain' }
}

/** How each verb is sent: bodies only where a body can go, every kind for the verbs twins take or refuse first. */
function bodiesFor (verb: string): string[] {
  if (verb === 'GET' || verb === 'HEAD') return ['none']
  return verb === 'POST' || verb === 'PUT' ? Object.keys(BODIES) : ['none', 'valid']
}

function spellings (name: string): string[] {
  const path = `/parse/functions/${name}`
  return [
    path,
    `${path}/`,
    `${path}?limit=3&status=live`,
    `${path}?title=fromQuery`,
    `/parse/functions/${name.toUpperCase()}`,
    `/parse/functions/%${name.charCodeAt(0).toString(16)}${name.slice(1)}`,
    `/parse//functions/${name}`,
    `//parse/functions/${name}`
  ]
}

/**
 * What the other spellings are sent with. The spelling, the verb and the name decide
 * which route answers (the twin's, the shared one, Parse's own); what the caller and
 * the body change is decided by that route's handler, and every caller and body
 * reaches it through the first spelling. The two callers past admission, with and
 * without a valid body and with a body that does not parse, tell each route apart.
 */
const OTHER_SPELLINGS = { callers: ['app', 'master'], bodies: ['none', 'valid', 'invalidJson'] }

const HEADERS_COMPARED = ['content-type', 'content-length', 'allow', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'retry-after', 'access-control-allow-origin']

/** Every answer, in order, as one line each: ids and dates a save makes differ between the two boots. */
async function answers (parent: Test, server: FastifyServerOptions, replySerializer: boolean): Promise<{ lines: string[], ownTwinRoutes: boolean, metrics: string[] }> {
  const lines: string[] = []
  let ownTwinRoutes = false
  let metrics: string[] = []
  await parent.test(`boot with ${JSON.stringify(server)}`, async (t) => {
    const kit = await startKit(t, {
      functions: [AliasFunctions, UnroutedFunctions],
      models: [AliasNote],
      metrics: { defaultMetrics: false },
      cors: { origin: ['https://app.example.com'] }
    }, server, (app) => {
      // An instance-wide reply serialiser comes before a route's response schema, in Fastify.
      if (replySerializer) app.setReplySerializer((payload) => `serialised by the application: ${JSON.stringify(payload)}`)
      const replaced = (payload: unknown) => payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? { ...payload, seenByTheApplication: true } : payload
      // An application hook that replaces the payload: a `returns` schema serialises the new one, as before.
      app.addHook('preSerialization', (_request, _reply, payload, done) => { done(null, replaced(payload)) })
      // Route hooks a plugin appends to every route (after the kit's own): a copy of the body
      // is still validated, and a replaced answer still goes through the `returns` schema.
      app.addHook('onRoute', (route) => {
        const copyBody: preValidationHookHandler = (request, _reply, done) => {
          if (request.body !== null && typeof request.body === 'object') request.body = { ...request.body }
          done()
        }
        const envelope: preSerializationHookHandler = (_request, _reply, payload, done) => { done(null, replaced(payload)) }
        route.preValidation = [...[route.preValidation ?? []].flat(), copyBody]
        route.preSerialization = [...[route.preSerialization ?? []].flat(), envelope] as never
      })
    })
    ownTwinRoutes = kit.app.hasRoute({ method: 'POST', url: '/parse/functions/create' })
    const put = await kit.app.inject({ method: 'PUT', url: '/parse/functions/unroutedPut', headers: { 'x-parse-application-id': APP_ID, 'content-type': 'application/json' }, payload: '{}' })
    t.same([put.statusCode, put.json()], [200, { result: 'put without @Route' }], 'a PUT-only function without @Route is served with PUT')
    const user = await kit.signUp('alias-user')
    const callers: Record<string, Record<string, string>> = {
      nobody: {},
      app: { 'x-parse-application-id': APP_ID },
      wrongApp: { 'x-parse-application-id': 'another-app' },
      master: { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY },
      session: { 'x-parse-application-id': APP_ID, 'x-parse-session-token': user.token },
      cors: { 'x-parse-application-id': APP_ID, origin: 'https://app.example.com' }
    }
    for (const name of NAMES) {
      for (const [spelling, url] of spellings(name).entries()) {
        for (const verb of VERBS) {
          for (const [callerName, headers] of Object.entries(callers)) {
            for (const bodyName of bodiesFor(verb)) {
              // Bodies are varied for the callers that get past admission; the others see one kind.
              if (bodyName !== 'none' && bodyName !== 'valid' && callerName !== 'app' && callerName !== 'master') continue
              if (spelling > 0 && !OTHER_SPELLINGS.callers.includes(callerName)) continue
              if (spelling > 0 && !OTHER_SPELLINGS.bodies.includes(bodyName)) continue
              const body = BODIES[bodyName]
              const response = await kit.app.inject({
                method: verb as 'GET',
                url,
                headers: { ...headers, ...(body.contentType ? { 'content-type': body.contentType } : {}) },
                ...(body.payload !== undefined ? { payload: body.payload } : {})
              })
              // The seconds left in a rate-limit window (and so a 429's length) depend on how fast the machine got there.
              const timed = response.statusCode === 429 ? ['retry-after', 'content-length'] : []
              const kept = HEADERS_COMPARED.map((header) => `${header}=${timed.includes(header) ? '<timed>' : response.headers[header] ?? ''}`).join(' ')
              const text = response.body
                .replace(/Retry in [^."]+/g, 'Retry in <s>')
                .replace(/"objectId":"[A-Za-z0-9]+"/g, '"objectId":"<id>"')
                .replace(/"(createdAt|updatedAt)":"[^"]+"/g, '"$1":"<date>"')
                .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<date>')
              lines.push(`${verb} ${url} ${callerName} ${bodyName} → ${response.statusCode} ${kept} ${text}`)
            }
          }
        }
      }
    }
    const scraped = await kit.app.inject({ method: 'GET', url: '/metrics' })
    const families = parsePrometheusTextFormat(scraped.body) as Array<{ name: string, metrics: Array<{ labels?: Record<string, string>, value?: string, count?: string }> }>
    metrics = families
      .filter((family) => family.name === 'fpk_function_requests_total' || family.name === 'fpk_function_duration_seconds')
      .flatMap((family) => family.metrics.map((metric) => `${family.name} ${JSON.stringify(metric.labels)} ${metric.value ?? metric.count}`))
      .sort()
  })
  return { lines, ownTwinRoutes, metrics }
}

// Parse logs each call it answers "Invalid function" (a misspelt twin path reaches it): not wanted here.
const quiet = { logger: { level: 'fatal' } }

t.test('twins on one shared route answer as twins on routes of their own', (t) => compare(t, {}, false))

// The router takes more spellings here: the shared route must take exactly the ones a twin's own route took.
t.test('and with a router that ignores case, trailing and duplicate slashes, and a reply serialiser of the application\'s', (t) =>
  compare(t, { caseSensitive: false, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true }, true))

async function compare (t: Test, routerOptions: NonNullable<FastifyServerOptions['routerOptions']>, replySerializer: boolean): Promise<void> {
  // A database each on the process's one PostgreSQL (what a boot writes, a user or a row, is its own).
  const shared = await answers(t, { ...quiet, routerOptions }, replySerializer)
  const own = await answers(t, { ...quiet, routerOptions: { ...routerOptions, maxParamLength: 2 } }, replySerializer)
  t.notOk(shared.ownTwinRoutes, 'the twins of routed functions are served by the shared route')
  t.ok(own.ownTwinRoutes, 'with names longer than maxParamLength, each twin has routes of its own')
  t.equal(shared.lines.length, own.lines.length, `${shared.lines.length} requests each way`)
  const differing = shared.lines.filter((line, i) => line !== own.lines[i])
  t.same(differing.slice(0, 5), [], `every answer the same (${differing.length} differ; the first are shown)`)
  if (differing.length > 0) {
    const i = shared.lines.indexOf(differing[0])
    t.comment(`shared: ${shared.lines[i]}\nown:    ${own.lines[i]}`)
  }
  // The cases the comparison must include to mean anything.
  const served = shared.lines.filter((line) => / → 200 /.test(line) && line.startsWith('POST /parse/functions/create '))
  t.ok(served.length > 0, 'a twin call was served')
  t.ok(shared.lines.some((line) => line.includes(' → 429 ')), 'the rate limit ran out')
  t.ok(shared.lines.some((line) => /POST \/parse\/functions\/custom .* → 400 .*send n, a number/.test(line)), 'a validation refusal with the custom message')
  const typed = replySerializer
    ? /POST \/parse\/functions\/typed .* → 200 .*serialised by the application: .*"notDeclared"/
    : /POST \/parse\/functions\/typed .* → 200 .*\{"result":\{"ok":true,"title":"typed"\}\}/
  t.ok(shared.lines.some((line) => typed.test(line)), replySerializer ? 'a `returns` answer serialised by the application' : 'a `returns` answer serialised by its schema')
  t.ok(shared.lines.some((line) => /POST \/parse\/functions\/saved .* → 200 .*"__type":"Object","className":"AliasNote"/.test(line)), 'a saved object answered with its tags')
  t.ok(shared.lines.some((line) => /^HEAD \/parse\/functions\/list .* → 200 /.test(line)), 'HEAD on a GET twin')
  t.ok(shared.lines.some((line) => / → 405 .*allow=POST /.test(line)), 'a verb a twin refuses')
  t.same(shared.metrics, own.metrics, 'the metrics count the same calls under the same function')
  t.ok(shared.metrics.some((line) => line.includes('"function":"create"')), 'twin calls are counted under their function')
}

// A twin on the shared route has no route of its own for Fastify to find a duplicate of:
// an application route on a twin's path (as the router spells it) fails the boot as it
// did, added before or after the kit; one with constraints of its own shares the path.
t.test('an application route on a twin\'s path fails the boot as a duplicate route', async (t) => {
  const own = async () => 'own route'
  const loose = { ...quiet, routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } }
  const cases: Array<[string, FastifyServerOptions, (app: FastifyInstance) => void, (app: FastifyInstance) => void]> = [
    ['POST before the kit', quiet, (app) => { app.post('/parse/functions/create', own) }, () => {}],
    ['GET before the kit', quiet, (app) => { app.get('/parse/functions/list', own) }, () => {}],
    ['POST after the kit', quiet, () => {}, (app) => { app.post('/parse/functions/create', own) }],
    ['HEAD after the kit', quiet, () => {}, (app) => { app.head('/parse/functions/list', own) }],
    ['another spelling of the path, after the kit, on a router that takes it', loose, () => {}, (app) => { app.post('/parse/functions/CREATE/', own) }]
  ]
  // The boots fail once the kit adds its routes, after the database opened: one PostgreSQL server and database for all of them.
  const { databaseURI } = await sharedPostgres(t)
  for (const [label, server, before, after] of cases) {
    let app: FastifyInstance | undefined
    await t.rejects(startKit(t, { functions: [AliasFunctions], databaseURI }, server, (instance) => { app = instance; before(instance) }, after),
      { code: 'FST_ERR_DUPLICATED_ROUTE', message: /already declared for route '\/parse\/functions\/(create|list|CREATE\/)'$/ }, label)
    await app?.close()
  }
})

t.test('an application route with a host constraint on a twin\'s path takes that host only', async (t) => {
  const kit = await startKit(t, { functions: [AliasFunctions] }, quiet, undefined, (app) => {
    app.post('/parse/functions/create', { constraints: { host: 'admin.example' } }, async () => 'admin route')
  })
  const headers = { 'x-parse-application-id': APP_ID, 'content-type': 'application/json' }
  const admin = await kit.app.inject({ method: 'POST', url: '/parse/functions/create', headers: { ...headers, host: 'admin.example' }, payload: '{}' })
  t.equal(admin.body, 'admin route')
  const twin = await kit.app.inject({ method: 'POST', url: '/parse/functions/create', headers, payload: JSON.stringify({ title: 'x' }) })
  t.same(twin.json(), { result: { fn: 'create', params: { title: 'x' } } })
})

// Declared functions as the kit serves them, one test process for what were
// separate files (each process costs seconds of loading Parse Server):
// - a function declared after the kit booted is refused with what to do, instead
//   of being silently neither served nor documented (was late-declaration);
// - query-string values of declared fields arrive converted to their declared
//   type, undeclared ones as strings; the endpoints guide, the generated
//   templates and the API document say the same (was query-conversion);
// - requireMaster: a declared function only a master-key caller may run, and
//   the API document saying so (was require-master);
// - test/response-schemas.test.ts: `returns` serialises both routes and is documented;
// - test/declared-admission.test.ts: how a declared endpoint admits its caller;
// - test/shutdown-drain.test.ts: the drain before close over keep-alive clients.
// Each part boots its own kit; the routes of all parts are declared in the one
// process, under distinct names.
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseModel, CloudFunction, Type, ParseClass, Route, type CloudRequest, ParseField, addUsersToRole, configureRoleCache } from '../lib/index.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { appHeaders, masterHeaders, startKit, APP_ID, MASTER_KEY } from './helpers/kit.js'
import Parse from 'parse/node'
import { parseConfig } from '../lib/access/parse-config.js'
import http from 'node:http'
import type { Socket } from 'node:net'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

// ── declared after boot (was late-declaration.test.ts) ──

@Route('early')
class Early {
  @CloudFunction({ methods: ['GET'] }) static ping () { return 'pong' }
}

t.test('a @CloudFunction declared after boot throws, naming it and what to change', async (t) => {
  t.same(declaredFunctions().filter((fn) => fn.owner === Early).map((fn) => fn.label).sort(), ['Early.ping'], '@CloudFunction declared Early')
  const kit = await startKit(t, { docs: { title: 'Late', version: '1.0.0' } })
  t.equal((await kit.request('GET', '/parse/early/ping', { headers: appHeaders })).json, 'pong')
  t.throws(() => {
    class Late {
      static later () { return 'never served' }
    }
    CloudFunction()(Late, 'later', Object.getOwnPropertyDescriptor(Late, 'later')!)
  }, /@CloudFunction Late\.later: declared after kitPlugin booted, so it would be neither served nor documented\. Import the file before kitPlugin is registered/)
  t.match((await kit.request('POST', '/parse/functions/later', { headers: appHeaders, body: {} })).json, { code: 141, error: /Invalid function/ }, 'not served')
  const document = await kit.request('GET', '/api-docs/json')
  t.notOk(JSON.stringify(document.json).includes('later'), 'not documented')
})

t.test('after the kit closed, declaring is allowed again (the next kit serves it)', async (t) => {
  class Next {
    static hello () { return 'hi' }
  }
  CloudFunction({ methods: ['GET'] })(Next, 'hello', Object.getOwnPropertyDescriptor(Next, 'hello')!)
  const kit = await startKit(t)
  t.equal((await kit.request('GET', '/parse/functions/hello', { headers: appHeaders })).json?.result, 'hi')
})

// ── query-string conversion (was query-conversion.test.ts) ──

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const read = (file: string) => readFileSync(path.join(root, file), 'utf8')

@Route('filters')
class Filters {
  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number }, active: { type: Boolean }, name: { type: String } } } })
  static echo (request: CloudRequest) {
    const { limit, active, name, page } = request.params as Record<string, unknown>
    return { limit: [limit, typeof limit], active: [active, typeof active], name: [name, typeof name], page: [page, typeof page] }
  }
}

t.test('the handler sees declared query fields typed, undeclared ones as strings', async (t) => {
  t.same(declaredFunctions().filter((fn) => fn.owner === Filters).map((fn) => fn.label).sort(), ['Filters.echo'], '@CloudFunction declared Filters')
  const kit = await startKit(t, { docs: { title: 'Filters', version: '1.0.0' } })
  const answer = await kit.request('GET', '/parse/filters/echo?limit=5&active=true&name=7&page=2', { headers: appHeaders })
  t.equal(answer.status, 200, answer.text)
  t.same(answer.json, { limit: [5, 'number'], active: [true, 'boolean'], name: ['7', 'string'], page: ['2', 'string'] })

  const document = (await kit.request('GET', '/api-docs/json')).json
  const parameters = document.paths['/filters/echo'].get.parameters as Array<{ name: string, in: string, schema: { type: string } }>
  t.same(parameters.map((p) => [p.in, p.name, p.schema.type]).sort(), [['query', 'active', 'boolean'], ['query', 'limit', 'number'], ['query', 'name', 'string']],
    'the API document shows the declared query parameters with their types')
})

t.test('the endpoints guide and the generated templates say the same', async (t) => {
  const readme = read('docs/guides/endpoints.md')
  t.match(readme, /a handler reads `\?limit=5&active=true`\s+as\s+the\s+number\s+`5`\s+and\s+the\s+boolean\s+`true`/)
  t.match(readme, /an\s+undeclared\s+`\?page=2`\s+arrives\s+as\s+the\s+string\s+`"2"`/)
  const rules = read('cli/templates/ai/rules.md')
  t.notMatch(rules, /Query-string values arrive as strings/, 'the AI rules no longer say every value is a string')
  t.match(rules, /Fields declared in `validation.fields` arrive validated and converted to their declared type/)
  t.match(rules, /undeclared query-string values arrive as strings/)
  const resource = read('cli/templates/resource/functions.ts')
  t.notMatch(resource, /Query-string values arrive as strings: convert them here/)
  t.match(resource, /Declared query-string fields arrive validated and converted/)
})

// ── requireMaster (was require-master.test.ts) ──

@ParseClass('Vault')
class Vault extends BaseModel {}

@Route(Vault)
class VaultFunctions {
  @CloudFunction({ requireMaster: true }) static rotateKeys (request: CloudRequest) { return { master: request.master } }
  @CloudFunction({ requiresAuth: true }) static peek () { return 'peeked' }
}

t.test('requireMaster is a @CloudFunction option with a checked value', async (t) => {
  t.throws(() => {
    class Wrong {
      @CloudFunction({ requireMaster: 'yes' as never }) static x () {}
    }
    return Wrong
  }, /option "requireMaster" must be true or false/)
})

t.test('only the master key passes; the document asks for it alone', async (t) => {
  const kit = await startKit(t, { models: [Vault], functions: [VaultFunctions], docs: { title: 'Vault', version: '1' } })
  const { token } = await kit.signUp('vault-user')
  for (const url of ['/parse/vaults/rotateKeys', '/parse/functions/rotateKeys']) {
    const anonymous = await kit.request('POST', url, { headers: appHeaders, body: {} })
    t.equal(anonymous.status, 403, `${url}: no key → 403`)
    t.match(anonymous.json, { code: 119, error: /Master key required/ })
    const user = await kit.request('POST', url, { headers: { ...appHeaders, 'x-parse-session-token': token }, body: {} })
    t.equal(user.status, 403, `${url}: a session is not enough`)
    const wrong = await kit.request('POST', url, { headers: { ...appHeaders, 'x-parse-master-key': 'not-the-key' }, body: {} })
    t.match(wrong, { status: 400, json: { code: 119, error: 'Invalid master key' } }, `${url}: a wrong master key is refused`)
    const master = await kit.request('POST', url, { headers: masterHeaders, body: {} })
    t.equal(master.status, 200, `${url}: the master key passes`)
  }
  t.same((await kit.request('POST', '/parse/vaults/rotateKeys', { headers: masterHeaders, body: {} })).json, { master: true })

  const document = (await kit.request('GET', '/api-docs/json')).json
  t.same(document.paths['/vaults/rotateKeys'].post.security, [{ appId: [], masterKey: [] }], 'master key only')
  t.same(document.paths['/vaults/peek'].post.security, [{ appId: [], sessionToken: [] }, { appId: [], masterKey: [] }], 'session or master key')
})

// ── from test/response-schemas.test.ts ──
// Response schemas (`returns`): Fastify serialises with them on both routes of
// a function, fields they do not list are not sent, and the API document
// shows them as the 200 response. (Their compile-time side: test/types/.)
@ParseClass('Shape')
class Shape extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'String' }) declare secret: string
}

const Public = Type.Object({ shown: Type.String(), count: Type.Integer() }, { description: 'The public part' })
const ShapeJSON = Type.Object({ objectId: Type.String(), name: Type.String(), createdAt: Type.String({ format: 'date-time' }) })

@Route('shapes')
export class ShapeFunctions {
  @CloudFunction({ methods: ['GET'], returns: Public })
  static leaky () {
    const answer = { shown: 'yes', count: 2, secret: 'must not leave the server' }
    return answer
  }

  @CloudFunction({ returns: { id: { type: String, required: true }, done: { type: Boolean } } })
  static shorthand () {
    const answer = { id: 'x', done: true, internal: 'not listed' }
    return answer
  }

  @CloudFunction({ returns: ShapeJSON })
  static async saved () {
    return new Shape({ name: 'circle', secret: 'kept in the database' }).save(null, { useMasterKey: true })
  }

  @CloudFunction({ methods: ['GET'] })
  static untyped () {
    return { shown: 'yes', secret: 'sent: no schema' }
  }

  @CloudFunction({ rateLimit: { windowMs: 600_000, max: 1 }, requireMaster: true })
  static limited () {
    return { done: true }
  }
}

t.test('returns', async (t) => {
  const kit = await startKit(t, { docs: { title: 'Shapes', version: '1.0.0' } })
  const post = (url: string) => kit.request('POST', url, { headers: masterHeaders, body: {} })

  t.test('a field the schema does not list is not sent, on both routes', async (t) => {
    const entity = await kit.request('GET', '/parse/shapes/leaky', { headers: appHeaders })
    t.equal(entity.status, 200)
    t.same(entity.json, { shown: 'yes', count: 2 })
    t.notMatch(entity.text, /secret/)
    const functions = await post('/parse/functions/leaky')
    t.same(functions.json, { result: { shown: 'yes', count: 2 } })
    t.notMatch(functions.text, /secret/)
    t.same((await post('/parse/shapes/shorthand')).json, { id: 'x', done: true }, 'the validation-style shorthand')
  })

  t.test('a Parse.Object answers through its toJSON(), cut to the schema', async (t) => {
    const saved = await post('/parse/shapes/saved')
    t.equal(saved.status, 200)
    t.same(Object.keys(saved.json).sort(), ['createdAt', 'name', 'objectId'])
    t.equal(saved.json.name, 'circle')
    const stored = await new Parse.Query(Shape).get(saved.json.objectId, { useMasterKey: true })
    t.equal(stored.secret, 'kept in the database')
    // On Parse's /functions path the object keeps the tags Parse.Cloud.run decodes into a Parse.Object.
    const wrapped = await post('/parse/functions/saved')
    t.same(Object.keys(wrapped.json.result).sort(), ['__type', 'className', 'createdAt', 'name', 'objectId'])
    t.match(wrapped.json.result, { __type: 'Object', className: 'Shape', name: 'circle' })
    t.notMatch(wrapped.text, /secret/)
  })

  t.test('without returns the answer is sent whole', async (t) => {
    t.same((await kit.request('GET', '/parse/shapes/untyped', { headers: appHeaders })).json, { shown: 'yes', secret: 'sent: no schema' })
  })

  t.test('the API document shows the schema as the 200 response', async (t) => {
    const document = (await kit.request('GET', '/api-docs/json')).json
    const leaky = document.paths['/shapes/leaky'].get.responses['200']
    t.equal(leaky.description, 'The public part')
    t.same(Object.keys(leaky.content['application/json'].schema.properties), ['shown', 'count'])
    const shorthand = document.paths['/shapes/shorthand'].post.responses['200']
    t.equal(shorthand.description, 'What shorthand answers', 'a description of its own, not "Default Response"')
    t.same(shorthand.content['application/json'].schema.required, ['id'])
    // Besides its 200, every operation lists the refusals it can give (docs/reference/http-answers.md).
    t.same(Object.keys(document.paths['/shapes/untyped'].get.responses), ['200', '400', '403', '405', '500', '503', 'default'], 'no 404 or 409: a declared route cannot give them; anything else is the default error shape')
    t.equal(document.paths['/shapes/untyped'].get.responses['200'].description, 'Default Response', 'no returns: no schema')
  })

  t.test('the refusals a function can give are documented from its declaration, and given as documented', async (t) => {
    const document = (await kit.request('GET', '/api-docs/json')).json
    const limited = document.paths['/shapes/limited'].post.responses
    t.same(Object.keys(limited), ['200', '400', '403', '405', '413', '415', '429', '500', '503', 'default'])
    t.match(limited['403'].description, /only callers presenting the master key/)
    t.match(limited['429'], { description: /more than 1 calls in 600000 ms/, headers: { 'Retry-After': { schema: { type: 'integer' } } } })
    t.same(limited['429'].content['application/json'].schema, { $ref: '#/components/schemas/ErrorAnswer' })
    t.match(document.components.schemas.ErrorAnswer, { type: 'object', required: ['error'], properties: { code: { type: 'integer' }, error: { type: 'string' } } })
    t.notMatch(document.paths['/shapes/untyped'].get.responses['400'].description, /body/, 'a GET takes no body: no body refusals')

    const noMaster = await kit.request('POST', '/parse/shapes/limited', { headers: appHeaders, body: {} })
    t.match({ status: noMaster.status, ...noMaster.json }, { status: 403, code: Parse.Error.OPERATION_FORBIDDEN })
    const second = await kit.request('POST', '/parse/shapes/limited', { headers: appHeaders, body: {} })
    t.match({ status: second.status, ...second.json }, { status: 429, code: Parse.Error.REQUEST_LIMIT_EXCEEDED, error: String })
    t.ok(Number(second.headers.get('retry-after')) > 0, 'Retry-After, as documented')
  })
})

// ── from test/declared-admission.test.ts ──
// How a declared endpoint admits its caller: a caller whose headers name the
// application is judged before the body is read (one onRequest hook), a caller
// whose credentials ride in a text/plain body (the JavaScript SDK) once the
// body is parsed, and a session Parse's cache holds is read with no promise.
// Each test fails if one of those paths skipped a check: Parse's header-over-
// body rule, the app id, a session's expiry or logout, roles, a schema's order.
@Route('admission')
class AdmissionFunctions {
  @CloudFunction({ methods: ['POST'], requireRoles: ['Clerk'], roleCacheMs: 60_000 })
  static clerksOnly (request: CloudRequest) { return { user: request.user?.getUsername() ?? null, params: request.params } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['Clerk'], roleCacheMs: 60_000, validation: { fields: { amount: { type: Number, required: true } } } })
  static clerksWithSchema (request: CloudRequest) { return { params: request.params } }

  @CloudFunction({ methods: ['POST'], requireMaster: true })
  static masterOnly (request: CloudRequest) { return { master: request.master } }

  @CloudFunction({ methods: ['POST'] })
  static open (request: CloudRequest) { return { params: request.params, installationId: request.installationId ?? null } }
}

t.test('declared endpoints admit callers by Parse\'s rules on every path', async (t) => {
  void AdmissionFunctions
  const kit = await startKit(t, { allowAuthRoutes: true })
  configureRoleCache({ ttlMs: 60_000 })
  t.teardown(() => configureRoleCache(false))
  const clerk = await kit.signUp('clerk')
  const visitor = await kit.signUp('visitor')
  await addUsersToRole('Clerk', [clerk.id])
  const session = (token: string) => ({ ...appHeaders, 'x-parse-session-token': token })
  const plain = (url: string, body: Record<string, unknown>) => kit.request('POST', url, { body, contentType: 'text/plain' })

  t.test('headers naming the application: the body\'s session token and master key do not count (Parse\'s rule)', async (t) => {
    const withBodyToken = await kit.request('POST', '/parse/admission/clerksOnly', { headers: appHeaders, body: { _SessionToken: clerk.token } })
    t.equal(withBodyToken.json.code, Parse.Error.OBJECT_NOT_FOUND, `no user from the body: ${withBodyToken.text}`)
    t.match(withBodyToken.json.error, /Authentication required/)
    const withBodyMaster = await kit.request('POST', '/parse/admission/masterOnly', { headers: appHeaders, body: { _MasterKey: MASTER_KEY } })
    t.equal(withBodyMaster.status, 403, withBodyMaster.text)
    const ok = await kit.request('POST', '/parse/admission/clerksOnly', { headers: session(clerk.token), body: { _SessionToken: visitor.token, note: 'x' } })
    t.equal(ok.status, 200, ok.text)
    t.same(ok.json, { user: 'clerk', params: { note: 'x' } }, 'the header session is the caller, and the SDK key left params')
  })

  t.test('Basic auth names the application too; a wrong X-Parse-Application-Id beside it is still refused', async (t) => {
    const basic = (appId: string, key: string) => `Basic ${Buffer.from(`${appId}:${key}`).toString('base64')}`
    const master = await kit.request('POST', '/parse/admission/masterOnly', { headers: { authorization: basic(APP_ID, MASTER_KEY) }, body: {} })
    t.same(master.json, { master: true }, master.text)
    const mixed = await kit.request('POST', '/parse/admission/masterOnly', {
      headers: { authorization: basic(APP_ID, MASTER_KEY), 'x-parse-application-id': 'another-app' }, body: {}
    })
    t.equal(mixed.status, 403)
    t.same(mixed.json, { error: 'unauthorized' })
    const wrongBasic = await kit.request('POST', '/parse/admission/open', { headers: { authorization: basic('another-app', MASTER_KEY) }, body: {} })
    t.equal(wrongBasic.status, 403)
  })

  t.test('credentials in a text/plain body: app id, session and roles are all checked, on routes with and without a schema', async (t) => {
    const passes = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: clerk.token, _ClientVersion: 'js8', note: 'y' })
    t.equal(passes.status, 200, passes.text)
    t.same(passes.json, { user: 'clerk', params: { note: 'y' } })
    const wrongApp = await plain('/parse/admission/clerksOnly', { _ApplicationId: 'another-app', _SessionToken: clerk.token })
    t.equal(wrongApp.status, 403)
    t.same(wrongApp.json, { error: 'unauthorized' })
    const noRole = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: visitor.token })
    t.equal(noRole.json.code, Parse.Error.OPERATION_FORBIDDEN, noRole.text)
    const badToken = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: 'r:not-a-session' })
    t.equal(badToken.json.code, Parse.Error.INVALID_SESSION_TOKEN, badToken.text)
    const noAppId = await plain('/parse/admission/open', { note: 'z' })
    t.equal(noAppId.status, 403, 'neither headers nor body name the application')

    // The schema is checked only after the caller: a caller without the role learns nothing about the input.
    const refusedFirst = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: visitor.token, amount: 'not a number' })
    t.equal(refusedFirst.json.code, Parse.Error.OPERATION_FORBIDDEN, refusedFirst.text)
    const validated = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: clerk.token, amount: 'not a number' })
    t.equal(validated.status, 400, validated.text)
    t.not(validated.json.code, Parse.Error.OPERATION_FORBIDDEN)
    const accepted = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: clerk.token, _InstallationId: 'i-1', amount: 3 })
    t.same(accepted.json, { params: { amount: 3 } }, accepted.text)
    const headerRefusedFirst = await kit.request('POST', '/parse/admission/clerksWithSchema', { headers: session(visitor.token), body: { amount: 'not a number' } })
    t.equal(headerRefusedFirst.json.code, Parse.Error.OPERATION_FORBIDDEN, headerRefusedFirst.text)
    const installation = await plain('/parse/admission/open', { _ApplicationId: APP_ID, _InstallationId: 'inst-9', a: 1 })
    t.same(installation.json, { params: { a: 1 }, installationId: 'inst-9' })
  })

  t.test('a cached session: a logout, and an expired session, are refused on the path that reads Parse\'s cache', async (t) => {
    const leaving = await kit.signUp('leaving')
    const expiring = await kit.signUp('expiring')
    await addUsersToRole('Clerk', [leaving.id, expiring.id])
    const call = (token: string) => kit.request('POST', '/parse/admission/clerksOnly', { headers: session(token), body: {} })
    for (const user of [leaving, expiring]) {
      t.equal((await call(user.token)).status, 200)
      t.equal((await call(user.token)).status, 200, 'answered from Parse\'s session cache and the role cache')
      const entry = await parseConfig(APP_ID).cacheController!.user.get(user.token)
      t.ok(entry, 'Parse holds the session in its cache')
    }

    const logout = await kit.request('POST', '/parse/logout', { headers: session(leaving.token), body: {} })
    t.equal(logout.status, 200, logout.text)
    const afterLogout = await call(leaving.token)
    t.equal(afterLogout.json.code, Parse.Error.INVALID_SESSION_TOKEN, afterLogout.text)

    // The session expires (in the database, and in the entry Parse cached): the cached entry must not answer.
    const past = new Date(Date.now() - 60_000)
    // Written through Parse's database controller: the SDK and REST treat expiresAt as read-only.
    const database = parseConfig(APP_ID).database as unknown as { update (className: string, query: object, update: object): Promise<unknown> }
    await database.update('_Session', { sessionToken: expiring.token }, { expiresAt: { __type: 'Date', iso: past.toISOString() } })
    const entry = await parseConfig(APP_ID).cacheController!.user.get(expiring.token) as Record<string, unknown> | null
    t.ok(entry, 'the entry is still cached')
    entry!.expiresAt = past.toISOString()
    const afterExpiry = await call(expiring.token)
    t.equal(afterExpiry.json.code, Parse.Error.INVALID_SESSION_TOKEN, afterExpiry.text)
  })
})

t.test('an application\'s preHandler hooks run only for admitted callers, whatever carries the credentials', async (t) => {
  void AdmissionFunctions
  const reached: string[] = []
  const kit = await startKit(t, {}, {}, (app) => {
    app.addHook('preHandler', (request, _reply, done) => { reached.push(request.url); done() })
  })
  // Schema-less and schema routes, credentials in headers and in a text/plain body (the JavaScript SDK).
  const refused = [
    await kit.request('POST', '/parse/admission/masterOnly', { headers: appHeaders, body: {} }),
    await kit.request('POST', '/parse/admission/masterOnly', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' }),
    await kit.request('POST', '/parse/admission/clerksOnly', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' }),
    await kit.request('POST', '/parse/admission/clerksWithSchema', { body: { _ApplicationId: APP_ID, amount: 1 }, contentType: 'text/plain' })
  ]
  for (const answer of refused) t.ok(answer.status >= 400 && answer.status < 500, `refused: ${answer.status} ${answer.text}`)
  t.same(reached, [], 'no preHandler hook ran for a refused caller')
  const admitted = await kit.request('POST', '/parse/admission/open', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' })
  t.equal(admitted.status, 200, admitted.text)
  t.same(reached, ['/parse/admission/open'], 'and it runs for an admitted one')
})

// ── from test/shutdown-drain.test.ts ──
// The drain before close (shutdown.drainDelayMs), over real HTTP with
// keep-alive clients: readiness answers 503 while requests are still served,
// and a request still running when listening stops finishes, after which its
// keep-alive socket is closed, so the close ends then (it waited for Fastify's
// 72 s keepAliveTimeout, past the shutdown budget).
const DRAIN_MS = 1_000

@Route('drain')
class DrainFunctions {
  /** Answers once `release` is called: a request in flight for as long as the test wants. */
  @CloudFunction({ methods: ['GET'] })
  static async held () {
    DrainFunctions.arrived = true
    await new Promise<void>((resolve) => { DrainFunctions.release = resolve })
    return { done: true }
  }

  @CloudFunction({ methods: ['GET'] })
  static quick () { return { done: true } }

  static release: () => void = () => {}
  static arrived = false
}

interface Answer { status: number, connection?: string, socket: Socket }

function get (origin: string, path: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${origin}${path}`, { agent, headers: appHeaders }, (response) => {
      const socket = response.socket
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, socket }))
    })
    request.on('error', reject)
  })
}

t.test('drain, then close with a keep-alive request in flight', async (t) => {
  const kit = await startKit(t, { functions: [DrainFunctions], shutdown: { drainDelayMs: DRAIN_MS } }, { forceCloseConnections: 'idle', return503OnClosing: false })
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const inFlightAgent = new http.Agent({ keepAlive: true })
  t.teardown(() => inFlightAgent.destroy())

  const inFlight = get(kit.origin, '/parse/drain/held', inFlightAgent)
  await until('the held request to arrive', () => DrainFunctions.arrived, scaled(10_000))
  let closed = false
  const closing = kit.app.close().then(() => { closed = true })

  const health = await get(kit.origin, '/parse/health', agent)
  t.equal(health.status, 503, 'readiness answers 503 during the drain')
  t.equal((await get(kit.origin, '/parse/health/live', agent)).status, 200, 'liveness still 200')
  const served = await get(kit.origin, '/parse/drain/quick', agent)
  t.same([served.status, served.connection], [200, 'close'], 'a request arriving during the drain is served, with Connection: close')

  // Past the drain: listening stops; the request in flight since before the close finishes.
  await new Promise((resolve) => setTimeout(resolve, DRAIN_MS + 300))
  DrainFunctions.release()
  const answer = await inFlight
  t.equal(answer.status, 200, 'the request in flight finishes')
  await until('the server to close the finished request\'s keep-alive socket', () => answer.socket.destroyed || answer.socket.readyState === 'closed', scaled(10_000))
  await until('app.close() to end', () => closed, scaled(10_000))
  await closing
})

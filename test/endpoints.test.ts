// Declared models and endpoints over HTTP, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - endpoints: this file's own tests (first part, its comment kept)
// - test/models.test.ts (merged here): Models against the real Parse Server on the embedded PostgreSQL. …
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, ProtectedCloudFunction, Route, addUsersToRole, addRoleToRole, removeUsersFromRole, configureRoleCache, invalidateRoles, asCaller, type CloudRequest, BeforeSave, ParseVersionField, validateOrThrow, implementACL, roleKey, catchError, getUserRoles, createSchemaConfig, CONFLICT, CONFLICT_MESSAGE, MAX_QUERY_LIMIT } from '../lib/index.js'
import { APP_ID, appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'

// ── endpoints ──
// Declared endpoints against the real server: routing, validation, guards,
// role cache, rate limits, replies, and the real Parse JavaScript SDK.
const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')

@ParseClass('Gadget')
class Gadget extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
}

@ParseClass('Person')
class Person extends BaseModel {}

@Route(Person)
class PersonFunctions {
  @CloudFunction({ methods: ['GET'] }) static getPerson () { return 'person' }
}

@Route(Gadget)
class GadgetFunctions {
  @CloudFunction({ methods: ['GET'] }) static getGadget (request: CloudRequest) { return { fn: 'getGadget', params: request.params } }
  @CloudFunction({ methods: ['GET'] }) static getGadgetCategory () { return { fn: 'getGadgetCategory' } }
  @CloudFunction({ methods: ['POST'], validation: { fields: { title: { type: String, required: true }, count: { type: Number }, tags: { type: Array } } } })
  static createGadget (request: CloudRequest) { return { params: request.params } }

  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number }, active: { type: Boolean } } } })
  static searchGadgets (request: CloudRequest) { return { params: request.params, types: Object.fromEntries(Object.entries(request.params).map(([k, v]) => [k, typeof v])) } }

  @CloudFunction({ methods: ['POST', 'GET'], requiresAuth: true })
  static whoAmI (request: CloudRequest) { return { user: request.user?.getUsername() ?? null, master: request.master, functionName: request.functionName, ip: request.ip } }

  @ProtectedCloudFunction() static protectedOne (request: CloudRequest) { return request.user!.getUsername() }
  @CloudFunction({ requireRoles: ['Editor'] }) static editorsOnly () { return 'editor ok' }
  @CloudFunction({ requireRoles: ['Admin', 'Auditor'], requireAllRoles: true }) static adminAndAuditor () { return 'both' }
  @CloudFunction({ requireRoles: ['Reviewer'] }) static reviewCached () { return 'reviewed' }
  @CloudFunction({ requireRoles: ['Reviewer'], roleCacheMs: 0 }) static reviewUncached () { return 'reviewed' }
  @CloudFunction({ rateLimit: { windowMs: 60_000, max: 2 } }) static limited () { return 'within limit' }
  @CloudFunction({ requireRoles: ['Nobody'], customErrorMessage: 'Only the night shift may do this' }) static nightShift () { return 'never' }
  @CloudFunction() static boom () { throw new Error('secret internal detail at /srv/app.js:12') }
  @CloudFunction() static notFound () { throw new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'No such gadget') }
  @CloudFunction() static async makeGadget (request: CloudRequest) { return new Gadget({ name: request.params.name }).save(null, { useMasterKey: true }) }
  @CloudFunction() fromInstance () { return `instance of ${this.constructor.name}` }
}

class Unrouted {
  @CloudFunction() static ping (request: CloudRequest) { return { pong: true, master: request.master } }
}

const userHeaders = (token: string) => ({ ...appHeaders, 'x-parse-session-token': token })

t.test('declared endpoints', async (t) => {
  t.ok(PersonFunctions && GadgetFunctions && Unrouted)
  const kit: Kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions') })
  const signUp = async (name: string) => {
    const { id, token } = await kit.signUp(name)
    return { user: Parse.User.createWithoutData(id) as Parse.User, token }
  }
  const call = (method: string, url: string, init?: { headers?: Record<string, string>, body?: unknown, contentType?: string }) =>
    kit.request(method, url, { headers: appHeaders, ...init })

  t.test('paths come from @Route and the method names', async (t) => {
    const a = await call('GET', '/parse/gadgets/getGadget')
    const b = await call('GET', '/parse/gadgets/getGadgetCategory')
    t.equal(a.json.fn, 'getGadget')
    t.equal(b.json.fn, 'getGadgetCategory', 'a method whose name starts like another gets its own route')
    t.equal((await call('GET', '/parse/people/getPerson')).json, 'person', 'Person → people')
    t.equal((await call('POST', '/parse/gadgets/fromInstance', { body: {} })).json, 'instance of GadgetFunctions', 'prototype methods work too')
    t.same((await call('POST', '/parse/functions/ping', { body: {} })).json, { result: { pong: true, master: false } }, 'a function without @Route lives at /functions/{name}')
    const notRouted = await call('POST', '/parse/unrouteds/ping', { body: {} })
    t.equal(notRouted.status, 404, 'and nowhere else (no route of Parse either: 404)')
    t.equal((await call('POST', '/parse/functions/getGadget', { body: {} })).json.result.fn, 'getGadget', 'a routed function answers at /functions/{name} too')
  })

  t.test('other verbs answer 405 with Allow', async (t) => {
    const put = await call('PUT', '/parse/gadgets/getGadget', { body: {} })
    t.equal(put.status, 405)
    t.equal(put.headers.get('allow'), 'GET, HEAD')
    t.match(put.json, { code: Parse.Error.OPERATION_FORBIDDEN, error: /PUT is not allowed/ })
    const get = await call('GET', '/parse/gadgets/createGadget')
    t.equal(get.status, 405)
    t.equal(get.headers.get('allow'), 'POST')
  })

  t.test('validation: a missing required field answers 400 naming it; declared types convert, the rest stays as sent', async (t) => {
    const missing = await call('POST', '/parse/gadgets/createGadget', { body: { count: 1 } })
    t.equal(missing.status, 400)
    t.equal(missing.json.code, Parse.Error.VALIDATION_ERROR)
    t.match(missing.json.error, /title/)
    const wrong = await call('POST', '/parse/gadgets/createGadget', { body: { title: 't', tags: { not: 'a list' } } })
    t.equal(wrong.status, 400, wrong.text)
    const query = await call('GET', '/parse/gadgets/searchGadgets?limit=5&active=true&status=open')
    t.same(query.json.params, { limit: 5, active: true, status: 'open' })
    t.same(query.json.types, { limit: 'number', active: 'boolean', status: 'string' }, 'undeclared query values stay strings')
    const broken = await call('POST', '/parse/gadgets/createGadget', { body: '{"title":', contentType: 'application/json' })
    t.equal(broken.status, 400)
    t.equal(broken.json.code, Parse.Error.INVALID_JSON)
  })

  t.test('a text/plain JSON body works, with SDK keys taken out of params', async (t) => {
    const result = await kit.request('POST', '/parse/gadgets/createGadget', {
      body: { title: 'plain', _ApplicationId: APP_ID, _ClientVersion: 'js8.6.0', _InstallationId: 'inst-1' },
      contentType: 'text/plain'
    })
    t.equal(result.status, 200, result.text)
    t.same(result.json.params, { title: 'plain' })
  })

  t.test('the application id is required', async (t) => {
    for (const headers of [{}, { 'x-parse-application-id': 'nope' }] as Array<Record<string, string>>) {
      const result = await kit.request('GET', '/parse/gadgets/getGadget', { headers })
      t.equal(result.status, 403)
      t.same(result.json, { error: 'unauthorized' })
    }
  })

  t.test('requiresAuth: no session refused, a session allowed, the master key allowed', async (t) => {
    const anonymous = await call('POST', '/parse/gadgets/whoAmI', { body: {} })
    t.equal(anonymous.status, 400)
    t.match(anonymous.json, { code: Parse.Error.OBJECT_NOT_FOUND, error: /Authentication required/ })
    const { token } = await signUp('wendy')
    const withUser = await call('POST', '/parse/gadgets/whoAmI', { headers: userHeaders(token), body: {} })
    t.match(withUser.json, { user: 'wendy', master: false, functionName: 'whoAmI', ip: '127.0.0.1' })
    const withMaster = await call('GET', '/parse/gadgets/whoAmI', { headers: masterHeaders })
    t.same(withMaster.json.master, true)
    const badToken = await call('POST', '/parse/gadgets/whoAmI', { headers: userHeaders('r:not-a-token'), body: {} })
    t.equal(badToken.json.code, Parse.Error.INVALID_SESSION_TOKEN)
    const badMaster = await call('POST', '/parse/gadgets/whoAmI', { headers: { ...appHeaders, 'x-parse-master-key': 'guess' }, body: {} })
    t.equal(badMaster.json.code, Parse.Error.OPERATION_FORBIDDEN)
    const protectedOne = await call('POST', '/parse/gadgets/protectedOne', { headers: userHeaders(token), body: {} })
    t.equal(protectedOne.json, 'wendy')
    t.equal((await call('GET', '/parse/gadgets/protectedOne')).status, 405, '@ProtectedCloudFunction is POST only')
  })

  t.test('roles: any vs all, inherited roles count, customErrorMessage', async (t) => {
    const { user, token } = await signUp('ed')
    const editorsOnly = () => call('POST', '/parse/gadgets/editorsOnly', { headers: userHeaders(token), body: {} })
    const refused = await editorsOnly()
    t.match(refused.json, { code: Parse.Error.OPERATION_FORBIDDEN, error: /Insufficient permissions.*Editor/ })
    await addUsersToRole('Admin', [user])
    await addRoleToRole('Admin', 'Editor')
    t.equal((await editorsOnly()).json, 'editor ok', 'an Admin passes an Editor check through the role graph')
    const both = () => call('POST', '/parse/gadgets/adminAndAuditor', { headers: userHeaders(token), body: {} })
    t.equal((await both()).json.code, Parse.Error.OPERATION_FORBIDDEN, 'requireAllRoles needs every role')
    await addUsersToRole('Auditor', [user])
    t.equal((await both()).json, 'both')
    const night = await call('POST', '/parse/gadgets/nightShift', { headers: userHeaders(token), body: {} })
    t.equal(night.json.error, 'Only the night shift may do this')
    const master = await call('POST', '/parse/gadgets/nightShift', { headers: masterHeaders, body: {} })
    t.equal(master.json, 'never', 'the master key passes role checks')
  })

  t.test('role cache: a revoked role stays until expiry; invalidateRoles and roleCacheMs 0 see it at once', async (t) => {
    configureRoleCache({ ttlMs: 60_000 })
    t.teardown(() => configureRoleCache(false))
    const { user, token } = await signUp('rita')
    await addUsersToRole('Reviewer', [user])
    const cached = () => call('POST', '/parse/gadgets/reviewCached', { headers: userHeaders(token), body: {} })
    const uncached = () => call('POST', '/parse/gadgets/reviewUncached', { headers: userHeaders(token), body: {} })
    t.equal((await cached()).json, 'reviewed')
    await removeUsersFromRole('Reviewer', [user])
    t.equal((await cached()).json, 'reviewed', 'the cached role is still effective')
    t.equal((await uncached()).json.code, Parse.Error.OPERATION_FORBIDDEN, 'roleCacheMs: 0 never caches')
    invalidateRoles(user.id!)
    t.equal((await cached()).json.code, Parse.Error.OPERATION_FORBIDDEN, 'invalidateRoles makes the revocation immediate')
    await addUsersToRole('Reviewer', [user])
    configureRoleCache(false)
    t.equal((await cached()).json, 'reviewed', 'with the cache off every check reads the role graph')
  })

  t.test('rate limit: the (max+1)-th call in the window is refused, on either entry path', async (t) => {
    const first = await call('POST', '/parse/gadgets/limited', { body: {} })
    const second = await call('POST', '/parse/functions/limited', { body: {} })
    t.equal(first.json, 'within limit')
    t.same(second.json, { result: 'within limit' })
    for (const url of ['/parse/gadgets/limited', '/parse/functions/limited']) {
      const third = await call('POST', url, { body: {} })
      t.equal(third.status, 429, url)
      t.equal(third.json.code, Parse.Error.REQUEST_LIMIT_EXCEEDED)
      t.match(third.json.error, /Too many requests to limited/)
      t.ok(Number(third.headers.get('retry-after')) > 0, 'Retry-After is set')
    }
    t.equal((await call('POST', '/parse/gadgets/limited', { headers: masterHeaders, body: {} })).status, 200, 'the master key is not limited')
  })

  t.test('errors: Parse errors keep code and status; others are a bare 500', async (t) => {
    const notFound = await call('POST', '/parse/gadgets/notFound', { body: {} })
    t.equal(notFound.status, 404)
    t.same(notFound.json, { code: 101, error: 'No such gadget' })
    const boom = await call('POST', '/parse/gadgets/boom', { body: {} })
    t.equal(boom.status, 500)
    t.same(boom.json, { code: 1, error: 'Internal server error' })
    t.notMatch(boom.text, /secret internal detail|app\.js/)
  })

  t.test('replies: plain JSON on the entity route, {result} on /functions; the SDK gets the same', async (t) => {
    const entity = await call('POST', '/parse/gadgets/makeGadget', { body: { name: 'lamp' } })
    t.match(entity.json, { name: 'lamp', objectId: String, createdAt: /^\d{4}-\d\d-\d\dT/, updatedAt: /^\d{4}-/ })
    const functions = await call('POST', '/parse/functions/makeGadget', { body: { name: 'desk' } })
    t.match(functions.json.result, { __type: 'Object', className: 'Gadget', name: 'desk' })
    const sdk = await sdkRun(kit, 'makeGadget', { name: 'chair' })
    t.match(sdk, { ok: true, result: { className: 'Gadget', name: 'chair', objectId: String } })
    const viaSdk = await sdkRun(kit, 'getGadget', { x: '1' })
    const viaRoute = await call('GET', '/parse/gadgets/getGadget?x=1')
    t.same(viaSdk.result, viaRoute.json, 'Parse.Cloud.run gets what the entity route answers')
    const { token } = await signUp('sam')
    t.same((await sdkRun(kit, 'whoAmI', {}, token)).result.user, 'sam', 'the SDK session token reaches the handler')
    t.match(await sdkRun(kit, 'notFound', {}), { ok: false, code: 101, message: 'No such gadget' })
  })

  t.test('the Note resource: five endpoints, and rows the caller may not read are 101', async (t) => {
    const { token: alice } = await signUp('alice')
    const { token: bob } = await signUp('bob')
    const noSession = await call('POST', '/parse/notes/createNote', { body: { title: 'x' } })
    t.equal(noSession.status, 400, 'a write without a session token is refused')
    const draft = await call('POST', '/parse/notes/createNote', { headers: userHeaders(alice), body: { title: 'Draft idea', body: 'b', views: 99, slug: 'mine' } })
    t.equal(draft.status, 200, draft.text)
    t.match(draft.json, { title: 'Draft idea', body: 'b', status: 'draft', views: 0, objectId: String, createdAt: String, updatedAt: String })
    t.match(draft.json.slug, /^draft-idea-/, 'slug derived by the server, client value ignored')
    const published = await call('POST', '/parse/notes/createNote', { headers: userHeaders(alice), body: { title: 'Hello', status: 'published' } })
    const bobList = await call('GET', '/parse/notes/listNotes?limit=10', { headers: userHeaders(bob) })
    t.same(bobList.json.results.map((note: { title: string }) => note.title), ['Hello'], 'only rows the caller may read appear')
    t.equal(bobList.json.count, 1)
    const publicList = await call('GET', '/parse/notes/listNotes?status=published')
    t.equal(publicList.json.count, 1, 'no token needed to list')
    const aliceList = await call('GET', '/parse/notes/listNotes', { headers: userHeaders(alice) })
    t.equal(aliceList.json.count, 2)
    const hidden = await call('GET', `/parse/notes/getNote?id=${draft.json.objectId}`, { headers: userHeaders(bob) })
    t.equal(hidden.status, 404)
    t.equal(hidden.json.code, Parse.Error.OBJECT_NOT_FOUND, "another user's draft is not found, not forbidden")
    const own = await call('GET', `/parse/notes/getNote?id=${draft.json.objectId}`, { headers: userHeaders(alice) })
    t.equal(own.json.title, 'Draft idea')
    const updated = await call('POST', '/parse/notes/updateNote', { headers: userHeaders(alice), body: { id: draft.json.objectId, status: 'published', title: 'Now public' } })
    t.match(updated.json, { title: 'Now public', status: 'published', slug: draft.json.slug })
    t.equal((await call('GET', `/parse/notes/getNote?id=${draft.json.objectId}`, { headers: userHeaders(bob) })).json.title, 'Now public')
    const bobWrites = await call('POST', '/parse/notes/updateNote', { headers: userHeaders(bob), body: { id: published.json.objectId, title: 'hijack' } })
    t.equal(bobWrites.json.code, Parse.Error.OBJECT_NOT_FOUND, 'no write access reads as not found')
    const badStatus = await call('POST', '/parse/notes/updateNote', { headers: userHeaders(alice), body: { id: published.json.objectId, status: 'archived' } })
    t.equal(badStatus.status, 400)
    const deleted = await call('POST', '/parse/notes/deleteNote', { headers: userHeaders(alice), body: { id: published.json.objectId } })
    t.same(deleted.json, { id: published.json.objectId, deleted: true })
    t.equal((await call('GET', `/parse/notes/getNote?id=${published.json.objectId}`, { headers: userHeaders(alice) })).json.code, 101)
    t.same((await call('POST', '/parse/functions/hello', { headers: userHeaders(alice), body: {} })).json, { result: { message: 'Hello, alice!' } })
  })

  t.test('asCaller picks master, session or nobody', async (t) => {
    const signedIn = Parse.User.fromJSON({ className: '_User', objectId: 'u1', sessionToken: 'r:caller-token' }) as Parse.User
    const tokenless = Parse.User.fromJSON({ className: '_User', objectId: 'u2' }) as Parse.User
    t.strictSame(asCaller({ master: true, user: undefined }), { useMasterKey: true }, 'the master key')
    t.strictSame(asCaller({ master: true, user: signedIn }), { useMasterKey: true }, 'the master key wins over a session')
    t.strictSame(asCaller({ master: false, user: signedIn }), { sessionToken: 'r:caller-token' }, 'a session: its token')
    t.strictSame(asCaller({ master: false, user: tokenless }), {}, 'a user object without a token: nobody')
    t.strictSame(asCaller({ master: false, user: undefined }), {}, 'nobody')
  })
})

async function sdkRun (kit: Kit, name: string, params: unknown, sessionToken?: string): Promise<any> {
  const args = [path.join(here, 'helpers', 'sdk-call.mjs'), `${kit.origin}/parse`, APP_ID, name, JSON.stringify(params)]
  if (sessionToken) args.push(sessionToken)
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: scaled(30_000) })
  return JSON.parse(stdout)
}

// ── from test/models.test.ts ──
// Models against the real Parse Server on the embedded PostgreSQL.
@ParseClass('Article', { description: 'A post', clp: { find: { '*': true }, get: { '*': true }, create: { requiresAuthentication: true }, update: { [roleKey('Editor')]: true } } })
class Article extends BaseModel {
  @ParseField({ type: 'String', required: true, maxLength: 20, description: 'Headline' }) declare title: string
  @ParseField({ type: 'String', enum: ['draft', 'published'] }) declare status: string
  @ParseField({ type: 'Number', min: 0, max: 10 }) declare rating: number
  @ParseField({ type: 'String', pattern: '[a-z0-9-]+' }) declare slug: string
  @ParseField({ type: 'Number', default: 0 }) declare views: number
  @ParseField({ type: 'Pointer', targetClass: '_User' }) declare author: Parse.User | null
  @ParseField({ type: 'Array', targetClass: 'Tag' }) declare tags: Parse.Object[]
  @ParseField({ type: 'Array' }) declare labels: string[]
  @ParseField({ type: 'Date' }) declare publishAt: Date
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'Pointer', targetClass: 'IMG' }) declare cover: Parse.Object
  @ParseField({ type: 'Boolean' }) declare featured: boolean

  @BeforeSave()
  static async deriveAndCheck (request: Parse.Cloud.BeforeSaveRequest<Article>) {
    const article = request.object
    if (article.title === 'forbidden') throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'This title is not allowed')
    article.slug = String(article.title ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
    validateOrThrow(article)
  }
}

@ParseClass('Secret', { clp: { find: {}, get: {}, count: {}, create: {}, update: {}, delete: {} } })
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class Secret extends BaseModel {
  @ParseField({ type: 'String' }) declare code: string
}

// The `!` form: with useDefineForClassFields an own property would hide the accessor.
@ParseClass('Bang')
class Bang extends BaseModel {
  @ParseField({ type: 'String' }) label!: string
  @ParseVersionField() version!: number
}

const open = { allowedRoutes: [{ path: '/classes/*' }, { path: '/schemas/*', methods: ['GET'] }], allowAuthRoutes: true }

t.test('models on a running server', async (t) => {
  const kit = await startKit(t, open)
  const master = { useMasterKey: true }

  t.test('the schema exists with the declared fields, types, required flags and CLP', async (t) => {
    const schema = await kit.request('GET', '/parse/schemas/Article', { headers: masterHeaders })
    t.equal(schema.status, 200, schema.text)
    const fields = schema.json.fields
    t.same(fields.title, { type: 'String', required: true })
    t.same(fields.rating, { type: 'Number' })
    t.same(fields.views, { type: 'Number', defaultValue: 0 })
    t.same(fields.author, { type: 'Pointer', targetClass: '_User' })
    t.same(fields.tags, { type: 'Array' })
    t.same(fields.publishAt, { type: 'Date' })
    t.same(fields.place, { type: 'GeoPoint' })
    t.same(fields.featured, { type: 'Boolean' })
    const clp = schema.json.classLevelPermissions
    t.same(clp.create, { requiresAuthentication: true })
    t.same(clp.update, { 'role:Editor': true })
    t.same(clp.count, { '*': true }, 'operations left out keep Parse\'s public default')
    t.same(clp.addField, {}, 'clients never add fields')
    const role = await kit.request('GET', '/parse/schemas/_Role', { headers: masterHeaders })
    t.same(role.json.classLevelPermissions.create, { 'role:SuperAdmin': true }, '_Role is managed by the admin role')
    const version = await kit.request('GET', '/parse/schemas/Bang', { headers: masterHeaders })
    t.same(version.json.fields.version, { type: 'Number' })
  })

  t.test('an empty CLP map denies everyone but the master key', async (t) => {
    const signUp = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'reader', password: 'secret-pass-1' } })
    const user = { ...appHeaders, 'x-parse-session-token': signUp.json.sessionToken }
    for (const [method, url, body] of [['POST', '/parse/classes/Secret', { code: 'x' }], ['GET', '/parse/classes/Secret', undefined]] as const) {
      const refused = await kit.request(method, url, { headers: user, body })
      t.equal(refused.json?.code, Parse.Error.OPERATION_FORBIDDEN, `${method} with a session is refused (${refused.text})`)
      const anonymous = await kit.request(method, url, { headers: appHeaders, body })
      t.equal(anonymous.json?.code, Parse.Error.OPERATION_FORBIDDEN, `${method} without a session is refused`)
    }
    const created = await kit.request('POST', '/parse/classes/Secret', { headers: masterHeaders, body: { code: 'x' } })
    t.equal(created.status, 201, 'the master key passes')
  })

  t.test('a @BeforeSave derives a field, and can refuse a save', async (t) => {
    const article = new Article()
    article.title = 'Hello, World'
    await article.save(null, master)
    t.equal(article.slug, 'hello-world')
    const [error] = await catchError(new Article({ title: 'forbidden' }).save(null, master))
    t.equal((error as Parse.Error).code, Parse.Error.OPERATION_FORBIDDEN)
    t.equal((error as Parse.Error).message, 'This title is not allowed')
  })

  t.test('enum and min/max are enforced by validateOrThrow in the @BeforeSave', async (t) => {
    const article = Article.fromParams({ title: 'Rated', status: 'archived', rating: 11 })
    const [error] = await catchError(article.save(null, master))
    t.equal((error as Parse.Error).code, Parse.Error.VALIDATION_ERROR)
    t.match((error as Parse.Error).message, /status must be one of draft, published/)
    t.match((error as Parse.Error).message, /rating must be at most 10/)
    const found = await new Parse.Query(Article).equalTo('title', 'Rated').first(master)
    t.equal(found, undefined, 'nothing was written')
  })

  t.test('`declare` and `!` fields both persist their values', async (t) => {
    const bang = new Bang()
    bang.label = 'bang'
    t.notOk(Object.prototype.hasOwnProperty.call(bang, 'label'), 'no own property hides the accessor')
    await bang.save(null, master)
    const stored = await new Parse.Query(Bang).get(bang.id!, master)
    t.equal(stored.get('label'), 'bang')
    t.equal(stored.label, 'bang')
    const article = await new Parse.Query(Article).equalTo('slug', 'hello-world').first(master)
    t.equal(article?.title, 'Hello, World')
    t.equal(article?.views, 0, 'the declared default was stored')
  })

  t.test('roles: inherited roles count through getUserRoles', async (t) => {
    const user = await new Parse.User({ username: 'ada', password: 'lovelace-1815' }).signUp()
    t.same(await getUserRoles(user), [])
    await addUsersToRole('Admin', [user])
    await addRoleToRole('Admin', 'Editor')
    t.same((await getUserRoles(user)).sort(), ['Admin', 'Editor'])
    t.same((await getUserRoles(user.id!)).sort(), ['Admin', 'Editor'], 'an id works too')
    const roleRow = await new Parse.Query(Parse.Role).equalTo('name', 'Admin').first(master)
    t.equal(roleRow!.getACL()!.getPublicReadAccess(), true)
    t.equal(roleRow!.getACL()!.getPublicWriteAccess(), false)
  })
})

t.test('fromParams follows the declared fields', async (t) => {
  const when = '2026-05-01T10:00:00.000Z'
  const article = Article.fromParams({
    title: 'T', unknown: 'ignored', author: 'u1', tags: ['t1', 't2'], labels: ['a', 'b'], publishAt: when,
    place: { latitude: 52.5, longitude: 13.4 }, cover: 'img1', lines: [{ product: 'p' }]
  })
  t.equal(article.get('title'), 'T', 'String unchanged')
  t.equal(article.get('unknown'), undefined, 'undeclared key ignored')
  t.equal(article.get('lines'), undefined, 'nested lists that are not fields are ignored')
  t.same(article.get('author').toPointer(), { __type: 'Pointer', className: '_User', objectId: 'u1' }, 'id string → pointer to targetClass')
  t.same(article.get('tags').map((tag: Parse.Object) => tag.toPointer()), [
    { __type: 'Pointer', className: 'Tag', objectId: 't1' }, { __type: 'Pointer', className: 'Tag', objectId: 't2' }
  ], 'array with targetClass → pointers')
  t.same(article.get('labels'), ['a', 'b'], 'array without targetClass → raw values')
  t.ok(article.get('publishAt') instanceof Date)
  t.equal(article.get('publishAt').toISOString(), when)
  t.ok(article.get('place') instanceof Parse.GeoPoint)
  t.equal(article.get('place').latitude, 52.5)
  t.equal(article.get('cover'), undefined, 'pointer to an excluded class (IMG) is skipped')
  t.equal(Article.fromParams({ author: null }).get('author'), null, 'null pointer → null')
  t.equal(Article.fromParams({ author: {} }).get('author'), null, '{} pointer → null')
  t.throws(() => Article.fromParams({ publishAt: 'not a date' }), { code: 142, message: /publishAt must be an ISO 8601 date/ })
  t.throws(() => Article.fromParams({ place: { latitude: 100, longitude: 0 } }), { code: 142, message: /place must be/ })
  t.throws(() => Article.fromParams({ author: 42 }), { code: 142, message: /author must be an id/ })
})

t.test('validateOrThrow lists every failure at once', async (t) => {
  const article = new Article()
  article.title = 'x'.repeat(21)
  article.rating = -1
  article.status = 'gone'
  t.throws(() => validateOrThrow(article), {
    code: Parse.Error.VALIDATION_ERROR,
    message: /title must be at most 20 characters; status must be one of draft, published; rating must be at least 0/
  })
  t.throws(() => validateOrThrow(new Article()), { message: /title is required/ })
})

t.test('import-time option errors name class, field and option', async (t) => {
  class Probe extends BaseModel {}
  const field = (options: object) => () => ParseField(options as never)(Probe.prototype, 'probe')
  t.throws(field({ type: 'Pointer' }), /@ParseField Probe\.probe: option "targetClass" is required for type Pointer/)
  t.throws(field({ type: 'Relation' }), /option "targetClass" is required for type Relation/)
  t.throws(field({ type: 'String', min: 1 }), /option "min" is only for Number fields \(this field is String\)/)
  t.throws(field({ type: 'String', pattern: '(' }), /option "pattern" is not a valid regular expression/)
  t.throws(field({ type: 'Number', geo: true }), /option "geo" is only for GeoPoint fields/)
  t.throws(field({ type: 'Date', ttlSeconds: -5 }), /option "ttlSeconds" must be a whole number ≥ 0/)
  t.throws(field({ type: 'String', colour: 'red' }), /option "colour" is not a field option/)
  t.throws(field({ type: 'Text' }), /option "type" must be one of/)
  t.throws(field({ type: 'Number', min: 5, max: 1 }), /"min" is greater than max/)
  t.throws(field({ type: 'String', enum: [] }), /"enum" must be a non-empty list/)
  t.throws(field({ type: 'Number', default: 'zero' }), /"default" does not satisfy the field itself: probe must be a number/)
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, 'save'), /"save" is reserved by Parse/)
  t.throws(() => ParseClass('Probe', { clp: { find: { '*': 'yes' } } } as never)(Probe), /clp\.find\['\*'\] must be true/)
  t.throws(() => ParseClass('Probe', { clp: { read: {} } } as never)(Probe), /"read" is not an operation/)
  t.throws(() => ParseClass('Probe', { compoundIndexes: [{ fields: ['nope'] }] })(Probe), /compoundIndexes\[0\] names "nope"/)
  t.throws(() => ParseClass('Probe', { shards: 2 } as never)(Probe), /"shards" is not a class option/)
  t.throws(() => ParseClass('Probe')(class NotParse {} as never), /must extend BaseModel/)
})

t.test('standard (TC39) decorators are refused with the setting to change', async (t) => {
  t.throws(() => ParseField({ type: 'String' })(undefined as never, { kind: 'field', name: 'x' }), /set "experimentalDecorators": true/i)
  t.throws(() => ParseClass('X')(Article as never, { kind: 'class', name: 'X' }), /experimentalDecorators/)
  t.throws(() => BeforeSave()(Article, { kind: 'method', name: 'x' }), /experimentalDecorators/)
})

t.test('helpers and constants', async (t) => {
  t.equal(roleKey('Admin'), 'role:Admin')
  const acl = implementACL({ publicRead: true, roleRules: [{ role: 'Editor', read: true, write: true }], owner: [{ user: 'u1', read: true, write: false }] })
  t.same(acl.toJSON(), { '*': { read: true }, 'role:Editor': { read: true, write: true }, u1: { read: true } })
  t.same(await catchError(Promise.resolve(3)), [undefined, 3])
  const [error, result] = await catchError(Promise.reject(new Error('no')))
  t.equal((error as Error).message, 'no')
  t.equal(result, undefined)
  t.equal(CONFLICT, 5001)
  t.match(CONFLICT_MESSAGE, /try again/)
  t.ok(MAX_QUERY_LIMIT >= 100)
  const config = createSchemaConfig({ lockSchemas: true })
  t.equal(config.lockSchemas, true)
  t.equal(config.strict, true)
  t.equal(config.keepUnknownIndexes, true)
  t.equal(config.deleteExtraFields, false)
  t.equal(config.recreateModifiedFields, false)
  t.ok(config.definitions.some((definition) => definition.className === 'Article'))
  t.notOk(config.definitions.some((definition) => definition.className === 'Probe'), 'a class without @ParseClass is absent')
  t.equal(APP_ID, 'test-app')
})

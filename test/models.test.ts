// Models against the real Parse Server on the embedded PostgreSQL.
import t from 'tap'
import Parse from 'parse/node'
import {
  BaseModel, BeforeSave, ParseClass, ParseField, ParseVersionField, validateOrThrow, implementACL, roleKey,
  catchError, getUserRoles, addUsersToRole, addRoleToRole, createSchemaConfig, CONFLICT, CONFLICT_MESSAGE, MAX_QUERY_LIMIT
} from '../lib/index.js'
import { APP_ID, appHeaders, masterHeaders, startKit } from './helpers/kit.js'

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

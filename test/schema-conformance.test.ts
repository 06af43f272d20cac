// The declared schema: names Parse refuses, failed migrations, lockSchemas,
// strict: false, the kit's `schema` option, stacked field decorators, fromParams.
// And, from the former one-kit-per-process.test.ts (its tests keep their names,
// at the end of the file): Parse Server keeps process-wide state, so a process
// runs one kit at a time: a second registration while one runs is refused with
// a message saying why; closing the first frees the process. And
// fastify.kit.indexesApplied lets a caller wait for the declared indexes instead
// of polling the catalogue. Each registration keeps its state on
// fastify.kit.state: a kit registered after another closed sees none of the
// first one's settings, cache or lock. (Its Shelf is declared after Gauge and
// Unborn, so it is in every kit's schema here too.)
import t from 'tap'
import Parse from 'parse/node'
import Fastify from 'fastify'
import {
  BaseModel, CloudFunction, ParseClass, ParseField, ParseVersionField, addUsersToRole, applyAllIndexes, configureRoleCache,
  createSchemaConfig, getKitConfig, removeUsersFromRole, withTransaction
} from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { kitPlugin } from '../plugin.js'
import { APP_ID, MASTER_KEY, masterHeaders, startKit } from './helpers/kit.js'

@ParseClass('Gauge')
class Gauge extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Array', targetClass: 'Tag' }) declare tags: Parse.Object[]
}

// Declared, but strict: false must not create it at boot.
@ParseClass('Unborn')
class Unborn extends BaseModel {
  @ParseField({ type: 'String' }) declare note: string
}

const open = { allowedRoutes: [{ path: '/classes/*' }, { path: '/schemas/*', methods: ['GET'] }] }

t.test('names Parse refuses fail when the model file is imported', async (t) => {
  class Probe extends BaseModel {}
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, '_secret'), /@ParseField Probe\._secret: Parse refuses the field name "_secret"/)
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, '2fast'), /Parse refuses the field name "2fast"/)
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, 'length'), /Parse refuses the field name "length"/)
  t.throws(() => ParseClass('_Secret')(Probe), /@ParseClass\('_Secret'\) on Probe: Parse refuses the class name/)
  // PostgreSQL keeps 63 characters of a table's or column's name: two names alike that far would share one.
  const long = 'A'.repeat(63)
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, `f${long}`), /@ParseField Probe\.fA+: the field name "fA+" is 64 characters, more than 63: PostgreSQL keeps only the first 63 of a column's name/)
  t.throws(() => ParseClass(`${long}B`)(Probe), /@ParseClass\('A+B'\) on Probe: the class name "A+B" is 64 characters, more than 63/)
  t.doesNotThrow(() => ParseField({ type: 'String' })(class Fits extends BaseModel {}.prototype, `f${long.slice(1)}`), 'a field name of 63 characters is declared')
  t.doesNotThrow(() => ParseClass('_Installation')(class Installation extends Parse.Installation {}), 'Parse system classes may be declared, on the SDK class for them')
})

t.test('@ParseField stacked on @ParseVersionField is refused at import', async (t) => {
  class Stacked extends BaseModel {}
  ParseVersionField()(Stacked.prototype, 'version')
  t.throws(() => ParseField({ type: 'Number' })(Stacked.prototype, 'version'),
    /@ParseField Stacked\.version: the field is already declared by @ParseVersionField; keep one decorator/)
  class Reversed extends BaseModel {}
  ParseField({ type: 'Number' })(Reversed.prototype, 'version')
  t.throws(() => ParseVersionField()(Reversed.prototype, 'version'), /@ParseVersionField Reversed\.version: the field is already declared by @ParseField/)
})

t.test('fromParams: an Array of pointers given a non-list answers 142 naming the field', async (t) => {
  t.throws(() => Gauge.fromParams({ tags: 'tag1' }), { code: 142, message: /tags must be a list of ids of Tag objects/ })
  t.throws(() => Gauge.fromParams({ tags: { objectId: 'x' } }), { code: 142, message: /tags must be a list/ })
  t.equal(Gauge.fromParams({ tags: null }).get('tags'), null, 'null clears the list')
  t.same(Gauge.fromParams({ tags: ['a'] }).get('tags').map((tag: Parse.Object) => tag.id), ['a'])
})

t.test('the schema option is checked at registration', async (t) => {
  const register = async (options: Record<string, unknown>) => {
    const app = Fastify()
    try { await app.register(kitPlugin, { appId: 'a', masterKey: 'm', ...options }); await app.ready() } finally { await app.close() }
  }
  await t.rejects(register({ schema: { lockSchema: true } }), /kitPlugin option "schema": "lockSchema" is not a schema option/)
  await t.rejects(register({ schema: { strict: 'no' } }), /kitPlugin option "schema": strict must be true or false/)
  await t.rejects(register({ schema: {}, parseServerOptions: { schema: {} } }), /"schema": is given twice/)
  await t.rejects(register({ parseServerOptions: { schema: { deleteExtraFields: 1 } } }), /"parseServerOptions\.schema": deleteExtraFields must be true or false/)
})

t.test('a schema Parse refuses fails boot, also from the application\'s own createSchemaConfig()', async (t) => {
  const config = createSchemaConfig()
  const withBadName = { ...config, definitions: [...config.definitions, { className: 'Leaky', fields: { _secret: { type: 'String' } } }] }
  await t.rejects(startKit(t, { schema: withBadName }), /Parse refuses the field name Leaky\._secret/)
  await t.rejects(startKit(t, { parseServerOptions: { schema: withBadName } }), /Parse refuses the field name Leaky\._secret/, 'through parseServerOptions.schema too')
})

t.test('a configuration made before the models were loaded fails boot instead of creating nothing', async (t) => {
  const early = { ...createSchemaConfig(), definitions: [] }
  await t.rejects(startKit(t, { schema: early }), /the definitions lack the declared classes Gauge, Unborn.*pass its options instead/)
})

t.test('a migration Parse fails (it only logs it) fails boot with Parse\'s reason', async (t) => {
  const config = createSchemaConfig()
  const badType = { ...config, definitions: [...config.definitions, { className: 'Odd', fields: { shape: { type: 'Circle' } } }] }
  await t.rejects(startKit(t, { schema: badType }), /schema: Odd\.shape has the type "Circle"; Parse knows String, Number/, 'an unknown type fails before Parse starts')
  const badDefault = { ...config, definitions: [...config.definitions, { className: 'Odd', fields: { size: { type: 'Number', defaultValue: 'big' } } }] }
  await t.rejects(startKit(t, { parseServerOptions: { schema: badDefault } }), /could not apply the declared schema: Failed to run migrations.*schema mismatch for Odd\.size default value/)
  const afterFails = createSchemaConfig({ afterMigration: () => { throw new Error('seed step broke') } })
  await t.rejects(startKit(t, { schema: afterFails }), /afterMigration threw: seed step broke/)
})

t.test('lockSchemas: no save path creates a class or a field', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [...open.allowedRoutes, { path: '/batch' }], allowAuthRoutes: true, schema: { lockSchemas: true } })
  const newClass = await kit.request('POST', '/parse/classes/Evolve', { headers: masterHeaders, body: { sneaky: 'y' } })
  t.equal(newClass.status, 400, newClass.text)
  t.match(newClass.json, { code: Parse.Error.OPERATION_FORBIDDEN, error: /schema is locked \(lockSchemas: true\): class Evolve does not exist/ })
  const newField = await kit.request('POST', '/parse/classes/Gauge', { headers: masterHeaders, body: { label: 'ok', sneaky: 'y' } })
  t.equal(newField.status, 400, newField.text)
  t.match(newField.json, { error: /class Gauge has no field "sneaky"/ })
  const update = await kit.request('POST', '/parse/classes/Gauge', { headers: masterHeaders, body: { label: 'ok' } })
  t.equal(update.status, 201, 'declared fields save')
  const put = await kit.request('PUT', `/parse/classes/Gauge/${update.json.objectId}`, { headers: masterHeaders, body: { sneaky: 1 } })
  t.equal(put.status, 400, 'an update cannot add a field either')
  const batch = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'POST', path: '/parse/classes/Gauge', body: { label: 'b', viaBatch: true } }] } })
  t.match(batch.json, [{ error: { code: Parse.Error.OPERATION_FORBIDDEN, error: /class Gauge has no field "viaBatch"/ } }], `/batch: ${batch.text}`)
  await t.rejects(new Parse.Object('Ghost').save({ x: 1 }, { useMasterKey: true }), { code: Parse.Error.OPERATION_FORBIDDEN, message: /class Ghost does not exist/ }, 'in-process SDK save')
  const schema = await kit.request('GET', '/parse/schemas/Gauge', { headers: masterHeaders })
  t.notOk('sneaky' in schema.json.fields, 'no field was added')
  t.equal((await kit.request('GET', '/parse/schemas/Evolve', { headers: masterHeaders })).status, 400, 'no class was added')
  const user = await kit.signUp('locked-user')
  t.ok(user.token, 'Parse\'s own classes (users, sessions) still work')
  // A field another instance (a newer deploy) added since this one's schema was cached exists: the lock reloads before
  // it refuses, as Parse does before it adds one (a controller loaded before the migration refused a declared class).
  const adapter = currentDatabase()!.adapter as unknown as { addFieldIfNotExists (className: string, field: string, type: { type: string }): Promise<unknown> }
  await adapter.addFieldIfNotExists('Gauge', 'addedElsewhere', { type: 'String' })
  const later = await kit.request('POST', '/parse/classes/Gauge', { headers: masterHeaders, body: { label: 'later', addedElsewhere: 'yes' } })
  t.equal(later.status, 201, `a field added behind this instance's cache saves (${later.text.slice(0, 160)})`)
})

t.test('strict: false creates no missing class or field at boot', async (t) => {
  const kit = await startKit(t, { ...open, schema: { strict: false } })
  const unborn = await kit.request('GET', '/parse/schemas/Unborn', { headers: masterHeaders })
  t.equal(unborn.status, 400, 'the declared class was not created')
  t.match(unborn.json, { code: Parse.Error.INVALID_CLASS_NAME })
  const saved = await new Unborn({ note: 'first save creates it' }).save(null, { useMasterKey: true })
  t.ok(saved.id, 'without lockSchemas, Parse creates it at the first save')
})

// ── from the former one-kit-per-process.test.ts ──
@ParseClass('Shelf')
class Shelf extends BaseModel {
  @ParseField({ type: 'String', unique: true }) declare label: string
  @ParseField({ type: 'Number', index: true }) declare height: number
}

class ShelfDesk {
  // Caches the caller's roles for a minute whatever configureRoleCache says.
  @CloudFunction({ requireRoles: ['Shelver'], roleCacheMs: 60_000 }) static shelve () { return 'shelved' }
}

const master = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }

t.test('a second registration while a kit runs is refused clearly; the first keeps serving', async (t) => {
  t.equal(new Shelf().className, 'Shelf', 'the model whose indexes a later test awaits is declared')
  const kit = await startKit(t, { indexes: false })
  const other = Fastify({ logger: false })
  await t.rejects(async () => { await other.register(kitPlugin, { appId: 'second-app', masterKey: MASTER_KEY }) },
    { code: 'FPK_ERR_ALREADY_REGISTERED', message: new RegExp(`kitPlugin is already registered in this process \\(app id "${APP_ID}"\\).*Close the other Fastify instance first`) })
  await other.close().catch(() => {})
  t.equal((await kit.request('GET', '/parse/health')).status, 200, 'the running kit still answers')
  // Already settled: its callback runs before the next turn of the event loop.
  const settled = await Promise.race([
    kit.app.kit.indexesApplied.then(() => 'settled'),
    new Promise((resolve) => setImmediate(() => resolve('pending')))
  ])
  t.equal(settled, 'settled', 'with indexes: false, indexesApplied settles at once')
})

t.test('after close, the same process registers a kit again', async (t) => {
  const kit = await startKit(t, { indexes: false })
  t.equal((await kit.request('GET', '/parse/health')).status, 200)
})

t.test('indexesApplied settles once the declared indexes are in place', async (t) => {
  const kit = await startKit(t)
  t.type(kit.app.kit.indexesApplied, Promise)
  await kit.app.kit.indexesApplied
  const reports = (await applyAllIndexes(kit.app)).filter((report) => report.className === 'Shelf')
  t.same(reports.map((report) => report.kind).sort(), ['ordered', 'unique'], 'the unique label and the height index, and nothing else, are declared')
  t.same(reports.filter((report) => report.status !== 'exists'), [], 'every one was already applied when the promise settled')
})

t.test('a kit registered after another closed starts from its own state', async (t) => {
  // Kit 1: its own admin role, a locked schema, the role cache on, one user's roles cached.
  const first = await startKit(t, { indexes: false, functions: [ShelfDesk], adminRole: 'Keeper', schema: { lockSchemas: true } })
  t.equal(getKitConfig().adminRole, 'Keeper', 'kit 1 runs with its adminRole option')
  const locked = await first.request('POST', '/parse/classes/Undeclared', { headers: master, body: { label: 'x' } })
  t.match(locked.json, { code: 119, error: /schema is locked/ }, 'kit 1 locks its schema')
  configureRoleCache({ ttlMs: 60_000 })
  const user = await first.signUp('shelver')
  await addUsersToRole('Shelver', [user.id])
  const granted = await first.request('POST', '/parse/functions/shelve', { headers: { 'x-parse-application-id': APP_ID, 'x-parse-session-token': user.token } })
  t.same(granted.json, { result: 'shelved' }, 'kit 1 grants the role and caches it')
  const firstState = first.app.kit.state
  // The same database for kit 2, so the cached user exists there too.
  const sameDatabase = { databaseURI: first.app.kit.options.databaseURI }
  await first.app.close()

  // Between the kits nothing of kit 1 is reachable.
  t.equal(getKitConfig().adminRole, 'SuperAdmin', 'kit 1\'s settings went with it')
  t.equal(currentDatabase(), undefined, 'no database is open')
  await t.rejects(withTransaction(async () => 1), /needs a running kitPlugin/, 'transactions have no adapter')
  await t.rejects(applyAllIndexes(first.app), /no database is open/, 'applyAllIndexes uses the instance it is given: kit 1 is closed')
  await t.rejects(applyAllIndexes(Fastify()), /pass the Fastify instance kitPlugin is registered on/, 'a Fastify instance without a kit is named as the mistake')

  // Kit 2 on the same database, without kit 1's options.
  const second = await startKit(t, { indexes: false, functions: [ShelfDesk], ...sameDatabase })
  t.teardown(() => second.app.close())
  t.not(second.app.kit.state, firstState, 'a new state object per registration')
  t.equal(getKitConfig().adminRole, 'SuperAdmin', 'kit 2 has the default adminRole')
  await removeUsersFromRole('Shelver', [user.id])
  const refused = await second.request('POST', '/parse/functions/shelve', { headers: { 'x-parse-application-id': APP_ID, 'x-parse-session-token': user.token } })
  t.equal(refused.json?.code, 119, 'the revoked role is read afresh: kit 1\'s cached roles do not answer in kit 2')
  const open = await second.request('POST', '/parse/classes/Undeclared', { headers: master, body: { label: 'x' } })
  t.equal(open.status, 201, 'kit 2 does not inherit kit 1\'s schema lock')
  t.equal(await withTransaction(async () => 'ran'), 'ran', 'transactions run on kit 2\'s adapter')
  t.equal(currentDatabase(), currentDatabase(second.app.kit.state), 'the open database is kit 2\'s')
})

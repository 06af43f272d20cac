// The declared schema: names Parse refuses, failed migrations, lockSchemas,
// strict: false, the kit's `schema` option, stacked field decorators, fromParams.
import t from 'tap'
import Parse from 'parse/node'
import Fastify from 'fastify'
import { BaseModel, ParseClass, ParseField, ParseVersionField, createSchemaConfig } from '../lib/index.js'
import { kitPlugin } from '../plugin.js'
import { masterHeaders, startKit } from './helpers/kit.js'

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
  t.doesNotThrow(() => ParseClass('_Installation')(class Installation extends BaseModel {}), 'Parse system classes may be declared')
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
})

t.test('strict: false creates no missing class or field at boot', async (t) => {
  const kit = await startKit(t, { ...open, schema: { strict: false } })
  const unborn = await kit.request('GET', '/parse/schemas/Unborn', { headers: masterHeaders })
  t.equal(unborn.status, 400, 'the declared class was not created')
  t.match(unborn.json, { code: Parse.Error.INVALID_CLASS_NAME })
  const saved = await new Unborn({ note: 'first save creates it' }).save(null, { useMasterKey: true })
  t.ok(saved.id, 'without lockSchemas, Parse creates it at the first save')
})

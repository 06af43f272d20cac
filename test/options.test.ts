// Misconfiguration fails at registration, with a message that says what to change.
// Also, from test/option-schemas.test.ts (merged here 29 November: a process less, both
// load the kit): every option group is one TypeBox schema: its type, its shape check,
// and its errors' stable codes. No server is needed: the checks run at registration or import.
import t from 'tap'
import Fastify from 'fastify'
import { databaseKind, openDatabase } from '../lib/storage/database.js'
import { isRouteAllowed, normalisePath } from '../lib/access/restriction.js'
import { resetKitConfig, configureKit, getKitConfig } from '../lib/config.js'
import { kitPlugin } from '../plugin.js'
import { postgresPoolSize } from '../lib/storage/postgres/pool.js'
import { mongoPoolSize } from '../lib/storage/mongo/bounded.js'
import { shutdownBudgetMs } from '../lib/shutdown.js'
import {
  BaseModel, CloudFunction, fieldsOf, Type, kitErrorCodes, ModelDeclarationError, ParseClass, ParseField, setupSwagger,
  type ClassOptions, type CloudFunctionOptions, type FieldOptions, type KitOptions, type SchemaConfigOptions, type SwaggerConfig
} from '../lib/index.js'
import { resolveOptions, AllowedRouteSchema, KitOptionsSchema, LiveQueryOptionsSchema } from '../lib/options.js'
import { CorsOptionsSchema, type CorsOptions } from '../lib/access/cors-policy.js'
import { SwaggerConfigSchema } from '../lib/docs/options.js'
import { CloudFunctionOptionsSchema, RateLimitSchema, ValidationFieldSchema, type ValidationField } from '../lib/routing/options.js'
import { FieldOptionsSchema } from '../lib/model/field-options.js'
import { ClassOptionsSchema, CompoundIndexSchema, type CompoundIndex } from '../lib/model/class-options.js'
import { SchemaConfigOptionsSchema } from '../lib/model/schema-config.js'
import type { QueueOptions } from '../lib/jobs/settings.js'
import { checkSchemaOption } from '../lib/model/schema-option.js'
import { knownKeys, optionChecker } from '../lib/option-schema.js'

t.beforeEach(() => resetKitConfig())

t.test('options are validated with the option named', async (t) => {
  const base = { appId: 'a', masterKey: 'm' }
  t.throws(() => resolveOptions({ ...base, databaseUri: 'x' } as never), /option "databaseUri": unknown option/)
  t.throws(() => resolveOptions({ appId: 'a' }), /option "masterKey": required/)
  t.throws(() => resolveOptions({ masterKey: 'm' }), /option "appId": required/)
  t.throws(() => resolveOptions({ ...base, allowAuthRoutes: 'yes' } as never), /"allowAuthRoutes": must be true or false/)
  t.throws(() => resolveOptions({ ...base, allowedRoutes: [{ path: 'classes' }] }), /"allowedRoutes\[0\]\.path": must be a path starting with '\/'/)
  t.throws(() => resolveOptions({ ...base, serverURL: 'localhost:1337' }), /"serverURL": must be an http/)
  t.throws(() => resolveOptions({ ...base, models: [42] as never }), /"models"/)
  t.throws(() => resolveOptions({ appId: 'same', masterKey: 'same' }), /must differ/)
  const resolved = resolveOptions(base)
  t.equal(resolved.mountPath, '/parse')
  t.equal(resolved.allowAuthRoutes, false)
  t.equal(resolved.adminRole, 'SuperAdmin')
  t.same(resolved.excludedPointerClasses, ['IMG', 'File'])
})

t.test('fastPaths: on by default; off by the option or FPK_FAST_PATHS=false; another env value refused at boot', async (t) => {
  const base = { appId: 'a', masterKey: 'm' }
  const saved = process.env.FPK_FAST_PATHS
  t.teardown(() => { if (saved === undefined) delete process.env.FPK_FAST_PATHS; else process.env.FPK_FAST_PATHS = saved })
  delete process.env.FPK_FAST_PATHS
  t.equal(resolveOptions(base).fastPaths, true)
  t.equal(resolveOptions({ ...base, fastPaths: false }).fastPaths, false)
  t.throws(() => resolveOptions({ ...base, fastPaths: 'no' } as never), { code: 'FPK_ERR_OPTION_INVALID', message: /"fastPaths": must be true or false/ })
  process.env.FPK_FAST_PATHS = 'false'
  t.equal(resolveOptions(base).fastPaths, false, 'FPK_FAST_PATHS=false')
  t.equal(resolveOptions({ ...base, fastPaths: true }).fastPaths, true, 'the option wins over the environment')
  process.env.FPK_FAST_PATHS = 'off'
  t.throws(() => resolveOptions(base), { code: 'FPK_ERR_OPTION_INVALID', message: /"fastPaths": FPK_FAST_PATHS must be true or false \(got "off"\)/ })
})

t.test('configureKit has the spec defaults and resolves at use time', async (t) => {
  const saved = process.env.mountPath
  t.teardown(() => { if (saved === undefined) delete process.env.mountPath; else process.env.mountPath = saved })
  t.same({ ...getKitConfig(), masterKey: undefined }, {
    mountPath: '/parse', masterKey: undefined, adminRole: 'SuperAdmin', allowAuthRoutes: false, excludedPointerClasses: ['IMG', 'File']
  })
  process.env.mountPath = '/api/'
  t.equal(getKitConfig().mountPath, '/api', 'env mountPath read when asked')
  configureKit({ mountPath: '/v1', allowAuthRoutes: true })
  t.equal(getKitConfig().mountPath, '/v1', 'explicit beats env')
  t.equal(resolveOptions({ appId: 'a', masterKey: 'm' }).allowAuthRoutes, true, 'plugin options default to configureKit values')
})

t.test('the plugin refuses to boot without a master key', async (t) => {
  const app = Fastify()
  const saved = { MASTER_KEY: process.env.MASTER_KEY, masterKey: process.env.masterKey }
  delete process.env.MASTER_KEY
  delete process.env.masterKey
  t.teardown(() => Object.assign(process.env, Object.fromEntries(Object.entries(saved).filter(([, v]) => v !== undefined))))
  await t.rejects(async () => { await app.register(kitPlugin, { appId: 'a' }); await app.ready() }, /masterKey.*required.*MASTER_KEY/)
})

t.test('database selection', async (t) => {
  t.equal(databaseKind('postgres://u:p@h/db'), 'postgres')
  t.equal(databaseKind('postgresql://h/db'), 'postgres')
  t.equal(databaseKind('mongodb://h:27017/db?replicaSet=rs0'), 'mongo')
  t.equal(databaseKind('mongodb+srv://cluster.example/db'), 'mongo')
  t.throws(() => databaseKind('mysql://u:secret@h/db'), /postgres:\/\/, mongodb:\/\/ or mongodb\+srv:\/\/.*u:\*\*\*@h/)
  // mongodb:// goes to Parse's Mongo adapter, after a quick reachability check that fails clearly
  // (the Mongo lane, whose own part is in test/rest-edges.test.ts, runs Parse on it end to end).
  await t.rejects(openDatabase({ databaseURI: 'mongodb://u:secret@127.0.0.1:1/x?serverSelectionTimeoutMS=300' }), /Cannot reach MongoDB at mongodb:\/\/u:\*\*\*@127\.0\.0\.1:1\/x.*Start it, or point DATABASE_URI elsewhere/)
  await t.rejects(openDatabase({ production: true }), /set DATABASE_URI/, 'no embedded database in production')
})

t.test('databasePoolSize: the option, else DATABASE_POOL_SIZE, else the URI\'s setting or the driver\'s default', async (t) => {
  const saved = process.env.DATABASE_POOL_SIZE
  t.teardown(() => { if (saved === undefined) delete process.env.DATABASE_POOL_SIZE; else process.env.DATABASE_POOL_SIZE = saved })
  const base = { appId: 'a', masterKey: 'm' }
  delete process.env.DATABASE_POOL_SIZE
  t.equal(resolveOptions(base).databasePoolSize, undefined, 'unset: left to the URI and the driver')
  process.env.DATABASE_POOL_SIZE = '24'
  t.equal(resolveOptions(base).databasePoolSize, 24, 'from the environment')
  t.equal(resolveOptions({ ...base, databasePoolSize: 6 }).databasePoolSize, 6, 'the option beats the environment')
  for (const bad of ['0', '-3', 'ten', '4.5', '1001']) {
    process.env.DATABASE_POOL_SIZE = bad
    t.throws(() => resolveOptions(base), { code: 'FPK_ERR_OPTION_INVALID', message: `kitPlugin option "databasePoolSize": must be a whole number of connections from 1 to 1000 (DATABASE_POOL_SIZE or the option) (got "${bad}")` }, `DATABASE_POOL_SIZE=${bad}`)
  }
  process.env.DATABASE_POOL_SIZE = 'x'
  await t.rejects(async () => { const app = Fastify(); await app.register(kitPlugin, base); await app.ready() }, { code: 'FPK_ERR_OPTION_INVALID', message: /"databasePoolSize"/ }, 'a bad value fails the boot')
  delete process.env.DATABASE_POOL_SIZE
  t.equal(postgresPoolSize('postgres://h/db', undefined), 10, 'PostgreSQL: pg\'s 10, as Parse')
  t.equal(postgresPoolSize('postgres://h/db?poolSize=7', undefined), 7, 'PostgreSQL: the URI\'s poolSize, as Parse reads it')
  t.equal(postgresPoolSize('postgres://h/db?max=12&poolSize=7', undefined), 12, 'PostgreSQL: max before poolSize, as Parse reads them')
  t.equal(postgresPoolSize('postgres://h/db?max=12', 30), 30, 'the option beats the URI')
  t.equal(mongoPoolSize('mongodb://h/db', undefined), 100, 'MongoDB: the driver\'s 100')
  t.equal(mongoPoolSize('mongodb://h/db?replicaSet=rs0&maxPoolSize=40', undefined), 40, 'MongoDB: the URI\'s maxPoolSize')
  t.equal(mongoPoolSize('mongodb://h/db?maxPoolSize=40', 8), 8, 'the option beats the URI')
})

t.test('shutdown.drainDelayMs: the option, else SHUTDOWN_DRAIN_MS, else 5 s in production and 0 elsewhere; the shutdown budget leaves room for it and the job grace', async (t) => {
  const saved = { SHUTDOWN_DRAIN_MS: process.env.SHUTDOWN_DRAIN_MS, NODE_ENV: process.env.NODE_ENV }
  t.teardown(() => { for (const [name, value] of Object.entries(saved)) { if (value === undefined) delete process.env[name]; else process.env[name] = value } })
  const base = { appId: 'a', masterKey: 'm', databaseURI: 'postgres://u:p@127.0.0.1/db' }
  delete process.env.SHUTDOWN_DRAIN_MS
  t.equal(resolveOptions(base).shutdown.drainDelayMs, 0, 'no drain outside production: nothing balances a development server')
  process.env.NODE_ENV = 'production'
  t.equal(resolveOptions(base).shutdown.drainDelayMs, 5000, '5 s in production')
  t.equal(shutdownBudgetMs(resolveOptions(base)), 20_000, 'production defaults: the longer of drain (5 s) and job grace (10 s), plus 10 s')
  process.env.SHUTDOWN_DRAIN_MS = '8000'
  t.equal(resolveOptions(base).shutdown.drainDelayMs, 8000, 'SHUTDOWN_DRAIN_MS')
  t.equal(resolveOptions({ ...base, shutdown: { drainDelayMs: 1000 } }).shutdown.drainDelayMs, 1000, 'the option wins')
  t.equal(shutdownBudgetMs(resolveOptions({ ...base, shutdown: { drainDelayMs: 15_000 }, jobs: { shutdownGraceMs: 3000 } })), 25_000)
  process.env.SHUTDOWN_DRAIN_MS = 'soon'
  t.throws(() => resolveOptions(base), { code: 'FPK_ERR_OPTION_INVALID', message: /option "shutdown\.drainDelayMs": must be a whole number of milliseconds .*got "soon"/ })
  delete process.env.SHUTDOWN_DRAIN_MS
  t.throws(() => resolveOptions({ ...base, shutdown: { drainDelayMs: -1 } }), { code: 'FPK_ERR_OPTION_INVALID', message: /option "shutdown\.drainDelayMs"/ })
  t.throws(() => resolveOptions({ ...base, shutdown: { drain: 1 } } as never), { code: 'FPK_ERR_OPTION_UNKNOWN', message: /option "shutdown\.drain": unknown option/ })
})

t.test('restriction rules (pure)', async (t) => {
  const closed = { allowAuthRoutes: false, allowedRoutes: [] }
  t.equal(normalisePath('/classes/../functions/x'), undefined, 'dot segments are refused')
  t.equal(normalisePath('//functions//hello/?a=1'), undefined, 'empty segments are refused')
  t.equal(normalisePath('/functions/hello/?a=1'), '/functions/hello')
  t.equal(normalisePath('/%E0%A4%A'), undefined, 'bad encoding is refused')
  t.ok(isRouteAllowed('POST', '/functions/hello', closed))
  t.notOk(isRouteAllowed('POST', '/functions/', closed))
  t.notOk(isRouteAllowed('POST', '/functions/../classes/X', closed))
  t.notOk(isRouteAllowed('PUT', '/functions/hello', closed))
  t.ok(isRouteAllowed('HEAD', '/health', closed))
  t.notOk(isRouteAllowed('POST', '/login', closed))
  t.ok(isRouteAllowed('POST', '/login', { ...closed, allowAuthRoutes: true }))
  t.ok(isRouteAllowed('POST', '/files/a.png', { allowAuthRoutes: false, allowedRoutes: [{ path: '/files/*', methods: ['POST'] }] }))
})

// ── from test/option-schemas.test.ts ──
const base = { appId: 'app', masterKey: 'master' }

t.test('kitPlugin options: unknown key, wrong type, rule between options', async (t) => {
  t.throws(() => resolveOptions({ ...base, mountpath: '/api' } as never),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: /^kitPlugin option "mountpath": unknown option; did you mean "mountPath"\? \(known: appId, / })
  t.throws(() => resolveOptions({ ...base, indexes: 'no' } as never),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "indexes": must be true or false (got "no")' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: [] } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "liveQuery\.classNames": must be a non-empty list of class names/ })
  t.throws(() => resolveOptions({ appId: 'same', masterKey: 'same' }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "masterKey": must differ from appId' })
  t.throws(() => resolveOptions({ ...base, schema: {}, parseServerOptions: { schema: {} } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /"schema": is given twice/ })
  // Keys are never echoed into a message.
  t.throws(() => resolveOptions({ appId: 'app', masterKey: 12345 } as never),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "masterKey": must be a string' })
  const uri = 'mongodb://u:hidden@h/db'
  t.throws(() => resolveOptions({ ...base, databaseURI: [uri] } as never), { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "databaseURI": must be a non-empty string' })

  resetKitConfig()
  const app = Fastify()
  t.teardown(() => app.close().catch(() => {}))
  await t.rejects(async () => { await app.register(kitPlugin, { ...base, allowAuthRoute: true } as never) },
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: /option "allowAuthRoute": unknown option; did you mean "allowAuthRoutes"\?/ }, 'through Fastify registration too')
})

t.test('the schema option: unknown key, wrong type, a whole configuration', async (t) => {
  t.match(checkSchemaOption({ lockSchema: true }), { kind: 'unknown', problem: /^"lockSchema" is not a schema option; did you mean "lockSchemas"\? \(known: adminRole, lockSchemas/ })
  t.match(checkSchemaOption({ afterMigration: 'later' }), { kind: 'invalid', problem: 'afterMigration must be a function (got "later")' })
  t.equal(checkSchemaOption({ definitions: [], strict: false }), undefined, 'a whole configuration (with definitions) is accepted')
  t.throws(() => resolveOptions({ ...base, parseServerOptions: { schema: { lockSchemas: 'yes' } as never } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "parseServerOptions\.schema": lockSchemas must be true or false/ })
  t.throws(() => resolveOptions({ ...base, schema: { strict: true, drop: true } as never }),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: /^kitPlugin option "schema": "drop" is not a schema option \(known:/ })
})

t.test('setupSwagger and kitPlugin docs: unknown key, wrong type, rule on the path', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(setupSwagger(app, { title: 'API', version: '1', tittle: 'x' } as never),
    { code: 'FPK_ERR_DOCS_OPTION_UNKNOWN', message: /^setupSwagger option "tittle": unknown option; did you mean "title"\? \(known: title, version/ })
  await t.rejects(setupSwagger(app, { title: 'API', version: 1 } as never),
    { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: 'setupSwagger option "version": required: a non-empty string (got 1)' })
  await t.rejects(setupSwagger(app, { title: 'API', version: '1', schemes: ['HTTPS', 'gopher'] } as never),
    { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: /^setupSwagger option "schemes": must be a non-empty list of http, https, ws, wss/ })
  await t.rejects(setupSwagger(app, { title: 'API', version: '1' }, '/'),
    { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: /^setupSwagger option "path": must not be "\/"/ })
  await t.rejects(setupSwagger(app, 'docs' as never),
    { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: /^setupSwagger configuration: must be an object/ })
  t.throws(() => resolveOptions({ ...base, docs: { title: 'API', version: '1', host: 'https://x.example' } }),
    { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: /^kitPlugin option "docs\.host": must be a host name/ })
  t.throws(() => resolveOptions({ ...base, docs: { title: 'API', version: '1', paht: '/docs' } as never }),
    { code: 'FPK_ERR_DOCS_OPTION_UNKNOWN', message: /^kitPlugin option "docs\.paht": unknown option/ })
  t.equal(resolveOptions({ ...base, docs: { title: 'API', version: '1', schemes: ['HTTPS'], path: '/docs' } }).docs?.path, '/docs')
})

t.test('@CloudFunction options: unknown key, wrong type, rule between options', async (t) => {
  const declare = (options: object) => () => CloudFunction(options as CloudFunctionOptions)(class Owner {}, 'fn', { value: () => {} })
  t.throws(declare({ requireAuth: true }),
    { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /^@CloudFunction Owner\.fn: option "requireAuth" is not a @CloudFunction option; did you mean "requiresAuth"\? \(known: methods, / })
  t.throws(declare({ validation: { fields: { a: { type: 'String', requried: true } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /option "validation\.fields\.a\.requried" is not supported; did you mean "required"\? \(known: type, required, options, default, description, maxLength, minLength, pattern, min, max, integer, items, properties\)/ })
  t.throws(declare({ requireAllRoles: 1 }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: '@CloudFunction Owner.fn: option "requireAllRoles" must be true or false (got 1)' })
  t.throws(declare({ validation: { fields: { a: { options: [] } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /option "validation\.fields\.a\.options" must be a non-empty list of allowed values/ })
  t.throws(declare({ returns: { total: { type: Symbol } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /option "returns\.total\.type" must be one of String, Number/ })
  t.throws(declare({ methods: ['GET', 'FETCH'] }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /option "methods" has "FETCH"; use GET, HEAD/ })
  t.throws(declare(42 as never), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /Owner\.fn: options must be an object/ })
  t.doesNotThrow(declare({ returns: Type.Object({ id: Type.String() }) }), 'a TypeBox schema as returns')
})

t.test('@ParseField options: unknown key, wrong type, rule between options', async (t) => {
  class Probe extends BaseModel {}
  const field = (options: object) => () => ParseField(options as FieldOptions)(Probe.prototype, 'probe')
  t.throws(field({ type: 'String', maxLenght: 3 }),
    { code: 'FPK_ERR_FIELD_OPTION_UNKNOWN', message: /^@ParseField Probe\.probe: option "maxLenght" is not a field option; did you mean "maxLength"\? \(known: type, required/ })
  t.throws(field({ type: 'Number', integer: 'yes' }),
    { code: 'FPK_ERR_FIELD_OPTION_INVALID', message: '@ParseField Probe.probe: option "integer" must be true or false (got "yes")' })
  t.throws(field({ type: 'Number', index: 2 }), { code: 'FPK_ERR_FIELD_OPTION_INVALID', message: /option "index" must be true, 1 or -1 \(got 2\)/ })
  t.throws(field({ type: 'String', minLength: 5, maxLength: 2 }),
    { code: 'FPK_ERR_FIELD_OPTION_INVALID', message: /option "minLength" is greater than maxLength/ })
  t.throws(field({ type: 'String', pattern: {} }), { code: 'FPK_ERR_FIELD_OPTION_INVALID', message: /option "pattern" must be a string or a RegExp/ })
  t.throws(field({ type: 'String', unique: 'x' }), ModelDeclarationError, 'field option errors are ModelDeclarationErrors')
  t.throws(() => ParseField({ type: 'String' })(Probe.prototype, 'objectId'),
    { code: 'FPK_ERR_MODEL_DECLARATION', message: /"objectId" is reserved by Parse/ })
})

t.test('@ParseClass options: unknown key, wrong type, rule against the fields', async (t) => {
  // A fresh class each time: a declaration takes the fields declared before it.
  const declare = (options: object) => () => {
    class Probe extends BaseModel {}
    ParseField({ type: 'String' })(Probe.prototype, 'title')
    ParseField({ type: 'Number' })(Probe.prototype, 'rank')
    ParseClass('Probe', options as ClassOptions)(Probe)
  }
  t.throws(declare({ protectedField: {} }),
    { code: 'FPK_ERR_CLASS_OPTION_UNKNOWN', message: /^@ParseClass\('Probe'\) on Probe: "protectedField" is not a class option; did you mean "protectedFields"\? \(known: description, clp, compoundIndexes, protectedFields, aclIndex\)/ })
  t.throws(declare({ clp: { delete: {}, destroy: {} } }),
    { code: 'FPK_ERR_CLASS_OPTION_UNKNOWN', message: /clp: "destroy" is not an operation \(known: find, get/ })
  t.throws(declare({ protectedFields: { '*': 'rank' } }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /protectedFields\['\*'\] must be a list of field names \(got "rank"\)/ })
  t.throws(declare({ compoundIndexes: [{ fields: ['title'] }, { fields: ['rank'], partial: 'x' }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /compoundIndexes\[1\]\.partial must be a filter object/ })
  t.throws(declare({ compoundIndexes: [{ fields: ['title', 'rank'], text: true }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /compoundIndexes\[0\] is a text index, but "rank" is not a String field/ })
  t.throws(declare({ description: 5 }), ModelDeclarationError, 'class option errors are ModelDeclarationErrors')
})

t.test('kitPlugin cors: unknown key, wrong type, rule on the origins', async (t) => {
  t.throws(() => resolveOptions({ ...base, cors: { origins: ['https://app.example.com'] } as never }),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: 'kitPlugin option "cors.origins": unknown option; did you mean "origin"? (known: origin, allowedHeaders, maxAge)' })
  t.throws(() => resolveOptions({ ...base, cors: { maxAge: '60' } as never }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "cors.maxAge": must be a whole number of seconds ≥ 0 (got "60")' })
  t.throws(() => resolveOptions({ ...base, cors: { allowedHeaders: ['X Custom'] } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "cors.allowedHeaders": must be a list of header names (got ["X Custom"])' })
  t.throws(() => resolveOptions({ ...base, cors: ['https://app.example.com'] as never }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "cors": must be false, true, or \{ origin/ })
  t.throws(() => resolveOptions({ ...base, cors: { origin: 'https://app.example.com/' } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "cors\.origin": "https:\/\/app\.example\.com\/" is not an origin/ }, 'an origin with a path: a rule the schema cannot say')
  t.throws(() => resolveOptions({ ...base, cors: { origin: [] } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "cors.origin": lists no origin: list at least one, or set cors: false' })
})

t.test('kitPlugin allowedRoutes items: unknown key, wrong type, rule on the verbs', async (t) => {
  t.throws(() => resolveOptions({ ...base, allowedRoutes: [{ path: '/files/*', method: ['POST'] }] as never }),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: 'kitPlugin option "allowedRoutes[0].method": unknown option; did you mean "methods"? (known: path, methods)' })
  t.throws(() => resolveOptions({ ...base, allowedRoutes: [{ path: '/files/*' }, { path: '/classes/Note', methods: 'GET' }] as never }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "allowedRoutes[1].methods": must be a non-empty list of HTTP verbs, e.g. [\'GET\'] (got "GET")' })
  t.throws(() => resolveOptions({ ...base, allowedRoutes: [{ path: 'files' }] }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "allowedRoutes[0].path": must be a path starting with \'/\', e.g. \'/files/*\' (got "files")' })
  t.throws(() => resolveOptions({ ...base, allowedRoutes: [{ path: '/files/*', methods: ['post', 'PSOT'] }] }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "allowedRoutes[0].methods": has "PSOT"; use GET, HEAD, POST, PUT, PATCH, DELETE' }, 'a verb no route answers')
  t.same(resolveOptions({ ...base, allowedRoutes: [{ path: '/files/*', methods: ['post'] }] }).allowedRoutes, [{ path: '/files/*', methods: ['POST'] }], 'verbs are compared upper-case')
})

t.test('kitPlugin databasePoolSize and jobs.sessionSweep: wrong values and misspellings fail with their codes', async (t) => {
  t.throws(() => resolveOptions({ ...base, databasePoolSize: 0 }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "databasePoolSize": must be a whole number of connections from 1 to 1000 (DATABASE_POOL_SIZE or the option) (got 0)' })
  t.throws(() => resolveOptions({ ...base, databasePoolSize: 2.5 }), { code: 'FPK_ERR_OPTION_INVALID', message: /"databasePoolSize": must be a whole number.*\(got 2\.5\)/ })
  t.throws(() => resolveOptions({ ...base, databasePoolSize: '10' as never }), { code: 'FPK_ERR_OPTION_INVALID', message: /"databasePoolSize": must be a whole number.*\(got "10"\)/ }, 'a string in code is a mistake')
  t.throws(() => resolveOptions({ ...base, dataBasePoolSize: 10 } as never),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: /option "dataBasePoolSize": unknown option; did you mean "databasePoolSize"\?/ })
  t.throws(() => resolveOptions({ ...base, jobs: { sessionsSweep: false } as never }),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: /option "jobs\.sessionsSweep": unknown option; did you mean "sessionSweep"\?/ })
  t.throws(() => resolveOptions({ ...base, jobs: { sessionSweep: true as never } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "jobs.sessionSweep": must be a cron expression such as \'0 * * * *\', or false (got true)' })
  t.throws(() => resolveOptions({ ...base, jobs: { sessionSweep: 'hourly' } }),
    { code: 'FPK_ERR_CRON_EXPRESSION', message: /option "jobs\.sessionSweep": "hourly" is not a cron expression/ })
  t.equal(resolveOptions({ ...base, jobs: { sessionSweep: false } }).jobs.sessionSweep, false, 'false turns the sweep off')
  t.equal(resolveOptions({ ...base, databasePoolSize: 25 }).databasePoolSize, 25)
})

t.test('kitPlugin liveQuery: unknown key, wrong type, rule on the class names', async (t) => {
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note'], className: 'Note' } as never }),
    { code: 'FPK_ERR_OPTION_UNKNOWN', message: 'kitPlugin option "liveQuery.className": unknown option; did you mean "classNames"? (known: classNames, maxPayload, connectTimeoutMs, maxSubscriptionsPerConnection, maxConnectionsPerAddress, allowRegex)' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note'], allowRegex: 'yes' } as never }),
    { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "liveQuery\.allowRegex": must be true or false/ })
  t.equal(resolveOptions({ ...base, liveQuery: { classNames: ['Note'] } }).liveQuery?.allowRegex, false, 'regex subscriptions are off unless asked for')
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: 'Note' } as never }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "liveQuery.classNames": must be a non-empty list of class names, e.g. [\'Message\'] (got "Note")' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note', 'my-notes'] } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "liveQuery.classNames[1]": must be a Parse class name (got "my-notes")' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note', 'Task', 'Note'] } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "liveQuery.classNames": lists "Note" twice' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note'], maxSubscriptionsPerConnection: 0 } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "liveQuery.maxSubscriptionsPerConnection": must be a whole number of subscriptions from 1 to 1000000 (got 0)' })
  t.throws(() => resolveOptions({ ...base, liveQuery: { classNames: ['Note'], maxPayload: 10 } }),
    { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "liveQuery.maxPayload": must be a whole number of bytes from 1024 to 104857600 (got 10)' })
  t.same(resolveOptions({ ...base, liveQuery: { classNames: ['Note'] } }).liveQuery,
    { classNames: ['Note'], maxPayload: undefined, connectTimeoutMs: 10_000, maxSubscriptionsPerConnection: 100, maxConnectionsPerAddress: 100, allowRegex: false }, 'the defaults (maxPayload: the body limit, read at boot)')
})

t.test('@CloudFunction rateLimit: unknown key, wrong type, both limits required', async (t) => {
  const declare = (rateLimit: object) => () => CloudFunction({ rateLimit } as CloudFunctionOptions)(class Owner {}, 'fn', { value: () => {} })
  t.throws(declare({ windowMS: 1000, max: 5 }),
    { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: '@CloudFunction Owner.fn: option "rateLimit.windowMS" is not supported; did you mean "windowMs"? (known: windowMs, max)' })
  t.throws(declare({ windowMs: '1m', max: 5 }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: '@CloudFunction Owner.fn: option "rateLimit.windowMs" must be a whole number of milliseconds ≥ 1 (got "1m")' })
  t.throws(declare({ max: 5 }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /^@CloudFunction Owner\.fn: option "rateLimit(\.windowMs)?" / }, 'a window without its length')
})

t.test('the codes are the exported ones', async (t) => {
  for (const [code, ErrorClass] of Object.entries(kitErrorCodes)) {
    t.equal(new ErrorClass('x').code, code, code)
  }
  t.equal(Object.keys(kitErrorCodes).length, new Set(Object.keys(kitErrorCodes)).size)
})

// Each sample sets every property its type has (Required<…> makes the compiler
// insist), and the schema must accept it: schema and type cannot drift apart.
t.test('every property of each option type is accepted by its schema', async (t) => {
  class Model extends BaseModel {}
  const field: Required<ValidationField> = { type: Number, required: true, options: [1, 2], default: 1, description: 'a number', maxLength: 3, minLength: 1, pattern: '^[a-z]+$', min: 0, max: 9, integer: true, items: String, properties: { x: { type: String, required: true } } }
  const index: Required<CompoundIndex> = { fields: ['title'], unique: true, sparse: false, partial: { title: { $exists: true } }, text: false, name: 'by_title' }
  const docs: Required<SwaggerConfig> = { title: 'API', version: '1', description: 'd', basePath: '/parse', appId: 'app', restApiKey: true, host: 'api.example.com:8443', schemes: ['https', 'WSS'], license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' }, contact: { name: 'API team', url: 'https://example.com', email: 'api@example.com' }, models: 'all' }
  const schema: Required<SchemaConfigOptions> = {
    adminRole: 'Admin', version: 3, lockSchemas: true, strict: false, recreateModifiedFields: false, deleteExtraFields: false, maxClientFields: 50, keepUnknownIndexes: true,
    beforeMigration: () => {}, afterMigration: async () => {}
  }
  const cors: Required<CorsOptions> = { origin: ['https://app.example.com', /\.example\.com$/], allowedHeaders: ['X-Custom'], maxAge: 60 }
  const allowedRoute: Required<NonNullable<KitOptions['allowedRoutes']>[number]> = { path: '/files/*', methods: ['POST'] }
  const liveQuery: Required<NonNullable<KitOptions['liveQuery']>> = { classNames: ['Note'], maxPayload: 65_536, connectTimeoutMs: 5_000, maxSubscriptionsPerConnection: 10, maxConnectionsPerAddress: 20, allowRegex: true }
  const queueOptions: Required<QueueOptions> = { workers: true, pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 5, keepFinishedSeconds: 60, deleteAfterSeconds: 120, deadLetterDays: 3 }
  const jobs: Required<NonNullable<KitOptions['jobs']>> = { schedules: true, shutdownGraceMs: 5000, dashboardPollMs: 2000, leaseMs: 30_000, ttlSweep: '*/5 * * * *', sessionSweep: '30 3 * * *', queue: queueOptions }
  const rateLimit: Required<NonNullable<CloudFunctionOptions['rateLimit']>> = { windowMs: 1000, max: 5 }
  const kit: Required<KitOptions> = {
    ...base,
    serverURL: 'http://127.0.0.1:1337/parse',
    databaseURI: 'postgres://u:p@127.0.0.1/db',
    dataDir: '.data/postgres',
    ephemeralDatabase: true,
    databaseTimeout: 10,
    databasePoolSize: 20,
    mountPath: '/parse',
    allowAuthRoutes: true,
    authRateLimit: { max: 5, maxPerAddress: 50, windowMs: 60_000 },
    allowedRoutes: [allowedRoute],
    adminRole: 'Admin',
    excludedPointerClasses: ['IMG'],
    models: [Model],
    functions: ['src/functions'],
    parseServerOptions: { maxLimit: 100 },
    schema,
    indexes: false,
    liveQuery,
    docs: { ...docs, path: '/docs' },
    redis: 'redis://127.0.0.1:6379',
    cors,
    jobs,
    shutdown: { drainDelayMs: 2000 },
    metrics: { path: '/metrics', token: 'a-metrics-token-of-32-characters', defaultMetrics: false },
    tracing: true,
    fastPaths: false,
    requestIdHeader: 'x-correlation-id',
    idleCollection: 30,
    maxClientLimit: 500
  }
  const route: Required<CloudFunctionOptions> = {
    methods: ['GET', 'POST'],
    description: 'd',
    requiresAuth: true,
    requireMaster: false,
    validation: { requireUser: true, fields: { n: field, s: { type: 'String' } } },
    returns: { n: field },
    requireRoles: ['Admin'],
    requireAllRoles: true,
    roleCacheMs: 0,
    rateLimit,
    customErrorMessage: 'no',
    swagger: { summary: 's', description: 'd', tags: ['t'], responses: { 404: { description: 'none' } }, operationId: 'describedOp', deprecated: true }
  }
  const fieldOptions: Required<FieldOptions> = {
    type: 'String', required: true, default: 'a', description: 'd', unique: true, index: -1, geo: false, ttlSeconds: 60,
    maxLength: 5, minLength: 1, pattern: /^[a-z]+$/i, enum: ['a', 'b'], min: 0, max: 1, integer: true, targetClass: 'Note'
  }
  const classOptions: Required<ClassOptions> = {
    description: 'd',
    clp: { find: { '*': true }, get: { '*': true }, count: {}, create: { 'role:Admin': true }, update: {}, delete: {}, addField: {} },
    compoundIndexes: [index],
    protectedFields: { '*': ['title'] },
    aclIndex: true
  }
  const samples = [
    ['KitOptions', KitOptionsSchema, kit],
    ['SwaggerConfig', SwaggerConfigSchema, docs],
    ['SchemaConfigOptions', SchemaConfigOptionsSchema, schema],
    ['CloudFunctionOptions', CloudFunctionOptionsSchema, route],
    ['ValidationField', ValidationFieldSchema, field],
    ['FieldOptions', FieldOptionsSchema, fieldOptions],
    ['ClassOptions', ClassOptionsSchema, classOptions],
    ['CompoundIndex', CompoundIndexSchema, index],
    ['CorsOptions', CorsOptionsSchema, cors],
    ['AllowedRoute', AllowedRouteSchema, allowedRoute],
    ['liveQuery', LiveQueryOptionsSchema, liveQuery],
    ['rateLimit', RateLimitSchema, rateLimit]
  ] as const
  for (const [name, schema, sample] of samples) {
    t.same(Object.keys(sample).sort(), knownKeys(schema).sort(), `${name}: the sample sets every key the schema knows`)
    t.equal(optionChecker(schema)(sample), undefined, `${name}: every property accepted`)
  }
  t.doesNotThrow(() => resolveOptions(kit), 'kitPlugin resolves the full sample')
  t.doesNotThrow(() => resolveOptions({ ...kit, models: 'src/models', functions: [class Handlers {}], cors: false }), 'the other declaration forms')
})

t.test('validation field limits and fieldsOf are checked at import', async (t) => {
  const declare = (options: object) => () => CloudFunction(options as CloudFunctionOptions)(class Owner {}, 'fn', { value: () => {} })
  t.throws(declare({ validation: { fields: { a: { type: 'String', pattern: '(' } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /^@CloudFunction Owner\.fn: option "validation\.fields\.a\.pattern" is not a valid regular expression/ })
  t.throws(declare({ validation: { fields: { a: { type: 'Array', items: 'Thing' } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /"validation\.fields\.a\.items" must be one of String, Number/ })
  t.throws(declare({ validation: { fields: { a: { type: 'String', maxLength: -1 } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /"validation\.fields\.a\.maxLength" must be a whole number ≥ 0/ })
  // An object's properties, and those of a list's objects, are checked as fields are (one level deep).
  t.throws(declare({ validation: { fields: { a: { type: 'Object', properties: { b: { type: 'Thing' } } } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /"validation\.fields\.a\.properties\.b\.type" must be one of String, Number/ })
  t.throws(declare({ validation: { fields: { a: { type: 'Array', items: { properties: { b: { type: 'Number', min: 'low' } } } } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /"validation\.fields\.a\.items/ })
  t.throws(declare({ validation: { fields: { a: { type: 'Object', properties: { b: { type: 'Object', properties: {} } } } } } }),
    { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /"validation\.fields\.a\.properties\.b\.properties" is not supported/ }, 'one level deep')
  t.doesNotThrow(declare({ validation: { fields: { a: { type: 'Array', items: { properties: { b: { type: Number, min: 1, required: true } } } }, c: { type: Object, properties: { d: { type: String } } } } } }))

  @ParseClass('FieldsOfProbe')
  class Probe extends BaseModel {
    @ParseField({ type: 'String', required: true, maxLength: 20, pattern: /[a-z]+/ }) declare slug: string
    @ParseField({ type: 'Number', min: 0, max: 9, integer: true }) declare rank: number
    @ParseField({ type: 'String', enum: ['a', 'b'] }) declare kind: 'a' | 'b'
    @ParseField({ type: 'Array', targetClass: 'Tag' }) declare tags: unknown[]
    @ParseField({ type: 'Pointer', targetClass: '_User' }) declare owner: unknown
  }
  t.same(fieldsOf(Probe, ['slug', 'rank', 'kind', 'tags', 'owner']), {
    slug: { type: 'String', maxLength: 20, pattern: '^(?:[a-z]+)$', required: true },
    rank: { type: 'Number', min: 0, max: 9, integer: true },
    kind: { type: 'String', options: ['a', 'b'] },
    tags: { type: 'Array', items: 'String', description: 'Tag ids' },
    owner: { type: 'String', description: '_User id' }
  })
  t.same(fieldsOf(Probe, ['slug'], { optional: true }), { slug: { type: 'String', maxLength: 20, pattern: '^(?:[a-z]+)$' } }, 'optional: nothing required')
  t.throws(() => fieldsOf(Probe, ['nope' as 'slug']), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: 'fieldsOf(FieldsOfProbe): no @ParseField "nope"; its fields are slug, rank, kind, tags, owner' })
  class NotAModel extends BaseModel {}
  t.throws(() => fieldsOf(NotAModel, []), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /^fieldsOf: NotAModel is not a @ParseClass model/ })
})

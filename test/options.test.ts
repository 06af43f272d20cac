// Misconfiguration fails at registration, with a message that says what to change.
import t from 'tap'
import Fastify from 'fastify'
import { resolveOptions } from '../lib/options.js'
import { databaseKind, openDatabase } from '../lib/storage/database.js'
import { isRouteAllowed, normalisePath } from '../lib/access/restriction.js'
import { resetKitConfig, configureKit, getKitConfig } from '../lib/config.js'
import { kitPlugin } from '../plugin.js'
import { postgresPoolSize } from '../lib/storage/postgres/pool.js'
import { mongoPoolSize } from '../lib/storage/mongo/bounded.js'
import { shutdownBudgetMs } from '../lib/shutdown.js'

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

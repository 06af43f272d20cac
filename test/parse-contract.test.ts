// The private surface of Parse Server and the Parse SDK that the kit relies on:
// module paths, names, arities and argument positions that no semver promise
// covers. Each check says what the kit uses and where, so a Parse upgrade that
// moves one of them fails here, by name, rather than misbehaving quietly.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import Parse from 'parse/node'
import { parseInternals, gridFSBucketAdapterClass, mongoStorageAdapterClass, parseLogger, encodeForSave, type MongoAdapter, type PostgresAdapter } from '../lib/parse/internals.js'
import { parseServerPackage } from '../lib/parse/parse-main.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { userCacheEntryNow } from '../lib/parse/user-cache.js'
import { WRITES } from '../lib/storage/adapter.js'
import { withOneSchemaLoad } from '../lib/parse/one-schema-load.js'
import { parseGetPushController } from '../lib/parse/push-without-adapter.js'
import { parseAcceptsClassName, parseAcceptsFieldName, parseSystemClasses } from '../lib/parse/name-rules.js'
import { currentDatabase } from '../lib/storage/database.js'
import { mongoCollectionPrefix, pgDatabase, pgFormatter, pgPool, withMongoCollections, withPgQueries } from '../lib/parse/adapter-internals.js'
import { expressRouterStack } from '../lib/parse/express-app.js'
import { extendSaveJSON } from '../lib/parse/save-json.js'
import { CLASS_SPECIFIC_STEPS, ORDINARY_CREATE_STEPS } from '../lib/parse/lean-create.js'
import { isParseDefaultColumn } from '../lib/parse/schema-enforcement.js'
import { READ_AS_EMPTY } from '../lib/parse/unchanged-schema.js'
import { installedScan } from '../lib/parse/keyword-scan.js'
import { APP_ID, lane, startKit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
// Parse Server as the kit loads it (its unused subsystems deferred), then its deep modules (lib/parse/internals.ts).
const { ParseServer } = parseServerPackage()
const { AuthModule, Config, Controllers, DatabaseController, DefinedSchemas, InMemoryCacheAdapter, ParseServerClass, PushController, PushQueue, PushWorker, PostgresStorageAdapter, RedisPubSub, ParseUtils, RestQuery, RestWrite, SchemaCache, SubCache, enforceRoleSecurity, SchemaRules, makeBatchRoutingPathFunction, rest, triggers, cryptoUtils } = parseInternals()

type Fn = (...args: unknown[]) => unknown
// Loaded at first use by the kit (parse/lazy-subsystems.ts); this file loads them.
const MongoStorageAdapter = mongoStorageAdapterClass()
const GridFSBucketAdapter = gridFSBucketAdapterClass()

/** The declared parameters of a function, as written (destructured ones as their source text). */
function parameters (fn: unknown): string[] {
  const source = String(fn)
  const open = source.indexOf('(')
  let depth = 0
  let close = open
  for (; close < source.length; close++) {
    if ('([{'.includes(source[close])) depth++
    if (')]}'.includes(source[close]) && --depth === 0) break
  }
  const list = source.slice(open + 1, close)
  const names: string[] = []
  let current = ''
  depth = 0
  for (const char of list) {
    if ('([{'.includes(char)) depth++
    if (')]}'.includes(char)) depth--
    if (char === ',' && depth === 0) { names.push(current); current = '' } else current += char
  }
  if (current.trim() !== '') names.push(current)
  // A destructured parameter stays whole (its defaults inside); a plain one loses its default.
  return names.map((name) => /^\s*[{[]/.test(name) ? name.trim() : name.split('=')[0].trim())
}

/** A method on a prototype, failing with what the kit needs it for. */
function method (t: Test, owner: object, name: string, usedBy: string): Fn {
  const value = (owner as Record<string, unknown>)[name]
  t.equal(typeof value, 'function', `${name} is a function (${usedBy})`)
  return value as Fn
}

const require = createRequire(import.meta.url)
const parseSource = (file: string) => readFileSync(require.resolve(`parse-server/lib/${file}`), 'utf8')
const parseSourceModule = (file: string) => require(`parse-server/lib/${file}`) as Record<string, { prototype: object }>

t.test('deep imports: lib/parse/internals.ts loads each of these parse-server/lib modules', async (t) => {
  const modules: Array<[string, unknown, string]> = [
    ['Auth.js', AuthModule, 'sessions (access/session.ts), roles (access/roles.ts), queryRows (storage/query-rows.ts)'],
    ['Config.js', Config, 'parseConfig (access/parse-config.ts)'],
    ['RestQuery.js', RestQuery, 'queryRows (storage/query-rows.ts)'],
    ['rest.js', rest, 'handler saves (parse/direct-writes.ts)'],
    ['RestWrite.js', RestWrite, 'a create\'s ordinary steps (parse/lean-create.ts)'],
    ['SharedRest.js', enforceRoleSecurity, 'the role check before those steps (parse/lean-create.ts)'],
    ['Adapters/Cache/SchemaCache.js', SchemaCache, 'a fresh schema cache per server (host/parse-server.ts)'],
    ['Adapters/Storage/Postgres/PostgresStorageAdapter.js', PostgresStorageAdapter, 'the PostgreSQL adapter (storage/database.ts)'],
    ['Adapters/Storage/Mongo/MongoStorageAdapter.js', MongoStorageAdapter, 'the MongoDB adapter (storage/database.ts)'],
    ['Adapters/Files/GridFSBucketAdapter.js', GridFSBucketAdapter, 'files on MongoDB (storage/database.ts)'],
    ['Controllers/SchemaController.js', SchemaRules, 'name rules and the schema lock (model/*)'],
    ['Controllers/DatabaseController.js', DatabaseController, 'the login password stamp guard (parse/password-stamp.ts)'],
    ['logger.js', parseLogger, 'migration failures (model/schema-boot.ts)'],
    ['triggers.js', triggers, '_Role evictions (cluster/role-evictions.ts)'],
    ['Adapters/PubSub/RedisPubSub.js', RedisPubSub, 'LiveQuery over Redis (cluster/live-query-pubsub.ts)'],
    ['batch.js', makeBatchRoutingPathFunction, 'the inner paths of /batch (host/mount.ts)'],
    ['Controllers/index.js', Controllers.getPushController, 'push without the adapters (parse/push-without-adapter.ts)'],
    ['Controllers/PushController.js', PushController, 'push without the adapters'],
    ['Push/PushQueue.js', PushQueue, 'push without the adapters'],
    ['Push/PushWorker.js', PushWorker, 'push without the adapters'],
    ['ParseServer.js', ParseServerClass, 'the /batch route wrapped for its failures (parse/transactional-batch.ts)'],
    ['SchemaMigrations/DefinedSchemas.js', DefinedSchemas, 'writes that change nothing skipped at boot (parse/unchanged-schema.ts)']
  ]
  for (const [path, value, usedBy] of modules) t.ok(value, `parse-server/lib/${path} exports what ${usedBy} uses`)
  t.equal(typeof (SchemaCache as unknown as { default: { clear: unknown } }).default.clear, 'function', 'SchemaCache.default.clear() (host/parse-server.ts clears schemas between servers)')
  t.equal(typeof Config.get, 'function', 'Config.get(appId) (access/parse-config.ts parseConfig)')
  t.equal(Config.get('no-such-application'), undefined, 'Config.get answers undefined for an application that is not running (parseConfig refuses it)')
  t.same(parameters(makeBatchRoutingPathFunction), ['originalUrl', 'serverURL', 'publicServerURL'], 'batch.makeBatchRoutingPathFunction(originalUrl, serverURL, publicServerURL)')
  t.equal(typeof makeBatchRoutingPathFunction('/parse/batch'), 'function', 'makeBatchRoutingPathFunction answers the path mapper')
  t.same(parameters(GridFSBucketAdapter).slice(0, 2), ['mongoDatabaseURI', 'mongoOptions'], 'new GridFSBucketAdapter(uri, mongoOptions) (storage/database.ts)')
  for (const Adapter of [PostgresStorageAdapter, MongoStorageAdapter]) {
    const options = parameters(Adapter)[0]
    for (const name of ['uri', 'collectionPrefix', Adapter === PostgresStorageAdapter ? 'databaseOptions' : 'mongoOptions']) {
      t.match(options, new RegExp(`\\b${name}\\b`), `new ${Adapter.name}({ ${name} }) (storage/database.ts)`)
    }
  }
})

t.test('storage adapters: the transactionalSession position of each write in WRITES (storage/adapter.ts)', async (t) => {
  t.ok(Object.keys(WRITES).length >= 5, 'the table lists the writes')
  for (const Adapter of [PostgresStorageAdapter, MongoStorageAdapter]) {
    for (const [name, at] of Object.entries(WRITES)) {
      const params = parameters(method(t, Adapter.prototype, name, 'wrapped to join the transaction'))
      t.equal(params[0], 'className', `${Adapter.name}.${name}: argument 0 is the class name (refuseNul on it)`)
      t.equal(params[at], 'transactionalSession', `${Adapter.name}.${name}: argument ${at} is the transactional session`)
      t.ok(['object', 'query'].includes(params[2]), `${Adapter.name}.${name}: argument 2 is the object or query (refuseNul on it)`)
      if (at === 4) t.equal(params[3], 'update', `${Adapter.name}.${name}: argument 3 is the update (refuseNul on it)`)
    }
  }
})

t.test('storage adapters: reads the kit runs on a transaction (storage/adapter.ts READS)', async (t) => {
  for (const Adapter of [PostgresStorageAdapter, MongoStorageAdapter]) {
    const find = parameters(method(t, Adapter.prototype, 'find', 'run on the transaction'))
    t.same(find.slice(0, 3), ['className', 'schema', 'query'], `${Adapter.name}.find(className, schema, query, options)`)
    t.match(find[3], /^\{.*\blimit\b.*\}$/s, `${Adapter.name}.find: argument 3 is the options object`)
    const count = parameters(method(t, Adapter.prototype, 'count', 'exact counts'))
    t.match(count[4], /estimate$/, `${Adapter.name}.count: argument 4 is the estimate flag (the kit passes false)`)
    t.equal(parameters(method(t, Adapter.prototype, 'distinct', 'run on the transaction'))[3], 'fieldName', `${Adapter.name}.distinct: argument 3 is the field name (refuseNul on it)`)
    t.equal(parameters(method(t, Adapter.prototype, 'aggregate', 'run on the transaction'))[2], 'pipeline', `${Adapter.name}.aggregate: argument 2 is the pipeline`)
    method(t, Adapter.prototype, 'createTransactionalSession', 'storage/adapter.ts replaces or extends it')
    t.equal(parameters(method(t, Adapter.prototype, 'commitTransactionalSession', 'storage/transaction.ts commits')).length, 1, `${Adapter.name}.commitTransactionalSession(session)`)
    t.equal(parameters(method(t, Adapter.prototype, 'abortTransactionalSession', 'storage/transaction.ts aborts')).length, 1, `${Adapter.name}.abortTransactionalSession(session)`)
    method(t, Adapter.prototype, 'handleShutdown', 'storage/database.ts closes the adapter')
    t.same(parameters(method(t, Adapter.prototype, 'getAllClasses', 'model/schema-boot.ts compares the stored schema')), [], `${Adapter.name}.getAllClasses()`)
    t.same(parameters(method(t, Adapter.prototype, 'ensureUniqueness', 'unique indexes (storage/*/indexes.ts)')), ['className', 'schema', 'fieldNames'], `${Adapter.name}.ensureUniqueness(className, schema, fieldNames)`)
  }
  t.same(parameters(method(t, MongoStorageAdapter.prototype, 'handleError', 'network and transient errors recognised first (storage/adapter.ts)')), ['error'], 'MongoStorageAdapter.handleError(error)')
})

t.test('PostgreSQL transactions: the session shape storage/postgres/session.ts builds itself', async (t) => {
  const create = String(PostgresStorageAdapter.prototype.createTransactionalSession)
  for (const field of ['this._client.tx', '.t = t', '.promise', '.resolve = resolve', '.batch = []', '.result']) {
    t.ok(create.includes(field), `createTransactionalSession uses ${field}: openTransaction mirrors it`)
  }
  const commit = String((PostgresStorageAdapter.prototype as unknown as Record<string, unknown>).commitTransactionalSession)
  t.ok(commit.includes('transactionalSession.resolve(transactionalSession.t.batch(transactionalSession.batch))'), 'commit resolves the session with t.batch(batch), which openTransaction provides')
  // Parse's own template literal, as it reads in its source.
  const findSql = 'SELECT ${columns} FROM $1:name ${wherePattern} ${sortPattern} ${limitPattern} ${skipPattern}' // eslint-disable-line no-template-curly-in-string
  t.ok(String(PostgresStorageAdapter.prototype.find).includes(findSql),
    "find's SQL has the shape storage/postgres/reads.ts lockingQuery rewrites (SELECT … FROM … WHERE … ORDER BY … LIMIT … OFFSET …)")
  t.ok(String(PostgresStorageAdapter.prototype.find).includes('this._client.any('), 'find runs on this._client.any, which postgres/reads.ts replaces by the transaction')
})

t.test('a failed transactional /batch: the shapes parse/transactional-batch.ts and storage/adapter.ts rely on', async (t) => {
  t.equal(typeof ParseServerClass.promiseRouter, 'function', 'ParseServer.promiseRouter({ appId }) builds the router app() mounts')
  t.match(parseSource('ParseServer.js'), /ParseServer\.promiseRouter\(\{/, 'app() looks promiseRouter up on the class at build time (so the wrapper is used)')
  const batch = parseSource('batch.js')
  t.match(batch, /router\.route\('POST', batchPath/, 'the /batch route is a PromiseRouter route (its handler is wrapped)')
  t.match(batch, /Promise\.reject\(\{\s*response: results\s*\}\)/, 'a failed transactional batch rejects with { response: results } (innerFailure reads it)')
  t.match(batch, /abortTransactionalSession\(\)\.then\(/, 'and only after its abort resolves (the PostgreSQL abort is made to resolve)')
  const abort = String((PostgresStorageAdapter.prototype as unknown as Record<string, unknown>).abortTransactionalSession)
  t.ok(abort.includes('batch.push(Promise.reject())'), 'PostgreSQL abort forces the rollback with a rejected statement (whose rejection the kit absorbs)')
  const router = ParseServerClass.promiseRouter({ appId: 'contract-app' })
  t.ok(router.routes.some((route) => route.method === 'POST' && route.path === '/batch' && typeof route.handler === 'function'), 'routes holds { method, path, handler } for POST /batch')
})

t.test('LiveQuery sockets: what parse/live-query-messages.ts and host/live-query-socket.ts rely on', async (t) => {
  const server = parseSource('LiveQuery/ParseWebSocketServer.js')
  t.match(server, /loadAdapter\)\(config\.wssAdapter/, 'the wssAdapter option is loaded as the WebSocket server')
  for (const name of ['wss.onListen =', 'wss.onConnection =', 'wss.onError =', 'wss.start()']) t.ok(server.includes(name), `Parse sets ${name} on the adapter`)
  t.match(server, /ws\.onmessage = request =>/, 'Parse reads messages through ws.onmessage (the gate intercepts it)')
  t.match(server, /this\.ws\.send\(message\)/, 'and writes through ws.send')
  const client = parseSource('LiveQuery/Client.js')
  t.match(client, /this\.pushConnect = this\._pushEvent\('connected'\)/, 'the "connected" answer is an event')
  t.match(client, /const response = \{\s*op: type,/, 'whose JSON starts with op (the gate watches for {"op":"connected")')
  t.match(client, /JSON\.stringify\(\{\s*op: 'error',/, 'and so does an error ({"op":"error")')
})

t.test('MongoDB: collections come from _adaptiveCollection (parse/adapter-internals.ts withMongoCollections, mongoCollectionPrefix)', async (t) => {
  t.same(parameters(method(t, MongoStorageAdapter.prototype, '_adaptiveCollection', 'reads on the transaction session')), ['name'], '_adaptiveCollection(name)')
  t.ok(parseSource('Adapters/Storage/Mongo/MongoCollection.js').includes('this._mongoCollection = mongoCollection'), "MongoCollection keeps the driver's collection as _mongoCollection")
  t.ok(String(MongoStorageAdapter.prototype.connect).includes('this.database ='), 'connect() sets adapter.database (openOnServer, the validators)')
  const adapter = new MongoStorageAdapter({ uri: 'mongodb://127.0.0.1:9/contract', collectionPrefix: 'p_' } as never)
  t.equal(mongoCollectionPrefix(adapter), 'p_', 'mongoCollectionPrefix(adapter) reads the prefix Parse was given')
  t.equal(mongoCollectionPrefix({}), '', "and '' on an adapter without one")
  // withMongoCollections: Parse's own methods open collections through this._adaptiveCollection and use its _mongoCollection.
  const adapterSource = parseSource('Adapters/Storage/Mongo/MongoStorageAdapter.js')
  t.match(adapterSource, /this\._adaptiveCollection\(className\)\.then\(collection => collection\.find\(/, 'find opens its collection through this._adaptiveCollection (what withMongoCollections replaces on a view)')
  const stand = { find: () => 'driver find' }
  const view = withMongoCollections({ _adaptiveCollection: async () => ({ _mongoCollection: stand }) }, (collection) => ({ ...collection, find: () => 'wrapped find' }) as never)
  t.equal(((await (view as unknown as { _adaptiveCollection (name: string): Promise<{ _mongoCollection: typeof stand }> })._adaptiveCollection('X'))._mongoCollection).find(), 'wrapped find', 'a view hands out the wrapped driver collection')
  // takeSchemaStreamSlot: the adapter keeps its schema change stream as this._stream.
  t.match(adapterSource, /if \(!this\._stream && this\.enableSchemaHooks\) \{\s*this\._stream = collection\._mongoCollection\.watch\(\);/, 'Parse opens the schema change stream into this._stream (mongo/schema-stream.ts takes that slot)')
})

t.test('Auth and RestQuery: the calls in access/session.ts, access/roles.ts and storage/query-rows.ts', async (t) => {
  const auth = parameters(AuthModule.Auth)[0]
  for (const name of ['config', 'isMaster', 'user', 'installationId']) t.match(auth, new RegExp(`\\b${name}\\b`), `new Auth({ ${name} })`)
  t.equal(typeof AuthModule.Auth.prototype.getUserRoles, 'function', 'auth.getUserRoles() (access/roles.ts)')
  const session = parameters(AuthModule.getAuthForSessionToken)[0]
  for (const name of ['config', 'sessionToken', 'installationId']) t.match(session, new RegExp(`\\b${name}\\b`), `getAuthForSessionToken({ ${name} })`)
  t.same(parameters(AuthModule.master), ['config'], 'Auth.master(config)')
  t.same(parameters(AuthModule.nobody), ['config'], 'Auth.nobody(config)')
  const rest = parameters(RestQuery)[0]
  for (const name of ['method', 'config', 'auth', 'className', 'restWhere', 'restOptions', 'context']) t.match(rest, new RegExp(`\\b${name}\\b`), `RestQuery({ ${name} })`)
  t.equal((RestQuery as unknown as { Method: Record<string, unknown> }).Method.find !== undefined, true, 'RestQuery.Method.find')
})

t.test('rest.create / rest.update and the in-process controller: parse/direct-writes.ts', async (t) => {
  t.same(parameters(rest.create), ['config', 'auth', 'className', 'restObject', 'context'], 'rest.create(config, auth, className, restObject, context)')
  t.same(parameters(rest.update), ['config', 'auth', 'className', 'restWhere', 'restObject', 'context'], 'rest.update(config, auth, className, restWhere, restObject, context)')
  const classes = parseSource('Routers/ClassesRouter.js')
  t.match(classes, /rest\.default\.create\(req\.config, req\.auth, this\.className\(req\), req\.body \|\| \{\}, req\.info\.context\)/, 'ClassesRouter creates through rest.create with the same arguments')
  t.match(classes, /rest\.default\.update\(req\.config, req\.auth, this\.className\(req\), where, req\.body \|\| \{\}, req\.info\.context\)/, 'ClassesRouter updates through rest.update with the same arguments')
  const controller = parseSource('ParseServerRESTController.js')
  t.match(controller, /function handleRequest\(method, path, data = \{\}, options = \{\}, config\)/, 'the directAccess controller\'s request is handleRequest(method, path, data, options, config)')
  t.match(controller, /const installationId = options\.installationId \|\| 'cloud'/, 'its Auth carries installationId \'cloud\' by default')
  const database = parseSource('Controllers/DatabaseController.js')
  t.match(database, /loadSchema\(options = \{\s*clearCache: false\s*\}\) \{\s*if \(this\.schemaPromise != null\)/, 'DatabaseController#loadSchema(options) keeps only the load in flight (schemaPromise)')
})

t.test('a create\'s RestWrite steps: parse/lean-create.ts runs the ordinary ones', async (t) => {
  const restSource = parseSource('rest.js')
  t.match(restSource, /function create\(config, auth, className, restObject, context\) \{\s*enforceRoleSecurity\('create', className, auth, config\);\s*var write = new RestWrite\(config, auth, className, null, restObject, null, context\);\s*return write\.execute\(\);\s*\}/,
    'rest.create = enforceRoleSecurity, then new RestWrite(config, auth, className, null, restObject, null, context).execute()')
  t.same(parameters(RestWrite), ['config', 'auth', 'className', 'query', 'data', 'originalData', 'context', 'action'], 'new RestWrite(config, auth, className, query, data, originalData, context, action)')
  t.same(parameters(enforceRoleSecurity), ['method', 'className', 'auth', 'config'], 'SharedRest.enforceRoleSecurity(method, className, auth, config)')
  const source = parseSource('RestWrite.js')
  const execute = /RestWrite\.prototype\.execute = function \(\) \{([\s\S]*?)\n\};/.exec(source)?.[1] ?? ''
  const steps = [...execute.matchAll(/return this\.(\w+)\(\);/g)].map((match) => match[1])
  t.same(steps, ['getUserAndRoleACL', 'validateClientClassCreation', 'handleInstallation', 'handleSession', 'validateAuthData', 'checkRestrictedFields', 'runBeforeSaveTrigger', 'ensureUniqueAuthDataId', 'deleteEmailResetTokenIfNeeded', 'validateSchema', 'setRequiredFieldsIfNeeded', 'validateCreatePermission', 'transformUser', 'expandFilesForExistingObjects', 'destroyDuplicatedSessions', 'runDatabaseOperation', 'createSessionTokenIfNeeded', 'handleFollowup', 'runAfterSaveTrigger', 'cleanUserAuthData', 'filterProtectedFieldsInResponse'],
    'RestWrite#execute chains these 21 steps, in this order')
  t.same(steps.filter((step) => !CLASS_SPECIFIC_STEPS.includes(step as never)), [...ORDINARY_CREATE_STEPS], 'lean-create runs the others, in the same order')
  t.match(execute, /return this\.validateSchema\(\);\s*\}\)\.then\(schemaController => \{\s*this\.validSchemaController = schemaController;/, 'execute keeps validateSchema\'s answer as validSchemaController')
  t.match(execute, /this\.authDataResponse[\s\S]*this\.storage\.rejectSignup && this\.config\.preventSignupWithUnverifiedEmail[\s\S]*return this\.response;/, 'its tail adds authDataResponse and refuses unverified sign-ups, then answers this.response')
  // Each left-out step returns at once for a class other than Parse's own.
  const guards: Record<string, RegExp> = {
    handleInstallation: /if \(this\.response \|\| this\.className !== '_Installation'\) \{\s*return;/,
    handleSession: /if \(this\.response \|\| this\.className !== '_Session'\) \{\s*return;/,
    validateAuthData: /if \(this\.className !== '_User'\) \{\s*return;/,
    checkRestrictedFields: /if \(this\.className !== '_User'\) \{\s*return;/,
    ensureUniqueAuthDataId: /if \(this\.className !== '_User' \|\| !this\.data\.authData\) \{\s*return;/,
    deleteEmailResetTokenIfNeeded: /if \(this\.className !== '_User' \|\| this\.query === null\) \{[^}]*return;/,
    transformUser: /var promise = Promise\.resolve\(\);\s*if \(this\.className !== '_User'\) \{\s*return promise;/,
    destroyDuplicatedSessions: /if \(this\.className != '_Session' \|\| this\.query\) \{\s*return;/,
    createSessionTokenIfNeeded: /if \(this\.className !== '_User'\) \{\s*return;/,
    cleanUserAuthData: /if \(this\.response && this\.response\.response && this\.className === '_User'\) \{/
  }
  for (const step of CLASS_SPECIFIC_STEPS) {
    const body = new RegExp(`RestWrite\\.prototype\\.${step} = (?:async )?function \\(\\) \\{([\\s\\S]*?)\\n\\};`).exec(source)?.[1] ?? ''
    t.match(body.trimStart().split('\n').slice(0, 4).join('\n'), guards[step], `RestWrite#${step} begins with its class guard`)
  }
})

t.test('a File saved by its name alone: what parse/name-only-files.ts relies on', async (t) => {
  const write = parseSource('RestWrite.js')
  // The fill runs in runBeforeSaveTrigger, the pre-write check in expandFilesForExistingObjects: both before the write (the step order above).
  const files = parseSource('Controllers/FilesController.js')
  t.match(files, /async expandFilesInObject\(config, object\) \{[^]*?for \(const key in object\) \{\s*const fileObject = object\[key\];\s*if \(fileObject && fileObject\['__type'\] === 'File'\) \{\s*if \(fileObject\['url'\]\) \{\s*continue;[^]*?fileObject\['url'\] = await this\.adapter\.getFileLocation\(config, filename\);/,
    'FilesController#expandFilesInObject fills the url of a top-level File without one, through the adapter\'s getFileLocation')
  t.match(write, /RestWrite\.prototype\.expandFilesForExistingObjects = async function \(\) \{\s*\/\/[^\n]*\n\s*if \(this\.response && this\.response\.response\) \{\s*await this\.config\.filesController\.expandFilesInObject\(this\.config, this\.response\.response\);/,
    'Parse fills urls into a short-circuited answer only (a save\'s own data keeps name-only Files)')
  t.match(write, /RestWrite\.prototype\.runAfterSaveTrigger = function \(\) \{\s*if \(!this\.response \|\| !this\.response\.response \|\| this\.runOptions\.many\) \{[^]*?const hasAfterSaveHook = triggers\.triggerExists\(this\.className, triggers\.Types\.afterSave, this\.config\.applicationId\);\s*const hasLiveQuery = this\.config\.liveQueryController\.hasLiveQuery\(this\.className\);[^]*?\} = this\.buildParseObjects\(\);/,
    'runAfterSaveTrigger builds its object through buildParseObjects on the conditions name-only-files.ts repeats')
  t.match(parseSource('triggers.js'), /function triggerExists\(className, type, applicationId\) \{\s*return getTrigger\(className, type, applicationId\) != undefined;/, 'triggerExists is getTrigger != undefined')
  // What is stored for a File is its name alone, so a filled-in url stores nothing different.
  t.match(parseSource('Adapters/Storage/Postgres/PostgresStorageAdapter.js'), /if \(value\.__type === 'File'\) \{\s*return value\.name;/, 'PostgreSQL stores a File as its name')
  t.match(parseSource('Adapters/Storage/Mongo/MongoTransform.js'), /JSONToDatabase\(json\) \{\s*return json\.name;\s*\},\s*isValidJSON\(value\) \{\s*return typeof value === 'object' && value !== null && value\.__type === 'File';/, 'MongoDB stores a File as its name')
  t.throws(() => new Parse.Object('Thing').set('file', Parse.File.fromJSON({ __type: 'File', name: 'a.txt' })).toJSON(), /unsaved file/, 'the SDK cannot encode an object holding a File without url')
})

t.test('the denylist scan parse/keyword-scan.ts stands in for (Utils.objectContainsKeyValue)', async (t) => {
  const utils = parseSource('Utils.js')
  t.match(utils, /static checkProhibitedKeywords\(config, data\) \{\s*if \(config\?\.requestKeywordDenylist\) \{[^]*?for \(const keyword of config\.requestKeywordDenylist\) \{\s*const match = Utils\.objectContainsKeyValue\(data, keyword\.key, keyword\.value\);/,
    'checkProhibitedKeywords calls Utils.objectContainsKeyValue(data, keyword.key, keyword.value) through the class, keyword by keyword')
  const scan = /static objectContainsKeyValue\(obj, key, value\) \{([^]*?)\n {2}\}\n/.exec(utils)?.[1] ?? ''
  t.match(scan, /const isMatch = \(a, b\) => typeof a === 'string' && new RegExp\(b\)\.test\(a\) \|\| a === b;/, 'the match rule: a string against new RegExp(pattern), anything by ===')
  t.match(scan, /const stack = \[obj\];\s*const seen = new WeakSet\(\);\s*while \(stack\.length > 0\) \{\s*const current = stack\.pop\(\);\s*if \(seen\.has\(current\)\) \{\s*continue;\s*\}\s*seen\.add\(current\);\s*for \(const \[k, v\] of Object\.entries\(current\)\) \{/, 'the walk: a stack, each object once, its own entries')
  t.match(scan, /if \(key !== undefined && value === undefined && isKeyMatch\(k\)\) \{\s*return true;\s*\} else if \(key === undefined && value !== undefined && isValueMatch\(v\)\) \{\s*return true;\s*\} else if \(key !== undefined && value !== undefined && isKeyMatch\(k\) && isValueMatch\(v\)\) \{\s*return true;\s*\}\s*if \(\['\[object Object\]', '\[object Array\]'\]\.includes\(Object\.prototype\.toString\.call\(v\)\)\) \{\s*stack\.push\(v\);/,
    'a key, a value or a pair; then objects and arrays (by their tag) are walked')
  t.equal(scan.match(/return /g)?.length, 4, 'it answers true at the first match and false after the walk, nothing else')
})

t.test('a write\'s view of a shared SchemaController (parse/reused-schema.ts writeView)', async (t) => {
  const schema = parseSource('Controllers/SchemaController.js')
  const controller = /class SchemaController \{([^]*?)\n\}\n/.exec(schema)?.[1] ?? ''
  t.ok(controller.length > 1000, 'the SchemaController class is found')
  t.notMatch(controller, /this\.#/, 'no private fields: a view made with Object.create reaches every member')
  t.same([...schema.matchAll(/schemaData(?:\[[^\]]*\])?(?:\.\w+)* = /g)].map((match) => match[0]), ['schemaData = ', 'schemaData = ', 'schemaData = '],
    'the schema data is only ever replaced whole (this.schemaData = new SchemaData(…)), never edited in place')
  t.match(schema, /reloadData\(options = \{\s*clearCache: false\s*\}\) \{\s*if \(this\.reloadDataPromise && !options\.clearCache\) \{/, 'reloadData parks its promise on the controller (the view\'s own)')
  const database = parseSource('Controllers/DatabaseController.js')
  t.match(database, /if \(key\.startsWith\('userField:'\)\) \{[^]*?serverOnlyKeys\.push\(fieldName\);[^]*?if \(serverOnlyKeys\.length > 0\) \{\s*perms\.protectedFields\.temporaryKeys = serverOnlyKeys;/, 'only protected fields by pointer edit the permissions in place (temporaryKeys; reused-schema.ts shares no controller then)')
})

t.test('role loads shared while they run (parse/shared-role-loads.ts): what Auth#_loadRoles leaves on its Auth', async (t) => {
  const auth = parseSource('Auth.js')
  t.match(auth, /if \(this\.rolePromise\) \{\s*return this\.rolePromise;\s*\}\s*this\.rolePromise = this\._loadRoles\(\);\s*return this\.rolePromise;/, 'getUserRoles loads through this._loadRoles() (on the prototype), once per Auth')
  const load = /Auth\.prototype\._loadRoles = async function \(\) \{([^]*?)\n\};/.exec(auth)?.[1] ?? ''
  t.match(load, /const cachedRoles = await this\.cacheController\.role\.get\(this\.user\.id\);\s*if \(cachedRoles != null\) \{\s*this\.fetchedRoles = true;\s*this\.userRoles = cachedRoles;\s*return cachedRoles;/, 'a cache hit leaves fetchedRoles and userRoles, keyed by the user\'s id alone')
  t.match(load, /this\.fetchedRoles = true;\s*this\.rolePromise = null;\s*this\.cacheRoles\(\);\s*return this\.userRoles;\s*$/, 'a load leaves userRoles, fetchedRoles and rolePromise = null, and fills the cache')
  t.equal(typeof (AuthModule.Auth.prototype as unknown as Record<string, unknown>).getRolesForUser, 'function', 'Auth#getRolesForUser (the first query of a load)')
  // parse/shared-loads.ts counts the drops of Parse's cache entries (revocations) through SubCache's prototype.
  const cache = parseSource('Controllers/CacheController.js')
  t.match(cache, /this\.role = new SubCache\('role', this\);\s*this\.user = new SubCache\('user', this\);/, 'the role and user caches are SubCaches')
  for (const name of ['del', 'clear']) t.equal(typeof (SubCache.prototype as unknown as Record<string, unknown>)[name], 'function', `SubCache#${name} (a drop)`)
  t.match(parseSource('RestWrite.js'), /if \(this\.className === '_Role'\) \{\s*this\.config\.cacheController\.role\.clear\(\);/, 'a _Role write drops the role cache through SubCache#clear')
  t.match(parseSource('rest.js'), /cacheAdapter\.user\.del\(firstResult\.sessionToken\);/, 'a _Session delete drops its cached user through SubCache#del')
})

t.test('the Parse SDK\'s encoder: what createRow sends (parse/internals.ts encodeForSave)', async (t) => {
  const pointer = Parse.Object.fromJSON({ className: 'Thing', objectId: 'abc', label: 'fetched' })
  t.same(encodeForSave({ thing: pointer, when: new Date('2024-01-02T03:04:05.006Z'), acl: new Parse.ACL({ u1: { read: true } }) }), {
    thing: { __type: 'Pointer', className: 'Thing', objectId: 'abc' },
    when: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' },
    acl: { u1: { read: true } }
  }, 'a fetched object goes as a pointer (forcePointers), dates and ACLs in REST JSON, as SetOp#toJSON sends them')
  t.match(readFileSync(require.resolve('parse/lib/node/ParseOp.js'), 'utf8'), /return \(0, _encode\.default\)\(this\._value, false, true(?:, undefined, offline)?\);/, 'the SDK\'s SetOp#toJSON encodes with (value, false, true)')
})

t.test('the adapter read (parse/adapter-read.ts) takes the steps Parse\'s RestQuery and DatabaseController take for a plain read', async (t) => {
  const database = parseSource('Controllers/DatabaseController.js')
  t.match(database, /function addReadACL\(query, acl\) \{\s*const newQuery = [^;]*cloneDeep\(query\);[^]*?newQuery\._rperm = \{\s*\$in: \[null, '\*', \.\.\.acl\]\s*\};\s*return newQuery;/, 'addReadACL: the row ACL is _rperm $in [null, \'*\', ...aclGroup]')
  t.match(database, /const untransformObjectACL = \(\{\s*_rperm,\s*_wperm,\s*\.\.\.output\s*\}\) => \{\s*if \(_rperm \|\| _wperm\) \{\s*output\.ACL = \{\};/, 'untransformObjectACL: the ACL comes after the other keys, built from _rperm then _wperm')
  t.match(database, /for \(const key in object\) \{\s*if \(key\.charAt\(0\) === '_'\) \{\s*delete object\[key\];/, 'filterSensitiveData drops every column whose name starts with _')
  t.match(database, /return this\.adapter\.count\(className, schema, query, readPreference, undefined, hint, comment\);/, 'a count is adapter.count(className, schema, query, readPreference, undefined, hint, comment)')
  t.match(database, /const queryOptions = \{\s*skip,\s*limit,\s*sort,\s*keys,\s*readPreference,\s*hint,\s*caseInsensitive: [^,]*,\s*explain,\s*comment\s*\};/, 'a find passes the adapter { skip, limit, sort, keys, readPreference, hint, caseInsensitive, explain, comment }')
  t.match(database, /op = op \|\| \(typeof query\.objectId == 'string' && Object\.keys\(query\)\.length === 1 \? 'get' : 'find'\);/, 'a query on objectId alone is checked as a get')
  t.match(database, /addPointerPermissions\(schema, className, operation, query, aclGroup = \[\]\) \{\s*\/\/ Check if class has public permission for operation\s*\/\/ If the BaseCLP pass, let go through\s*if \(schema\.testPermissionsForClassName\(className, aclGroup, operation\)\) \{\s*return query;/, 'pointer permissions change nothing when testPermissionsForClassName grants the operation')
  const restQuery = parseSource('RestQuery.js')
  t.match(restQuery, /this\.findOptions\.acl = \['\*'\];\s*if \(this\.auth\.user\) \{\s*return this\.auth\.getUserRoles\(\)\.then\(roles => \{\s*this\.findOptions\.acl = this\.findOptions\.acl\.concat\(roles, \[this\.auth\.user\.id\]\);/, 'the ACL group is [\'*\', ...roles, user id]')
  t.match(restQuery, /await this\.config\.filesController\.expandFilesInObject\(this\.config, results\);/, 'RestQuery expands file URLs with filesController.expandFilesInObject(config, results)')
  t.match(restQuery, /this\.findOptions\.count = true;\s*delete this\.findOptions\.skip;\s*delete this\.findOptions\.limit;/, 'the count drops skip and limit')
  t.match(restQuery, /runBeforeFind \? await triggers\.maybeRunQueryTrigger\(triggers\.Types\.beforeFind/, 'RestQuery runs beforeFind (the adapter read leaves classes with one to Parse)')
  const controller = SchemaRules.SchemaController.prototype as unknown as Record<string, unknown>
  t.same(parameters(method(t, controller, 'testPermissionsForClassName', 'the class-level grant')), ['className', 'aclGroup', 'operation'], 'testPermissionsForClassName(className, aclGroup, operation)')
  t.same(parameters(method(t, controller, 'getClassLevelPermissions', 'protected fields')), ['className'], 'getClassLevelPermissions(className)')
  t.same(parameters(method(t, controller, 'getOneSchema', 'the class schema')).slice(0, 2), ['className', 'allowVolatileClasses'], 'getOneSchema(className, allowVolatileClasses)')
  t.same(parameters(method(t, parseSourceModule('Controllers/FilesController.js').FilesController.prototype, 'expandFilesInObject', 'file URLs')), ['config', 'object'], 'FilesController#expandFilesInObject(config, object)')
})

t.test('the password stamp Parse does not await at login: parse/password-stamp.ts', async (t) => {
  t.same(parameters(DatabaseController.prototype.update).slice(0, 3), ['className', 'query', 'update'], 'DatabaseController#update(className, query, update, …) is what the guard wraps')
  const users = parseSource('Routers/UsersRouter.js')
  t.match(users, /\n\s*req\.config\.database\.update\('_User', \{\s*username: user\.username\s*\}, \{\s*_password_changed_at: [^}]*\}\);/, 'UsersRouter stamps with update(\'_User\', {username}, {_password_changed_at}) and nothing more, without awaiting it')
  t.equal(typeof parseLogger().warn, 'function', 'getLogger().warn (the lost stamp is logged)')
})

t.test("parse/name-rules.ts answers as Parse's SchemaController (declaring a model does not load Parse)", async (t) => {
  t.same(parseSystemClasses(), SchemaRules.systemClasses, "the system classes, in Parse's order")
  const names = [
    ...SchemaRules.systemClasses, 'Note', 'note_2', 'N', '_Note', '2Note', 'No-te', 'No te', '', 'length', 'Length', 'className', 'objectId', 'ACL',
    '_Join:tags:Note', '_Join:tags', '_Join::Note', '_Join:a:B:c', '_Hooks', '_GlobalConfig', '_SCHEMA', 'role:Admin', '*', 'é', 'Note\n', 'constructor', '__proto__'
  ]
  for (const name of names) {
    t.equal(parseAcceptsClassName(name), SchemaRules.classNameIsValid(name), `class name ${JSON.stringify(name)}`)
    t.equal(parseAcceptsFieldName(name), SchemaRules.fieldNameIsValid(name), `field name ${JSON.stringify(name)}`)
    for (const className of ['Note', '_Hooks', '_User', '']) {
      t.equal(parseAcceptsFieldName(name, className), SchemaRules.fieldNameIsValid(name, className), `field name ${JSON.stringify(name)} of ${JSON.stringify(className)}`)
    }
  }
})

t.test('SchemaController: the name rules and the schema lock (model/*.ts)', async (t) => {
  t.same(parameters(SchemaRules.classNameIsValid), ['className'], 'classNameIsValid(className) (model/class-options.ts, schema-boot.ts)')
  t.same(parameters(SchemaRules.fieldNameIsValid), ['fieldName', 'className'], 'fieldNameIsValid(fieldName, className) (model/field-options.ts, schema-boot.ts)')
  t.ok(Array.isArray(SchemaRules.systemClasses), 'systemClasses is a list (class-options.ts names them)')
  t.type(SchemaRules.defaultColumns._Default, 'object', 'defaultColumns._Default (schema-boot.ts, schema-lock.ts)')
  const controller = SchemaRules.SchemaController.prototype as unknown as Record<string, unknown>
  t.same(parameters(method(t, controller, 'enforceClassExists', 'schema-lock.ts wraps it')), ['className'], 'enforceClassExists(className)')
  t.same(parameters(method(t, controller, 'enforceFieldExists', 'schema-lock.ts wraps it')).slice(0, 3), ['className', 'fieldName', 'type'], 'enforceFieldExists(className, fieldName, type, …)')
  t.same(parameters(method(t, controller, 'getExpectedType', 'schema-lock.ts')), ['className', 'fieldName'], 'getExpectedType(className, fieldName)')
  t.equal(typeof parseLogger().error, 'function', 'getLogger().error (schema-boot.ts watches migration failures)')
  t.equal(isParseDefaultColumn('Note', 'objectId'), true, 'isParseDefaultColumn: defaultColumns._Default gives every class objectId')
  t.equal(isParseDefaultColumn('_User', 'username'), true, "isParseDefaultColumn: defaultColumns._User holds Parse's own user fields")
  t.equal(isParseDefaultColumn('Note', 'title'), false, 'isParseDefaultColumn: a declared field is not Parse\'s')
})

t.test('Defined Schemas and the MongoDB index list refresh: the writes parse/unchanged-schema.ts skips when they change nothing', async (t) => {
  const migration = DefinedSchemas.prototype as unknown as Record<string, unknown>
  t.same(parameters(method(t, migration, 'updateSchemaToDB', 'unchanged-schema.ts wraps it')), ['schema'], 'updateSchemaToDB(schema)')
  t.same(parameters(method(t, migration, 'resetSchemaOps', 'unchanged-schema.ts calls it for a skipped write')), ['schema'], 'resetSchemaOps(schema)')
  const source = parseSource('SchemaMigrations/DefinedSchemas.js')
  t.match(source, /this\.allCloudSchemas = await schemaController\.getAllClasses\(\);/, 'each run reads the stored schemas into allCloudSchemas first')
  t.match(source, /fields: schema\._fields,\s*indexes: schema\._indexes,\s*classLevelPermissions: schema\._clp\s*\};\s*await \(0, _SchemasRouter\.internalUpdateSchema\)/, 'updateSchemaToDB sends _fields, _indexes and _clp, and nothing else')
  t.equal((source.match(/await this\.updateSchemaToDB\(/g) ?? []).length, 5, 'every update goes through updateSchemaToDB (updateSchema four times, enforceCLPForNonProvidedClass once)')
  t.same(parameters(method(t, migration, 'handleCLP', 'add-field-permission.ts wraps it')), ['localSchema', 'newLocalSchema', 'cloudSchema'], 'handleCLP(localSchema, newLocalSchema, cloudSchema)')
  t.match(source, /clp\.addField = \{\};\s*newLocalSchema\.setCLP\(clp\);/, 'handleCLP closes addField, then sets the permissions whole (add-field-permission.ts puts back a given one)')
  t.match(source, /this\.handleCLP\(schema, parseSchema\);\s*await this\.updateSchemaToDB\(parseSchema\);/, 'enforceCLPForNonProvidedClass writes a stored class no definition lists with its own stored permissions through handleCLP')
  const schema = new Parse.Schema('Contract') as unknown as Record<string, unknown> & { setCLP (clp: unknown): void }
  schema.setCLP({ find: {} })
  t.same(Object.keys(schema).sort(), ['_clp', '_fields', '_indexes', 'className'], 'the SDK\'s Parse.Schema keeps its pending operations in _fields, _indexes and _clp')
  for (const adapter of ['Adapters/Storage/Postgres/PostgresStorageAdapter.js', 'Adapters/Storage/Mongo/MongoSchemaCollection.js']) {
    const empty = /const emptyCLPS = Object\.freeze\(\{([\s\S]*?)\}\);/.exec(parseSource(adapter))?.[1] ?? ''
    const keys = [...empty.matchAll(/(\w+): \{\}/g)].map((match) => match[1])
    t.same(keys.sort(), [...READ_AS_EMPTY].sort(), `${adapter}: the permissions read back as {} when stored without them (emptyCLPS)`)
    t.match(parseSource(adapter), /\.\.\.emptyCLPS,\s*\.\.\.[\w.]+\b/, `${adapter}: stored permissions are read over emptyCLPS`)
  }
  const mongo = parseSource('Adapters/Storage/Mongo/MongoStorageAdapter.js')
  t.match(mongo, /updateSchemaWithIndexes\(\) \{\s*return this\.getAllClasses\(\)\.then\(classes => \{\s*const promises = classes\.map\(schema => \{\s*return this\.setIndexesFromMongo\(schema\.className\);/, 'MongoDB: updateSchemaWithIndexes reads every class through this.getAllClasses() and refreshes each with this.setIndexesFromMongo')
  t.match(mongo, /return this\._schemaCollection\(\)\.then\(schemaCollection => schemaCollection\.updateSchema\(className, \{\s*\$set: \{\s*'_metadata\.indexes': indexes\s*\}\s*\}\)\);/, 'MongoDB: setIndexesFromMongo stores the list through this._schemaCollection().updateSchema(className, { $set: { _metadata.indexes } })')
  t.match(parseSource('Controllers/DatabaseController.js'), /await this\.adapter\.updateSchemaWithIndexes\(\);/, 'DatabaseController#performInitialization calls updateSchemaWithIndexes')
})

t.test('triggers and RedisPubSub: the cluster wiring (cluster/role-evictions.ts, live-query-pubsub.ts)', async (t) => {
  t.equal(triggers.Types.afterSave, 'afterSave', 'Types.afterSave')
  t.equal(triggers.Types.afterDelete, 'afterDelete', 'Types.afterDelete')
  t.same(parameters(triggers.getTrigger), ['className', 'triggerType', 'applicationId'], 'getTrigger(className, triggerType, applicationId)')
  t.equal(parameters(triggers.getValidator).length, 2, 'getValidator(name, applicationId)')
  t.same(parameters(triggers.removeTrigger), ['type', 'className', 'applicationId'], 'removeTrigger(type, className, applicationId)')
  t.same(parameters(triggers.addTrigger).slice(0, 4), ['type', 'className', 'handler', 'applicationId'], 'addTrigger(type, className, handler, applicationId, validator)')
  t.same(parameters(triggers.getJob), ['jobName', 'applicationId'], 'getJob(jobName, applicationId) (parse-calls.ts jobStatusWriter)')
  t.same(parameters(triggers._unregisterAll), [], '_unregisterAll() (parse-calls.ts forgetCloudCode)')
  t.equal(typeof RedisPubSub.createPublisher, 'function', 'RedisPubSub.createPublisher(config)')
  t.equal(typeof RedisPubSub.createSubscriber, 'function', 'RedisPubSub.createSubscriber(config)')
})

t.test('LiveQuery: the maps parse/live-query-stats.ts counts (the metrics option)', async (t) => {
  const server = readFileSync(require.resolve('parse-server/lib/LiveQuery/ParseLiveQueryServer.js'), 'utf8')
  const client = readFileSync(require.resolve('parse-server/lib/LiveQuery/Client.js'), 'utf8')
  t.match(server, /this\.clients = new Map\(\)/, 'ParseLiveQueryServer#clients: a Map of the open connections')
  t.match(server, /this\.clients\.set\(parseWebsocket\.clientId, client\)/, 'one entry per connected client')
  t.match(client, /this\.subscriptionInfos = new Map\(\)/, 'Client#subscriptionInfos: a Map of its subscriptions')
  t.match(client, /this\.subscriptionInfos\.set\(requestId, subscriptionInfo\)/, 'one entry per subscription')
  const { liveQueryStats } = await import('../lib/parse/live-query-stats.js')
  const clients = new Map([[1, { subscriptionInfos: new Map([[1, {}], [2, {}]]) }], [2, { subscriptionInfos: new Map() }]])
  t.same(liveQueryStats({ clients }), { connections: 2, subscriptions: 2 })
  t.same(liveQueryStats({}), { connections: 0, subscriptions: 0 }, 'a server without the map counts nothing rather than failing')
})

t.test('the Parse SDK: private members the kit calls (routing/register.ts, parse/save-json.ts)', async (t) => {
  t.equal(typeof (Parse as unknown as Record<string, unknown>)._encode, 'function', 'Parse._encode(value) encodes a declared function result as Parse.Cloud.run expects')
  t.equal(typeof (Parse.Object.prototype as unknown as Record<string, unknown>)._getSaveJSON, 'function', 'Parse.Object#_getSaveJSON() is extended to send the version field')
  t.match(readFileSync(require.resolve('parse/lib/node/ParseObject.js'), 'utf8'), /const body = this\._getSaveJSON\(\);/, "the SDK's save builds its body with this._getSaveJSON()")
  class Extended extends Parse.Object { constructor () { super('Extended') } }
  extendSaveJSON(Extended, (_object, json) => { json.added = 1 })
  const object = new Extended()
  object.set('n', 2)
  t.same((object as unknown as { _getSaveJSON (): unknown })._getSaveJSON(), { n: 2, added: 1 }, "extendSaveJSON adds to the SDK's own save JSON")
  t.equal(typeof Parse.CoreManager.get, 'function', "Parse.CoreManager.get('APPLICATION_ID') names the running app")
})

t.test('jobs: how Parse runs a job, which lib/jobs/ builds on (handler.ts, scheduler.ts)', async (t) => {
  const functions = parseSource('Routers/FunctionsRouter.js')
  t.match(functions, /request\.jobId = jobStatus\.objectId;/, 'handleCloudJob gives the job function its _JobStatus id as request.jobId')
  t.match(functions, /\.then\(result => \{\s*jobHandler\.setSucceeded\(result\);\s*\}, error => \{\s*jobHandler\.setFailed\(error\);\s*\}\)/,
    'Parse writes the final status only when the job\'s promise settles, and awaits nothing of it (the kit writes it and never settles that promise)')
  t.match(functions, /'X-Parse-Job-Status-Id': jobStatus\.objectId/, 'the answer carries the id in X-Parse-Job-Status-Id')
  const controller = parseSource('ParseServerRESTController.js')
  t.match(controller, /_headers: headers/, 'the in-process controller returns the headers with returnStatus, so Parse.Cloud.startJob resolves to the id under directAccess')
  const status = parseSource('StatusHandler.js')
  t.match(status, /setFinalStatus = function \(status, message = undefined\) \{\s*const finishedAt = new Date\(\);/, 'the final status Parse would write: status, finishedAt, message (what handler.ts writes)')
})

t.test('the REST protocol fields credentials.ts reads the way Parse does', async (t) => {
  const middlewares = parseSource('middlewares.js')
  for (const field of ['_method', '_ApplicationId', '_JavaScriptKey', '_SessionToken', '_MasterKey', '_InstallationId']) {
    t.ok(middlewares.includes(field), `Parse's middlewares read ${field} from the body`)
  }
})

t.test('a running kit: instances hold what the kit reads', async (t) => {
  const kit = await startKit(t, { indexes: false })
  const server = kit.app.kit.parse.server as unknown as Record<string, unknown>
  const controller = Parse.CoreManager.getRESTController() as unknown as Record<symbol, unknown>
  t.equal(controller[Symbol.for('fastify-parse-kit.direct-writes')], true, 'directAccess installed Parse\'s handleRequest controller, and parse/direct-writes.ts wrapped it')
  t.equal(typeof server.handleShutdown, 'function', 'ParseServer#handleShutdown() (host/parse-server.ts)')
  t.equal(typeof server.start, 'function', 'ParseServer#start() (host/parse-server.ts)')
  t.equal(typeof ParseServer.createLiveQueryServer, 'function', 'ParseServer.createLiveQueryServer (host/live-query.ts)')
  // parse/push-without-adapter.ts: ParseServer#start takes getPushController from the module's exports object.
  t.not(Controllers.getPushController, parseGetPushController(), 'the kit replaced getPushController on Controllers/index.js')
  t.equal(ParseUtils.objectContainsKeyValue, installedScan, 'the kit replaced Utils.objectContainsKeyValue with its compiled-pattern scan (parse/keyword-scan.ts)')
  const loadedFiles = Object.keys(createRequire(import.meta.url).cache)
  t.notOk(loadedFiles.some((file) => file.includes('/firebase-admin/')), 'started without a push option, Parse did not load @parse/push-adapter (firebase-admin)')

  // host/parse-routes.ts reads the Express app's router stack (parse/express-app.ts expressRouterStack).
  const stack = expressRouterStack(kit.app.kit.parse.app) as Array<{ route?: { path: unknown, methods: unknown }, handle?: { stack?: unknown } }>
  t.ok(Array.isArray(stack), "expressRouterStack: Parse's Express app exposes router.stack")
  const nested = stack.filter((layer) => Array.isArray(layer.handle?.stack)).flatMap((layer) => layer.handle!.stack as typeof stack)
  const routes = nested.filter((layer) => layer.route && typeof layer.route.path === 'string' && typeof layer.route.methods === 'object')
  t.ok(routes.some((layer) => layer.route!.path === '/classes/:className'), 'Parse mounts its routers at the root: layer.handle.stack holds route.path and route.methods')

  // access/parse-config.ts parseConfig, access/session.ts and model/schema-lock.ts.
  const config = parseConfig(APP_ID)
  t.ok(config.database, 'Config.get(appId).database')
  t.ok(config.database.adapter, 'Config.get(appId).database.adapter')
  t.ok((await config.database.loadSchema()).schemaData, 'a SchemaController holds schemaData (schema-lock.ts)')
  // parse/parse-calls.ts jobStatusWriter and endJobRun write _JobStatus rows as Parse's jobStatusHandler does.
  const statusHandler = parseSource('StatusHandler.js')
  t.match(statusHandler, /const handler = statusHandler\(JOB_STATUS_COLLECTION, database\);/, 'jobStatusHandler writes through config.database (no RestWrite), as endJobRun does')
  t.match(parseSource('Routers/FunctionsRouter.js'), /return jobHandler\.setRunning\(jobName\)\.then\(jobStatus => \{\s*request\.jobId = jobStatus\.objectId;\s*\/\/ run the function async\s*process\.nextTick/, 'POST /jobs writes the running row, then runs the job on the next tick (what the start of jobStatusWriter does in process)')
  // DatabaseController#update(className, query, update, …): checked above, where the guard wraps it.
  t.same(parameters((DatabaseController.prototype as unknown as { create: unknown }).create).slice(0, 2), ['className', 'object'], 'DatabaseController#create(className, object, …)')
  // parse/parse-calls.ts jobStatusWriter: _JobStatus's schema read once, its rows written straight by the storage adapter.
  const jobStatusController = await (await config.database.loadSchema()).enforceClassExists('_JobStatus') as unknown as { getOneSchema (className: string, volatile: boolean): Promise<{ fields: Record<string, unknown> }> }
  t.ok((await jobStatusController.getOneSchema('_JobStatus', true)).fields.params, 'SchemaController#enforceClassExists answers the controller; getOneSchema(className, allowVolatileClasses) has _JobStatus.params')
  t.equal(typeof (SchemaRules as unknown as { convertSchemaToAdapterSchema: unknown }).convertSchemaToAdapterSchema, 'function', 'SchemaController exports convertSchemaToAdapterSchema(schema)')
  // The class's methods (the kit wraps the instance's writes: storage/adapter.ts).
  const storage = Object.getPrototypeOf(config.database.adapter) as Record<string, (...args: unknown[]) => unknown>
  t.same(parameters(storage.createObject), ['className', 'schema', 'object', 'transactionalSession'], 'adapter.createObject(className, schema, object, transactionalSession)')
  t.same(parameters(storage.updateObjectsByQuery), ['className', 'schema', 'query', 'update', 'transactionalSession'], 'adapter.updateObjectsByQuery(className, schema, query, update, transactionalSession)')
  t.match(parseSource('Controllers/DatabaseController.js'), /return this\.adapter\.createObject\(className, SchemaController\.convertSchemaToAdapterSchema\(schema\), object, this\._transactionalSession\);/, 'DatabaseController.create hands the adapter the converted schema and the object with _rperm/_wperm (what jobStatusWriter writes)')
  t.equal(typeof cryptoUtils.newObjectId, 'function', 'cryptoUtils.newObjectId(size)')
  t.match(cryptoUtils.newObjectId(10), /^[A-Za-z0-9]{10}$/, 'newObjectId makes ids of letters and digits')
  t.equal(typeof config.extendSessionOnUse, 'boolean', 'Config.extendSessionOnUse (access/session.ts takes Parse\'s own path when it is on)')
  t.equal(typeof config.cacheController?.user.get, 'function', 'Config.cacheController.user.get(sessionToken) (access/session.ts reads the cached user)')
  // parse/user-cache.ts reads Parse's default in-memory cache synchronously, under the key Parse's CacheController builds.
  t.ok(config.cacheController!.adapter instanceof InMemoryCacheAdapter, 'the default cacheAdapter is InMemoryCacheAdapter')
  const cacheController = config.cacheController as unknown as { user: { put (key: string, value: unknown): Promise<void>, del (key: string): Promise<void> } }
  await cacheController.user.put('r:contract-token', { objectId: 'contractUser' })
  t.same(userCacheEntryNow(config, 'r:contract-token'), await config.cacheController!.user.get('r:contract-token'), 'the synchronous read finds the entry cacheController.user.get resolves with')
  await cacheController.user.del('r:contract-token')
  t.equal(userCacheEntryNow(config, 'r:contract-token'), null, 'and none once Parse dropped it')
  const user = Parse.User.createWithoutData('contractUser') as Parse.User
  t.equal(new AuthModule.Auth({ config, isMaster: false, user }).user, user, 'new Auth({ user }).user is the user (access/session.ts, storage/query-rows.ts)')
  t.type(await AuthModule.master(config).getUserRoles(), Array, 'Auth.master(config).getUserRoles() answers a list')
  // parse/one-schema-load.ts: the controller's find loads the schema through this.loadSchema().
  let loads = 0
  const ownerOf = (object: object, name: string): PropertyDescriptor | undefined => {
    for (let at: object | null = object; at; at = Object.getPrototypeOf(at)) {
      const descriptor = Object.getOwnPropertyDescriptor(at, name)
      if (descriptor) return descriptor
    }
    return undefined
  }
  t.equal(ownerOf(config.database, 'loadSchema')?.writable, true, 'DatabaseController#loadSchema is writable: one-schema-load.ts assigns its own over it')
  t.not(ownerOf(config.database, 'schemaPromise')?.writable, false, 'DatabaseController#schemaPromise is a plain field (deleted once a load settles)')
  t.equal(ownerOf(config, 'database')?.writable, true, 'Config#database is a writable field')
  // Writable, as Parse's own method is: the view sets its loadSchema over it.
  const counting = Object.create(config.database, {
    loadSchema: { writable: true, value: (...args: unknown[]) => { loads++; return (config.database.loadSchema as (...args: unknown[]) => unknown).apply(config.database, args) } }
  })
  const view = withOneSchemaLoad({ database: counting, applicationId: APP_ID }) as unknown as { database: { find (className: string, query: object, options: object): Promise<unknown> } }
  await view.database.find('_Role', {}, { limit: 1 })
  await view.database.find('_Role', {}, { count: true })
  // fastPaths: false: withOneSchemaLoad hands Parse's config back unchanged, and each step loads for itself.
  if (FAST_PATHS) t.equal(loads, 1, 'DatabaseController#find loads the schema through this.loadSchema(): one load serves a find and a count')
  else t.ok(loads >= 1, `Parse's own chain: the find and the count load the schema themselves (${loads} loads)`)

  const adapter = currentDatabase()!.adapter as unknown as Record<string, Record<string, unknown>>
  if (lane.kind === 'postgres') {
    // parse/adapter-internals.ts on Parse's PostgreSQL adapter (pg-promise's database as _client, its root as _pgp).
    const database = pgDatabase(adapter)!
    t.equal(database, (adapter as unknown as PostgresAdapter)._client, 'pgDatabase(adapter) is adapter._client')
    // storage/postgres/bounded.ts: one pooled connection without the query bound.
    const connection = await database.connect()
    t.equal(typeof connection.done, 'function', 'pgDatabase(adapter).connect() answers a connection with done()')
    t.equal(typeof connection.one, 'function', 'the connection runs queries itself (bounded.ts hands it out through withPgQueries)')
    t.equal(typeof connection.client.connectionParameters?.query_timeout, 'number', 'connection.client.connectionParameters.query_timeout holds the bound')
    let queries = 0
    const counted = new Proxy(connection, {
      get (target, property) {
        const value = Reflect.get(target, property)
        if (property === 'any') queries++
        return typeof value === 'function' ? value.bind(target) : value
      }
    })
    await PostgresStorageAdapter.prototype.find.call(withPgQueries(adapter as unknown as PostgresAdapter, counted), '_Role', { fields: {} }, {}, { limit: 1 })
    t.equal(queries, 1, "withPgQueries: Parse's find runs on the queries given (this._client.any)")
    connection.done()
    // storage/postgres/pool.ts, indexes.ts, check-constraints.ts, session.ts, reads.ts.
    for (const name of ['one', 'none', 'any', 'tx'] as const) t.equal(typeof database[name], 'function', `pgDatabase(adapter).${name}() (pg-promise)`)
    const pool = pgPool(adapter)!
    t.equal(typeof pool.end, 'function', 'pgPool(adapter).end() (pool.ts waits for it)')
    t.equal(typeof pool.on, 'function', 'pgPool(adapter).on()')
    t.equal(typeof pool.totalCount, 'number', 'pgPool(adapter).totalCount')
    t.equal(pool.ending, false, 'pgPool(adapter).ending (pool.ts)')
    t.equal(pool.ended, false, 'pgPool(adapter).ended (pool.ts)')
    t.equal(pgFormatter(adapter)('$1:name', ['Note']), '"Note"', "pgFormatter(adapter) renders with pg-promise's as.format (postgres/indexes.ts and check-constraints.ts print commands)")
    // storage/constraint-violation.ts reads the raw error the adapter's queries raise.
    const client = database
    await client.none('CREATE TEMP TABLE "ContractCheck" ("qty" double precision CONSTRAINT "ContractCheck_qty_check" CHECK ("qty" >= 0))')
    const refused = await client.none('INSERT INTO "ContractCheck" VALUES (-1)').then(() => undefined, (error: unknown) => error as Record<string, unknown>)
    t.match(refused, { code: '23514', constraint: 'ContractCheck_qty_check', table: 'ContractCheck' }, 'a CHECK violation carries SQLSTATE 23514, the constraint and the table')
  } else {
    t.ok(adapter.database, 'adapter.database (mongo/session.ts, the validators)')
    t.equal(mongoCollectionPrefix(adapter), '', 'mongoCollectionPrefix(adapter) (mongo/indexes.ts)')
    const collection = await (adapter as unknown as MongoAdapter)._adaptiveCollection('_SCHEMA')
    t.equal(typeof collection._mongoCollection.findOne, 'function', "_adaptiveCollection(name)._mongoCollection is the driver's collection (mongo/reads.ts through withMongoCollections)")
  }
})

// Last: Parse's own getPushController loads @parse/push-adapter, which the check above expects unloaded.
t.test('push without a push option: what parse/push-without-adapter.ts answers is what Parse answers', async (t) => {
  t.same(parameters(parseGetPushController()), ['options'], 'Controllers.getPushController(options)')
  const source = String(parseGetPushController())
  t.match(source, /const \{\s*scheduledPush,\s*push\s*\} = options/, 'it reads options.push and options.scheduledPush only')
  t.match(source, /hasPushSupport = !!\(pushAdapter && push\)/, 'without push there is no push support, whatever the adapter')
  t.match(source, /new _PushController\.PushController\(\)/, 'new PushController() takes no options')
  t.match(source, /new _PushQueue\.PushQueue\(pushQueueOptions\)/, 'the queue takes push.queueOptions ({} without push)')
  t.match(source, /new _PushWorker\.PushWorker\(pushAdapter, pushQueueOptions\)/, 'the worker takes the adapter and push.queueOptions')
  type Answer = Record<string, unknown>
  const parse = await parseGetPushController()({ scheduledPush: true }) as unknown as Answer
  const kit = await Controllers.getPushController({ scheduledPush: true }) as unknown as Answer
  t.same(Object.keys(kit).sort(), Object.keys(parse).sort(), 'the same members')
  t.same([kit.hasPushSupport, kit.hasPushScheduledSupport], [parse.hasPushSupport, parse.hasPushScheduledSupport], 'no push support, scheduled or not')
  for (const name of ['pushController', 'pushControllerQueue', 'pushWorker']) {
    t.equal((kit[name] as object).constructor, (parse[name] as object).constructor, `${name} is the same class`)
  }
  const channel = (answer: Answer, name: string) => (answer[name] as { channel: unknown }).channel
  t.equal(channel(kit, 'pushWorker'), channel(parse, 'pushWorker'), 'the worker listens on the same channel')
  t.equal(channel(kit, 'pushControllerQueue'), channel(parse, 'pushControllerQueue'), 'the queue publishes on the same channel')
  const stand = { getValidPushTypes: () => ['ios'], send: async () => [] }
  const configured = await Controllers.getPushController({ push: { adapter: stand } }) as unknown as Answer
  t.equal(configured.hasPushSupport, true, "with a push option Parse's own function runs")
  t.equal((configured.pushWorker as { adapter: unknown }).adapter, stand, 'and its worker holds the configured adapter')
})

// Parse Server keeps process-wide state, so a process runs one kit at a time:
// a second registration while one runs is refused with a message saying why;
// closing the first frees the process. And fastify.kit.indexesApplied lets a
// caller wait for the declared indexes instead of polling the catalogue.
// Each registration keeps its state on fastify.kit.state: a kit registered
// after another closed sees none of the first one's settings, cache or lock.
import t from 'tap'
import Fastify from 'fastify'
import {
  BaseModel, CloudFunction, ParseClass, ParseField, addUsersToRole, applyAllIndexes, configureRoleCache, getKitConfig,
  removeUsersFromRole, withTransaction
} from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { kitPlugin } from '../plugin.js'
import { APP_ID, MASTER_KEY, lane, startKit } from './helpers/kit.js'

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
  const sameDatabase = lane.kind === 'mongo' ? { databaseURI: first.app.kit.options.databaseURI } : { dataDir: first.app.kit.options.dataDir }
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

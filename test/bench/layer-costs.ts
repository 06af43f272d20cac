// Where a database endpoint's CPU goes, layer by layer, measured in one
// process as CPU time (process.cpuUsage) over many sequential calls: a
// figure that other load on the machine barely moves, unlike req/s or a
// sampling profile. Each layer adds one part of the stack to the one below:
//   read:  pg → Parse's pool (pg-promise) → Parse's storage adapter → Parse's
//          DatabaseController → RestQuery (queryRows) → the whole declared route (inject)
//   write: Parse's storage adapter → DatabaseController.create → rest.create (RestWrite) → the SDK's
//          save → the whole declared route
// `npx tsx test/bench/layer-costs.ts [iterations]` (default 2000). Not part of `npm run bench`.
import path from 'node:path'
import { rmSync } from 'node:fs'
import Parse from 'parse/node'
import pg from 'pg'
import { buildExampleApp } from '../../fixtures/app.js'
import { Note } from '../../fixtures/models/Note.js'
import { addUsersToRole, createRow, queryRows } from '../../lib/index.js'
import { parseConfig } from '../../lib/access/parse-config.js'
import { parseInternals } from '../../lib/parse/internals.js'
import { createThroughRestWrite } from '../../lib/parse/lean-create.js'
import { freePort } from '../../lib/storage/free-port.js'
import { tempDir } from '../helpers/kit.js'
import { APP_ID, BENCH_ROLE, MASTER_KEY, MOUNT, ROOT, BENCH_DIR, SEEDED_NOTES } from './shared.js'
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { AuthModule, RestQuery, rest } = parseInternals()

const iterations = Number(process.argv[2] ?? 2000)
const dir = tempDir('fpk-layer-costs-')
const port = await freePort()
const app = await buildExampleApp({
  fastify: { logger: { level: 'warn' } },
  kit: {
    appId: APP_ID, masterKey: MASTER_KEY, mountPath: MOUNT, serverURL: `http://127.0.0.1:${port}${MOUNT}`,
    dataDir: path.join(dir, 'postgres'), ephemeralDatabase: true,
    functions: [path.join(ROOT, 'fixtures', 'functions'), path.join(BENCH_DIR, 'functions')]
  }
})
await app.listen({ port, host: '127.0.0.1' })
const master = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }
const config = parseConfig(APP_ID)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const adapter = (config.database as any).adapter
const client = adapter._client

const signUp = await fetch(`http://127.0.0.1:${port}${MOUNT}/users`, { method: 'POST', headers: { ...master, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'costs', password: 'costs-password-1' }) })
const user = await signUp.json() as { objectId: string }
const login = await fetch(`http://127.0.0.1:${port}${MOUNT}/login`, { method: 'POST', headers: { ...master, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'costs', password: 'costs-password-1' }) })
const { sessionToken } = await login.json() as { sessionToken: string }
await addUsersToRole(BENCH_ROLE, [user.objectId])
await client.none('DELETE FROM "Note"')
const sessionUser = Parse.User.fromJSON({ className: '_User', objectId: user.objectId, sessionToken }) as Parse.User
for (let i = 0; i < SEEDED_NOTES; i++) {
  await new Note().save({ title: `Seeded note ${i}`, body: 'Seeded.', status: 'published', views: 0 }, { useMasterKey: true })
}

type Layer = [label: string, op: () => Promise<unknown>]

/** CPU µs per call of each layer: three interleaved rounds after a warm-up, the median reported. */
async function costs (layers: Layer[]): Promise<void> {
  const rounds: number[][] = layers.map(() => [])
  for (const [, op] of layers) for (let i = 0; i < Math.min(300, iterations); i++) await op()
  for (let round = 0; round < 3; round++) {
    for (const [index, [, op]] of layers.entries()) {
      const before = process.cpuUsage()
      for (let i = 0; i < iterations; i++) await op()
      const used = process.cpuUsage(before)
      rounds[index].push((used.user + used.system) / iterations)
    }
  }
  for (const [index, [label]] of layers.entries()) {
    const sorted = rounds[index].sort((a, b) => a - b)
    process.stdout.write(`${label.padEnd(62)} ${sorted[1].toFixed(0).padStart(6)} µs CPU per call (rounds ${sorted.map((us) => us.toFixed(0)).join(', ')})\n`)
  }
}

const statements = { find: 'SELECT * FROM "Note"  ORDER BY "createdAt" DESC LIMIT 10', count: 'SELECT count(*) FROM "Note"' }
const pool = new pg.Pool({ connectionString: adapter._uri ?? undefined, ...(adapter._uri ? {} : { host: client.$cn.host, port: client.$cn.port, user: client.$cn.user, password: client.$cn.password, database: client.$cn.database }) })
const schema = await (config.database as unknown as { loadSchema: () => Promise<{ getOneSchema: (c: string, m: boolean) => Promise<unknown> }> }).loadSchema().then((s) => s.getOneSchema('Note', true))
const noteQuery = () => new Parse.Query(Note).descending('createdAt').limit(10)

if (process.env.LAYERS !== 'write') {
  process.stdout.write(`read: 10 newest of ${SEEDED_NOTES} notes + count, ${iterations} sequential calls per layer and round\n`)
  await costs([
    ['pg (node-postgres pool), the same two statements', async () => { await pool.query(statements.find); await pool.query(statements.count) }],
    ['Parse\'s pool (pg-promise), the same two statements', async () => { await client.any(statements.find); await client.one(statements.count) }],
    ['Parse\'s storage adapter: find + count', async () => {
      await adapter.find('Note', schema, {}, { limit: 10, sort: { createdAt: -1 }, skip: undefined, keys: undefined })
      await adapter.count('Note', schema, {}, undefined, undefined, undefined)
    }],
    ['Parse\'s DatabaseController: find + count (master)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const database = config.database as any
      await database.find('Note', {}, { limit: 10, sort: { createdAt: -1 } }, {})
      await database.find('Note', {}, { count: true, limit: 0 }, {})
    }],
    ['RestQuery find + count (master; what queryRows falls back to)', async () => {
      const query = await RestQuery({ method: RestQuery.Method.find, config, auth: AuthModule.master(config), className: 'Note', restWhere: {}, restOptions: { limit: 10, order: '-createdAt', count: 1 }, context: {} })
      await query.execute()
    }],
    ['queryRows (master; its adapter read)', () => queryRows(noteQuery(), { master: true }, { count: true })],
    ['SDK query.find + count (master, Parse.Object rows)', async () => { await noteQuery().find({ useMasterKey: true }); await noteQuery().count({ useMasterKey: true }) }],
    ['declared GET listNotes through inject() (inject itself adds much)', () => app.inject({ method: 'GET', url: `${MOUNT}/notes/listNotes?limit=10`, headers: master })]
  ])
}

process.stdout.write(`write: one Note, ${iterations} sequential calls per layer and round\n`)
const body = { title: 'bench write', body: 'Written by the benchmark.', status: 'published' }
let n = 0
await costs([
  ['Parse\'s storage adapter: createObject', () => adapter.createObject('Note', schema, {
    objectId: `c${(n++).toString(36).padStart(9, '0')}`, ...body, slug: `s-${n}`, views: 0, createdAt: { __type: 'Date', iso: new Date().toISOString() }, updatedAt: { __type: 'Date', iso: new Date().toISOString() }, _rperm: ['*'], _wperm: [user.objectId]
  })],
  ['DatabaseController.create (schema, permission, ACL transform; master)', () => {
    const now = new Date().toISOString()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (config.database as any).create('Note', {
      objectId: `d${(n++).toString(36).padStart(9, '0')}`, ...body, slug: `s-${n}`, views: 0, createdAt: now, updatedAt: now, ACL: { '*': { read: true }, [user.objectId]: { read: true, write: true } }
    }, {})
  }],
  ['rest.create (RestWrite: beforeSave, ACL, schema; master)', () => rest.create(config, AuthModule.master(config), 'Note', { ...body, views: 0, ACL: { '*': { read: true } } }, {})],
  ['RestWrite\'s ordinary steps only (parse/lean-create.ts; master)', () => createThroughRestWrite(config, AuthModule.master(config), 'Note', { ...body, views: 0, ACL: { '*': { read: true } } }, {})],
  ['rest.create as the session user, owner ACL', () => rest.create(config, new AuthModule.Auth({ config, isMaster: false, user: sessionUser }), 'Note', { ...body, views: 0, ACL: { '*': { read: true }, [user.objectId]: { read: true, write: true } } }, {})],
  ['RestWrite\'s ordinary steps only, as the session user', () => createThroughRestWrite(config, new AuthModule.Auth({ config, isMaster: false, user: sessionUser }), 'Note', { ...body, views: 0, ACL: { '*': { read: true }, [user.objectId]: { read: true, write: true } } }, {})],
  ['SDK note.save (master; direct write)', () => new Note().save({ ...body, views: 0 }, { useMasterKey: true })],
  ['SDK note.save with the session token and an owner ACL (as createNote)', () => {
    const note = new Note({ ...body, views: 0 })
    const acl = new Parse.ACL({ [user.objectId]: { read: true, write: true } })
    acl.setPublicReadAccess(true)
    note.setACL(acl)
    return note.save(null, { sessionToken })
  }],
  ['createRow with the session user and an owner ACL (as createNote)', () => {
    const acl = new Parse.ACL({ [user.objectId]: { read: true, write: true } })
    acl.setPublicReadAccess(true)
    return createRow(Note, { ...body, views: 0, ACL: acl }, { master: false, user: sessionUser })
  }],
  ['declared POST createNote via inject() (session; inject adds much)', () => app.inject({
    method: 'POST', url: `${MOUNT}/notes/createNote`, headers: { 'x-parse-application-id': APP_ID, 'x-parse-session-token': sessionToken }, payload: body
  })]
])

await pool.end()
await app.close()
rmSync(dir, { recursive: true, force: true })

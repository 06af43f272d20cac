// The indexes Parse's session lookups need (Parse Server makes none): made at
// boot on both databases, used by the lookup on a table of 100k sessions, and a
// database holding a duplicate token still boots, with a plain index and a warning.
import t from 'tap'
import type { Db } from 'mongodb'
import { applyAllIndexes } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { lane, needsRealMongo, startKit, APP_ID } from './helpers/kit.js'

interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>>, none (query: string, values?: unknown): Promise<null> }

const pgClient = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client

function capture () {
  const lines: string[] = []
  return { lines, log: { info: (line: string) => { lines.push(line) }, warn: (line: string) => { lines.push(`WARN ${line}`) } } }
}

const plan = async (pg: Pg, query: string, values: unknown[]) => (await pg.any(`EXPLAIN ${query}`, values)).map((row) => row['QUERY PLAN'] as string).join('\n')
const ROWS = 100_000

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('PostgreSQL: the session indexes', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true })
  await kit.app.kit.indexesApplied
  const pg = pgClient()

  t.test('made at boot, valid, and reported like the declared ones', async (t) => {
    const rows = await pg.any(`SELECT i.relname AS name, x.indisunique AS unique, x.indisvalid AS valid, pg_get_indexdef(x.indexrelid) AS def
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = '_Session'`)
    const byName = new Map(rows.map((row) => [row.name, row]))
    t.match(byName.get('_Session_unique_sessionToken'), { unique: true, valid: true, def: /UNIQUE INDEX .* \("sessionToken"\)/ })
    t.match(byName.get('_Session_user_1'), { unique: false, valid: true, def: /\("user"\)/ })
    const { lines, log } = capture()
    const reports = await applyAllIndexes(undefined, { log })
    t.match(reports.filter((r) => r.className === '_Session'), [{ name: '_Session_unique_sessionToken', status: 'exists' }, { name: '_Session_user_1', status: 'exists' }])
    t.match(lines.at(-1), /0 created, 0 replaced, 0 dropped, 2 already present, 0 failed/, 'the next boot changes nothing')
  })

  t.test('a session lookup by token works end to end', async (t) => {
    const { token } = await kit.signUp('ada')
    const me = await kit.request('GET', '/parse/users/me', { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Session-Token': token } })
    t.equal(me.status, 200, me.text)
    t.equal(me.json.username, 'ada')
  })

  t.test(`the lookups use the indexes on ${ROWS} sessions`, async (t) => {
    // Parse's row format: the token and the user's objectId in plain columns.
    await pg.none(`INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", "user", "sessionToken", "expiresAt", "installationId", "createdWith")
      SELECT 's' || g, now(), now(), ARRAY['u' || (g % 5000)], ARRAY['u' || (g % 5000)], 'u' || (g % 5000), 'r:' || md5(g::text), now() + interval '1 year', md5('i' || g), '{"action":"login","authProvider":"password"}'::jsonb
      FROM generate_series(1, ${ROWS}) g`)
    await pg.none('ANALYZE "_Session"')
    const byToken = await plan(pg, 'SELECT * FROM "_Session" WHERE "sessionToken" = $1', [`r:${'a'.repeat(32)}`])
    t.comment(byToken)
    t.match(byToken, /Index Scan using "_Session_unique_sessionToken"/, 'the token lookup')
    t.notMatch(byToken, /Seq Scan/)
    const byUser = await plan(pg, 'SELECT * FROM "_Session" WHERE "user" = $1', ['u42'])
    t.comment(byUser)
    t.match(byUser, /_Session_user_1/, 'the sessions of one user')
    t.notMatch(byUser, /Seq Scan/)
  })

  t.test('a duplicate token: a plain index and a warning, never a failed boot', async (t) => {
    await pg.none('DROP INDEX "_Session_unique_sessionToken"')
    await pg.none('INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "sessionToken") VALUES (\'dup1\', now(), now(), \'r:same\'), (\'dup2\', now(), now(), \'r:same\')')
    const { lines, log } = capture()
    const reports = await applyAllIndexes(undefined, { log })
    t.match(reports.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'created', warn: true, detail: /could not be made unique: _Session holds duplicate values \(Key \("sessionToken"\)=\(r:same\) is duplicated\.\).*plain index _Session_sessionToken_1 was made instead/ })
    t.ok(lines.some((line) => /^WARN \[indexes\] _Session_unique_sessionToken could not be made unique/.test(line)), 'logged as a warning')
    const indexes = await pg.any('SELECT i.relname AS name, x.indisvalid AS valid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = \'_Session\'')
    t.same(indexes.filter((row) => !row.valid), [], 'no invalid leftover of the failed unique build')
    t.ok(indexes.some((row) => row.name === '_Session_sessionToken_1'), 'the plain index')
    t.match(await plan(pg, 'SELECT * FROM "_Session" WHERE "sessionToken" = $1', ['r:x']), /_Session_sessionToken_1/, 'which serves the lookup')

    const again = capture()
    const next = await applyAllIndexes(undefined, { log: again.log })
    t.match(next.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'exists', warn: true, detail: /still holds duplicate sessionToken values/ }, 'the next boot says so again, and builds nothing')
    t.notOk(next.some((r) => r.name === '_Session_sessionToken_1'), 'and does not drop the plain index as undeclared')

    await pg.none("DELETE FROM \"_Session\" WHERE \"objectId\" = 'dup2'")
    const fixed = await applyAllIndexes()
    t.match(fixed.find((r) => r.name === '_Session_unique_sessionToken'), { status: 'created' }, 'once the duplicate is gone, unique')
    const after = (await pg.any('SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = \'_Session\'')).map((row) => row.name)
    t.ok(after.includes('_Session_unique_sessionToken'))
    t.notOk(after.includes('_Session_sessionToken_1'), 'and the plain index gave way')
  })
})

if (lane.kind === 'mongo') {
  t.test('MongoDB: the session indexes on the names Parse stores', async (t) => {
    const kit = await startKit(t, { allowAuthRoutes: true })
    await kit.app.kit.indexesApplied
    const adapter = currentDatabase()!.adapter as unknown as { connect (): Promise<unknown>, database: Db }
    await adapter.connect()
    const indexes = new Map((await adapter.database.collection('_Session').indexes()).map((index) => [index.name, index]))
    t.match(indexes.get('_Session_sessionToken_1_unique'), { key: { _session_token: 1 }, unique: true })
    t.match(indexes.get('_Session_user_1'), { key: { _p_user: 1 } })
    const again = await applyAllIndexes()
    t.match(again.filter((r) => r.className === '_Session').map((r) => r.status), ['exists', 'exists'])

    t.test('a session lookup by token works end to end', async (t) => {
      const { token } = await kit.signUp('ada')
      const me = await kit.request('GET', '/parse/users/me', { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Session-Token': token } })
      t.equal(me.status, 200, me.text)
    })

    // The stand-in has no dropIndexes command.
    t.test('a duplicate token: a plain index and a warning', { skip: needsRealMongo() }, async (t) => {
      const sessions = adapter.database.collection<{ _id: string }>('_Session')
      await sessions.dropIndex('_Session_sessionToken_1_unique')
      await sessions.insertMany([{ _id: 'dup1', _session_token: 'r:same' }, { _id: 'dup2', _session_token: 'r:same' }] as never)
      const reports = await applyAllIndexes()
      t.match(reports.find((r) => r.name === '_Session_sessionToken_1_unique'), { status: 'created', warn: true, detail: /plain index _Session_sessionToken_1 was made instead/ })
      t.ok((await sessions.indexes()).some((index) => index.name === '_Session_sessionToken_1'))
    })
  })
}

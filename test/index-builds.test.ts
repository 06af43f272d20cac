// Schema work on live tables, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - index-builds: this file's own tests (first part, its comment kept)
// - test/schema-work-locks.test.ts (merged here): The reconciliation after listen meets live traffic: a transaction left open on a …
import t from 'tap'
import pg from 'pg'
import { BaseModel, ParseClass, ParseField, applyAllIndexes, applyFieldConstraints } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgCountStatement, pgDatabase } from '../lib/parse/adapter-internals.js'
import { lane, startKit, masterHeaders } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { runSchemaWork, TableBusyError, whenTableFree } from '../lib/storage/postgres/schema-work.js'
import { scaled } from './helpers/time-scale.js'

// ── index-builds ──
// Index builds on a live PostgreSQL table: CONCURRENTLY, so that writes through
// the kit go on while a declared index is built (a plain build, shown beside it,
// stops them); an INVALID index an interrupted build left is dropped and built
// again; a unique index over duplicate values fails alone and leaves nothing;
// a changed index is built beside the old one and swapped in.
@ParseClass('Ledger', { aclIndex: true })
class Ledger extends BaseModel {
  @ParseField({ type: 'String', index: true }) declare label: string
  @ParseField({ type: 'Number', index: true }) declare rank: number
  @ParseField({ type: 'String', unique: true }) declare code: string
  @ParseField({ type: 'Number' }) declare spare: number
}

interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>>, none (query: string, values?: unknown): Promise<null> }

// Enough for PostgreSQL to plan the ACL filter by index; ANALYZE reads every row of a table this size, so the plan
// does not hang on a sample. The CONCURRENTLY build is kept running by an open snapshot, not by the size (was 200,000).
const ROWS = 20_000
const master = { useMasterKey: true }

const indexesOf = async (sql: Pg) => new Map((await sql.any(`
  SELECT i.relname AS name, x.indisvalid AS valid, pg_get_indexdef(x.indexrelid) AS def, obj_description(i.oid, 'pg_class') AS note
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = 'Ledger'`)).map((row) => [row.name as string, row]))

async function until (what: string, check: () => Promise<boolean>, ms = scaled(30_000)): Promise<void> {
  const end = Date.now() + ms
  while (!await check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('index builds on a live table', async (t) => {
  await startKit(t, { indexes: false })
  const sql = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  // A second connection of the test's own, outside the kit's pool: it holds what a busy application would, and it
  // fills the table (the kit's pool bounds each query's wait, which a loaded machine can exceed for a large fill).
  const uri = (currentDatabase()!.adapter as unknown as { _client: { $cn: unknown } })._client.$cn
  const other = new pg.Client(uri as string)
  await other.connect()
  t.teardown(() => other.end())
  await other.query(`INSERT INTO "Ledger" ("objectId", "createdAt", "updatedAt", "label", "rank", "code", "spare")
    SELECT 'l' || g, now(), now(), md5(g::text) || md5((g * 7)::text), g, 'c' || g, g % 10 FROM generate_series(1, ${ROWS}) g`)
  await other.query('ANALYZE "Ledger"')

  t.test('writes through the kit go on while a declared index is built CONCURRENTLY', async (t) => {
    // A transaction with a snapshot older than the build: the build waits for it before it
    // ends, so it is certainly running (holding its table lock) while the writes below are made.
    await other.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    await other.query('SELECT count(*) FROM pg_class')
    const started = Date.now()
    let finished = 0
    const applying = applyAllIndexes().then((reports) => { finished = Date.now(); return reports })
    const build = async () => (await sql.any(`SELECT p.pid, p.phase, c.relname AS index FROM pg_stat_progress_create_index p
      LEFT JOIN pg_class c ON c.oid = p.index_relid WHERE p.relid = '"Ledger"'::regclass`))[0]
    await until('a build on Ledger', async () => (await build()) !== undefined)
    const running = await build()
    t.comment(`building ${String(running.index)} (${String(running.phase)})`)
    const locks = (await sql.any('SELECT mode, granted FROM pg_locks WHERE pid = $1 AND relation = \'"Ledger"\'::regclass', [running.pid])).map((row) => `${String(row.mode)}${row.granted ? '' : ' (waiting)'}`)
    t.ok(locks.includes('ShareUpdateExclusiveLock'), `the build holds SHARE UPDATE EXCLUSIVE, which lets writes go on (${locks.join(', ')})`)
    t.notOk(locks.includes('ShareLock'), 'not SHARE, which a plain CREATE INDEX holds and which stops every write')

    const writeStart = Date.now()
    const created = await new Ledger({ label: 'during the build', rank: -1, code: 'during' }).save(null, master)
    created.set('rank', -2)
    await created.save(null, master)
    await Promise.all(Array.from({ length: 10 }, (_, i) => new Ledger({ label: `batch ${i}`, rank: -10 - i }).save(null, master)))
    const writeMs = Date.now() - writeStart
    t.ok((await build()) !== undefined && finished === 0, 'all twelve writes (an insert, an update, ten more inserts) finished while the build still ran')
    t.comment(`twelve writes took ${writeMs} ms while the build ran`)

    await other.query('COMMIT')
    const reports = await applying
    t.comment(`the build took ${finished - started} ms (it waited for the open transaction)`)
    t.same(reports.filter((r) => r.status === 'failed'), [], 'nothing failed')
    t.ok(reports.filter((r) => r.className === 'Ledger').every((r) => r.status === 'created'), reports.map((r) => `${r.name}: ${r.status}`).join(', '))
    const indexes = await indexesOf(sql)
    t.match(indexes.get('Ledger_label_1'), { valid: true, def: /\(label\)/ })
    t.match(indexes.get('Ledger_unique_code'), { valid: true, def: /UNIQUE INDEX .* \(code\)/ })
    t.match(indexes.get('Ledger__rperm_gin'), { valid: true, def: /USING gin \(_rperm\)/ })
    t.match(indexes.get('Ledger__rperm_null'), { valid: true, def: /\("objectId"\) WHERE \(_rperm IS NULL\)/ })
    t.equal((await sql.any('SELECT count(*)::int AS n FROM "Ledger"'))[0].n, ROWS + 11)
  })

  t.test('aclIndex: PostgreSQL combines the two ACL indexes for a reader who may see few rows', async (t) => {
    // 1% public, the rest readable by their owner (one of 10,000) or a team role; a few rows without an ACL.
    await other.query(`UPDATE "Ledger" SET "_rperm" = CASE WHEN "rank"::int % 1000 = 0 THEN NULL WHEN "rank"::int % 100 = 0 THEN ARRAY['*']
      WHEN "rank"::int % 2 = 0 THEN ARRAY['u' || ("rank"::int % 10000)] ELSE ARRAY['role:team' || ("rank"::int % 500), 'u' || ("rank"::int % 10000)] END`)
    await other.query('VACUUM ANALYZE "Ledger"')
    // The statement Parse's adapter sends for the kit's read filter.
    const count = await pgCountStatement(currentDatabase()!.adapter, 'Ledger', { fields: { _rperm: { type: 'Array' } } }, { _rperm: { $in: [null, '*', 'u42', 'role:team7'] } })
    t.match(count, /"_rperm" IS NULL OR "_rperm" && ARRAY\['\*','u42','role:team7'\]/, count)
    const plan = (await sql.any(`EXPLAIN ${count}`)).map((row) => row['QUERY PLAN'] as string).join('\n')
    t.comment(plan)
    t.match(plan, /BitmapOr/, 'both branches of the OR by index')
    t.match(plan, /Bitmap Index Scan on "Ledger__rperm_null"/)
    t.match(plan, /Bitmap Index Scan on "Ledger__rperm_gin"/)
    t.notMatch(plan, /Seq Scan/)
  })

  t.test('a plain CREATE INDEX, by contrast, stops a write until it is done', async (t) => {
    await other.query('BEGIN')
    await other.query('CREATE INDEX "Ledger_spare_plain" ON "Ledger" ("spare")')
    const write = new Ledger({ label: 'behind a plain build' }).save(null, master)
    await until('the write to wait for the plain build', async () =>
      (await sql.any('SELECT 1 FROM pg_locks WHERE relation = \'"Ledger"\'::regclass AND mode = \'RowExclusiveLock\' AND NOT granted')).length > 0)
    t.pass('the insert waits for the SHARE lock of the plain build')
    await other.query('ROLLBACK')
    await write
    t.pass('and goes in once the build ends')
  })

  t.test('an INVALID index an interrupted build left is dropped and built again', async (t) => {
    // A unique build over duplicate values fails half way and leaves an invalid index behind, here under a declared name.
    await sql.none('DROP INDEX "Ledger_rank_-1"').catch(() => {})
    await sql.none('DROP INDEX "Ledger_rank_1"')
    const failed = await other.query('CREATE UNIQUE INDEX CONCURRENTLY "Ledger_rank_1" ON "Ledger" ("spare")').then(() => 'built', (error: { code?: string }) => error.code)
    t.equal(failed, '23505', 'the unique build failed')
    t.match((await indexesOf(sql)).get('Ledger_rank_1'), { valid: false }, 'and left an invalid index')
    // PostgreSQL sends the error before the failing backend has finished aborting: until then the build still shows
    // in pg_stat_progress_create_index, and the kit rightly leaves an index another session is building alone.
    await until('the failed build to end', async () => (await sql.any('SELECT 1 FROM pg_stat_progress_create_index WHERE relid = \'"Ledger"\'::regclass')).length === 0)
    const reports = await applyAllIndexes()
    t.match(reports.find((r) => r.name === 'Ledger_rank_1'), { status: 'replaced', detail: /Ledger_rank_1 rebuilt: ordered \(rank\) \(an interrupted build had left it invalid\)/ })
    t.match((await indexesOf(sql)).get('Ledger_rank_1'), { valid: true, def: /\(rank\)/ }, 'valid, on the declared column')
    const again = await applyAllIndexes()
    t.ok(again.every((r) => r.status === 'exists'), 'the next boot changes nothing')
  })

  t.test('a unique index over duplicate values fails alone, with a clear report, and leaves nothing behind', async (t) => {
    await sql.none('DROP INDEX "Ledger_unique_code"')
    await sql.none('UPDATE "Ledger" SET "code" = \'same\' WHERE "objectId" IN (\'l1\', \'l2\')')
    const reports = await applyAllIndexes()
    t.match(reports.find((r) => r.name === 'Ledger_unique_code'), {
      status: 'failed',
      detail: /cannot be made unique: Ledger holds duplicate values \(Key \(code\)=\(same\) is duplicated\.\); the unfinished index was dropped\. Remove the duplicates: the next boot tries again/,
      command: 'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Ledger_unique_code" ON "Ledger" ("code")'
    })
    t.same(reports.filter((r) => r.status === 'failed').map((r) => r.name), ['Ledger_unique_code'], 'the others are unaffected')
    t.notOk((await indexesOf(sql)).has('Ledger_unique_code'), 'no invalid leftover')
  })

  t.test('a changed index is built beside the old one and swapped in', async (t) => {
    // The record of an earlier declaration: the index on label was made from another definition.
    await sql.none('COMMENT ON INDEX "Ledger_label_1" IS \'fastify-parse-kit {"definition":"an earlier one","rule":"ordered (label desc)"}\'')
    const reports = await applyAllIndexes()
    const replaced = reports.find((r) => r.name === 'Ledger_label_1')
    t.match(replaced, { status: 'replaced', detail: 'Ledger_label_1 replaced: ordered (label desc) → ordered (label)' })
    t.match(replaced?.command, /^CREATE INDEX CONCURRENTLY "Ledger_label_1__fpk_new" ON "Ledger" \("label"\); DROP INDEX CONCURRENTLY IF EXISTS "Ledger_label_1"; ALTER INDEX "Ledger_label_1__fpk_new" RENAME TO "Ledger_label_1"$/)
    const indexes = await indexesOf(sql)
    t.match(indexes.get('Ledger_label_1'), { valid: true, def: /\(label\)/, note: /"rule":"ordered \(label\)"/ })
    t.notOk([...indexes.keys()].some((name) => name.endsWith('__fpk_new')), 'no temporary index left')
  })
})

t.test('aclIndex is checked at import', async (t) => {
  t.throws(() => ParseClass('AclProbe', { aclIndex: 'yes' } as never)(class AclProbe extends BaseModel {}),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /^@ParseClass\('AclProbe'\) on AclProbe: "aclIndex" must be true or false/ })
})

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('the next real boot finds the invalid index, drops it and builds it again', async (t) => {
  // One database for both boots, on the process's shared server.
  const { databaseURI } = await sharedPostgres(t)
  const first = await startKit(t, { indexes: false, databaseURI })
  const sql = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  await sql.none('INSERT INTO "Ledger" ("objectId", "createdAt", "updatedAt", "spare") SELECT \'l\' || g, now(), now(), g % 3 FROM generate_series(1, 1000) g')
  // Interrupted: a build that failed half way, under a declared name.
  t.equal(await sql.none('CREATE UNIQUE INDEX CONCURRENTLY "Ledger_label_1" ON "Ledger" ("spare")').then(() => 'built', (error: { code?: string }) => error.code), '23505')
  t.match((await indexesOf(sql)).get('Ledger_label_1'), { valid: false })
  await first.app.close()

  const lines: string[] = []
  const stream = { write: (line: string) => { lines.push(JSON.parse(line).msg as string) } }
  const second = await startKit(t, { databaseURI }, { logger: { level: 'info', stream } })
  await second.app.kit.indexesApplied
  const again = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  t.match((await indexesOf(again)).get('Ledger_label_1'), { valid: true, def: /\(label\)/ }, 'valid, on the declared column')
  t.ok(lines.includes('[indexes] Ledger_label_1 rebuilt: ordered (label) (an interrupted build had left it invalid)'), lines.filter((line) => line.startsWith('[indexes]')).join('\n'))
})

// ── from test/schema-work-locks.test.ts ──
// The reconciliation after listen meets live traffic: a transaction left open on a
// table must not make its DDL queue there and stall every request on that table
// (PostgreSQL queues later lock requests behind a waiting ALTER TABLE).
@ParseClass('Busy')
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class Busy extends BaseModel {
  @ParseField({ type: 'String', enum: ['a', 'b'] }) declare kind: string
}

// A repetition bound past 255: JavaScript compiles it (and the kit translates it as it is), PostgreSQL's regular expressions do not.
@ParseClass('Coded')
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class Coded extends BaseModel {
  @ParseField({ type: 'String', pattern: '[A-Z]{1,300}' }) declare code: string
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('the reconciliation gives way to an open transaction', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL lock queueing' }, async (t) => {
  const kit = await startKit(t)
  await kit.app.kit.indexesApplied
  const adapter = currentDatabase(kit.app.kit.state)!.adapter
  const db = pgDatabase(adapter)!
  const saved = await kit.request('POST', '/parse/classes/Busy', { headers: masterHeaders, body: { kind: 'a' } })
  t.equal(saved.status, 201)
  await db.none('ALTER TABLE "Busy" DROP CONSTRAINT "Busy_kind_check"')

  // A transaction that holds a row of Busy and waits on something else (the application's business).
  const holder = await db.connect()
  t.teardown(() => holder.done())
  await holder.none('BEGIN')
  await holder.none('UPDATE "Busy" SET "kind" = \'b\' WHERE "objectId" = $1', [saved.json.objectId])

  const applying = applyFieldConstraints(kit.app)
  for (let seen = 0; seen < 40; seen++) {
    const waiting = await db.any('SELECT 1 FROM pg_stat_activity WHERE query LIKE \'ALTER TABLE "Busy"%\' AND wait_event_type = \'Lock\'')
    if (waiting.length > 0) break
    await pause(25)
  }

  // Without giving way, both wait until the transaction ends: here, beyond databaseTimeout (503).
  const read = await kit.request('GET', '/parse/classes/Busy', { headers: masterHeaders })
  t.equal(read.status, 200, 'a read of the table answers while the transaction stays open')
  const written = await kit.request('POST', '/parse/classes/Busy', { headers: masterHeaders, body: { kind: 'b' } })
  t.equal(written.status, 201, 'so does a write')

  await holder.none('COMMIT')
  const report = (await applying).find((r) => r.name === 'Busy_kind_check')
  t.equal(report?.status, 'created', `the constraint is made once the table is free: ${JSON.stringify(report)}`)
  const refused = await kit.request('POST', '/parse/classes/Busy', { headers: masterHeaders, body: { kind: 'z' } })
  t.equal(refused.status, 400)
  t.equal(refused.json.code, 142, 'and the database enforces it')
})

t.test('a table busy for longer than the change keeps trying: named, not hung', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL lock queueing' }, async (t) => {
  const kit = await startKit(t)
  await kit.app.kit.indexesApplied
  const adapter = currentDatabase(kit.app.kit.state)!.adapter
  const db = pgDatabase(adapter)!
  const holder = await db.connect()
  t.teardown(() => holder.done())
  await holder.none('BEGIN')
  await holder.none('LOCK TABLE "Busy" IN ROW EXCLUSIVE MODE')
  const [error] = await runSchemaWork(adapter, async (unbounded) => {
    try {
      await whenTableFree(() => pgDatabase(unbounded)!.none('ALTER TABLE "Busy" ADD COLUMN "extra" text'), { giveUpMs: 1_500 })
      return [undefined]
    } catch (error) {
      return [error]
    }
  })
  await holder.none('ROLLBACK')
  t.type(error, TableBusyError)
  t.match((error as Error).message, /stayed locked by open transactions/)
  const columns = await db.any('SELECT 1 FROM information_schema.columns WHERE table_name = \'Busy\' AND column_name = \'extra\'')
  t.equal(columns.length, 0, 'nothing half made')
})

t.test('rows saved before a rule: counted, kept, and checked again at every boot until they keep it', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL constraints' }, async (t) => {
  const kit = await startKit(t)
  await kit.app.kit.indexesApplied
  const db = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
  await db.none('ALTER TABLE "Busy" DROP CONSTRAINT "Busy_kind_check"')
  const saved = await kit.request('POST', '/parse/classes/Busy', { headers: masterHeaders, body: { kind: 'a' } })
  await db.none('UPDATE "Busy" SET "kind" = \'z\' WHERE "objectId" = $1', [saved.json.objectId])
  const busy = async () => (await applyFieldConstraints(kit.app)).find((r) => r.name === 'Busy_kind_check')
  const validated = async () => (await db.one('SELECT convalidated FROM pg_constraint WHERE conname = \'Busy_kind_check\'')).convalidated as boolean
  t.match(await busy(), { status: 'created', detail: /1 existing row breaks it/ })
  t.equal(await validated(), false)
  t.match(await busy(), { status: 'exists', detail: 'Busy_kind_check unchanged; 1 existing row breaks it: kept, and refused when next saved unless corrected' }, 'told again')
  await db.none('UPDATE "Busy" SET "kind" = \'b\' WHERE "objectId" = $1', [saved.json.objectId])
  t.match(await busy(), { status: 'exists', detail: 'Busy_kind_check unchanged; every existing row now keeps it' })
  t.equal(await validated(), true, 'validated once the rows keep it')
  t.match(await busy(), { status: 'exists', detail: undefined }, 'then quiet')
})

t.test('a pattern PostgreSQL cannot compile is refused, never installed to fail every write', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL constraints' }, async (t) => {
  const kit = await startKit(t)
  await kit.app.kit.indexesApplied
  const db = pgDatabase(currentDatabase(kit.app.kit.state)!.adapter)!
  const report = (await applyFieldConstraints(kit.app)).find((r) => r.name === 'Coded_code_check')
  t.equal(report?.status, 'failed')
  t.match(report?.detail, /invalid regular expression/)
  t.same(await db.any('SELECT 1 FROM pg_constraint WHERE conname = \'Coded_code_check\''), [], 'not in the catalogue')
  const saved = await kit.request('POST', '/parse/classes/Coded', { headers: masterHeaders, body: { code: 'AB' } })
  t.equal(saved.status, 201, saved.text)
})

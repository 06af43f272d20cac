// The reconciliation after listen meets live traffic: a transaction left open on a
// table must not make its DDL queue there and stall every request on that table
// (PostgreSQL queues later lock requests behind a waiting ALTER TABLE).
import t from 'tap'
import { BaseModel, ParseClass, ParseField, applyFieldConstraints } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'
import { runSchemaWork, TableBusyError, whenTableFree } from '../lib/storage/postgres/schema-work.js'
import { lane, masterHeaders, startKit } from './helpers/kit.js'

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

// Transactions at their edges: deadlocks and write conflicts (re-run, then CONFLICT, never a 500),
// and reads that cannot take row locks (distinct, aggregate) inside a transaction.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, catchError, CONFLICT, ParseClass, ParseField, ParseVersionField, withTransaction } from '../lib/index.js'
import { lane, needsRealMongo, startKit } from './helpers/kit.js'
import { MongoNetworkError, MongoServerError } from 'mongodb'
import { mongoStorageAdapterClass } from '../lib/parse/internals.js'
import { wrapAdapter } from '../lib/storage/adapter.js'
import { lockingQuery as lockingSql } from '../lib/storage/postgres/reads.js'

const master = { useMasterKey: true }

@ParseClass('Crate')
class Crate extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare label: string
  @ParseField({ type: 'Number', integer: true }) declare quantity: number
  @ParseField({ type: 'String' }) declare note: string
  @ParseVersionField() declare version: number
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `parties` callers have arrived (or `open` is called); later callers pass at once. */
function barrier (parties: number): { arrive: () => Promise<void>, open: () => void } {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return {
    arrive: () => {
      if (++arrived >= parties) open()
      return opened
    },
    open
  }
}

const onlyPostgres = lane.kind === 'postgres' ? false : 'a deadlock of one statement against a transaction is PostgreSQL behaviour (MongoDB reads take no locks)'

t.test('which PostgreSQL reads lock, and in which order', async (t) => {
  const lockingQuery = (query: string) => lockingSql(query).replace(/\s+/g, ' ').trim()
  const find = 'SELECT * FROM $1:name WHERE "objectId" = ANY($2)  LIMIT $3 '
  t.equal(lockingQuery(find), 'SELECT * FROM $1:name WHERE "objectId" = ANY($2) ORDER BY "objectId" LIMIT $3 FOR UPDATE')
  t.equal(lockingQuery('SELECT $3:name FROM $1:name WHERE "stock" > $2 ORDER BY "name" ASC LIMIT $4 OFFSET $5'),
    'SELECT $3:name FROM $1:name WHERE "stock" > $2 ORDER BY "name" ASC, "objectId" LIMIT $4 OFFSET $5 FOR UPDATE', 'the caller\'s sort first')
  t.equal(lockingQuery('SELECT * FROM $1:name   '), 'SELECT * FROM $1:name ORDER BY "objectId" FOR UPDATE')
  for (const untouched of [
    'SELECT DISTINCT ("label") "label" FROM $3:name WHERE x = $4',
    'SELECT "label" AS "objectId", SUM("quantity") AS "total" FROM $1:name GROUP BY "label"',
    'EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM $1:name'
  ]) t.equal(lockingSql(untouched), untouched, `no lock: ${untouched.slice(0, 30)}…`)
})

// What Parse's Mongo adapter turns into a plain code 1 (its handleError), seen through the wrapper.
// Runs on every lane: the stand-in never raises a WriteConflict, a real replica set does.
t.test('MongoDB transient transaction errors become CONFLICT before Parse hides them', async (t) => {
  const adapter = wrapAdapter(new (mongoStorageAdapterClass())({ uri: 'mongodb://127.0.0.1:9/unused', collectionPrefix: '', mongoOptions: {} }), 'mongo') as unknown as { handleError (error: unknown): never }
  const writeConflict = new MongoServerError({ message: 'WriteConflict error', code: 112, errorLabels: ['TransientTransactionError'] })
  t.throws(() => adapter.handleError(writeConflict), { code: CONFLICT }, 'a write conflict is a CONFLICT (5001), re-run by withTransaction')
  const unreachable = new MongoNetworkError('connection refused')
  unreachable.addErrorLabel('TransientTransactionError')
  const [down] = await catchError((async () => adapter.handleError(unreachable))())
  t.not((down as Parse.Error).code, CONFLICT, 'an unreachable server is no conflict between transactions')
  t.throws(() => adapter.handleError(new MongoServerError({ message: 'bad', code: 2 })), { message: 'bad' }, 'other errors pass through')
})

t.test('transaction edges', async (t) => {
  const kit = await startKit(t)
  const pair = async (tag: string) => Parse.Object.saveAll([
    new Crate({ label: `${tag}-a`, quantity: 1 }),
    new Crate({ label: `${tag}-b`, quantity: 2 })
  ], master)

  t.test('distinct, aggregate and count of a versioned class inside a transaction', async (t) => {
    await pair('reads')
    const reads = await withTransaction(async () => ({
      labels: (await new Parse.Query(Crate).startsWith('label', 'reads-').distinct('label') as string[]).sort(),
      totals: await new Parse.Query(Crate).aggregate([{ $group: { _id: '$label', total: { $sum: '$quantity' } } }]) as Array<{ objectId: string, total: number }>,
      count: await new Parse.Query(Crate).startsWith('label', 'reads-').count(master),
      found: (await new Parse.Query(Crate).startsWith('label', 'reads-').ascending('label').find(master)).map((crate) => crate.label)
    }))
    t.same(reads.labels, ['reads-a', 'reads-b'])
    t.same(reads.totals.filter((row) => row.objectId.startsWith('reads-')).sort((x, y) => x.total - y.total), [{ objectId: 'reads-a', total: 1 }, { objectId: 'reads-b', total: 2 }])
    t.equal(reads.count, 2)
    t.same(reads.found, ['reads-a', 'reads-b'], 'a plain find still locks and keeps its own order')
  })

  // Two transactions each write one row, then the other's. On PostgreSQL the second read
  // waits on the other's row lock: a deadlock, one is aborted. On MongoDB the second write
  // meets the other's uncommitted one: a WriteConflict (TransientTransactionError).
  const crossing = async (attempts: number) => {
    const [a, b] = await pair(`cross-${attempts}`)
    const bothWroteOne = barrier(2)
    const runs = [0, 0]
    const cross = (me: number, first: Crate, second: Crate) => withTransaction(async () => {
      runs[me]!++
      const mine = await new Parse.Query(Crate).get(first.id!, master)
      mine.note = `first of ${me}`
      await mine.save(null, master)
      await bothWroteOne.arrive()
      const other = await new Parse.Query(Crate).get(second.id!, master)
      other.note = `second of ${me}`
      await other.save(null, master)
      return me
    }, { attempts })
    // A side that ends for good opens the barrier: the other must not wait for it forever.
    const outcomes = await Promise.allSettled([cross(0, a!, b!), cross(1, b!, a!)].map((run) => run.finally(bothWroteOne.open)))
    return { outcomes, runs }
  }
  const reasons = (outcomes: Array<PromiseSettledResult<number>>) => JSON.stringify(outcomes.map((o) => o.status === 'rejected' ? String(o.reason) : o.value))

  t.test('crossing transactions: the loser re-runs', { skip: needsRealMongo() }, async (t) => {
    const { outcomes, runs } = await crossing(lane.kind === 'postgres' ? 3 : 6)
    t.same(outcomes.map((outcome) => outcome.status), ['fulfilled', 'fulfilled'], reasons(outcomes))
    if (lane.kind === 'postgres') t.equal(runs[0]! + runs[1]!, 3, 'the deadlock victim ran twice')
    else t.ok(runs[0]! + runs[1]! > 2, 'a conflicting transaction ran again')
  })

  t.test('crossing transactions with their runs spent: CONFLICT (5001), not an internal error', { skip: needsRealMongo() }, async (t) => {
    const { outcomes } = await crossing(1)
    const rejected = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
    // PostgreSQL aborts exactly one; on MongoDB both may meet the other's write.
    if (lane.kind === 'postgres') t.equal(rejected.length, 1, 'one transaction lost')
    else t.ok(rejected.length >= 1, 'a transaction lost')
    t.ok(rejected.every((outcome) => (outcome.reason as Parse.Error)?.code === CONFLICT), reasons(outcomes))
  })

  t.test('a deadlock outside any transaction: the lone statement runs again', { skip: onlyPostgres }, async (t) => {
    // One statement touching two rows (Parse's multi-row update) against a transaction taking them in the other order.
    const [a, b] = await pair('lone')
    const adapter = (kit.app.kit.parse.server as unknown as { config: { databaseController: { adapter: Record<string, (...args: unknown[]) => Promise<unknown>>, loadSchema (): Promise<{ getOneSchema (name: string, all: boolean): Promise<unknown> }> } } }).config.databaseController
    const schema = await (await adapter.loadSchema()).getOneSchema('Crate', true)
    let holding!: () => void
    const holdsB = new Promise<void>((resolve) => { holding = resolve })
    const transaction = withTransaction(async () => {
      await new Parse.Query(Crate).get(b!.id!, master)
      holding()
      await pause(300) // the lone update now holds a and waits for b
      const first = await new Parse.Query(Crate).get(a!.id!, master)
      first.note = 'by the transaction'
      await first.save(null, master)
    })
    await holdsB
    const lone = adapter.adapter.updateObjectsByQuery!('Crate', schema, { objectId: { $in: [a!.id, b!.id] } }, { note: 'by the lone update' }, null)
    const [error] = await catchError(Promise.all([transaction, lone]))
    t.notOk(error, `both finish: ${String(error)} ${(error as { cause?: unknown })?.cause ?? ''}`)
  })
})

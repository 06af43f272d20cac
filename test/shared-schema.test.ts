// Reads and writes made through the kit (queryRows, createRow, the SDK's
// single-object saves in a handler) share one Parse SchemaController while
// Parse's schema cache is unchanged (lib/parse/reused-schema.ts). A write takes
// a view of it, so what its validation reassigns (the schema it reloads after
// adding a field) stays its own; a schema change made anywhere reaches the
// next operation. Every outcome here is compared with Parse's own REST answer.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, createRow, ParseClass, ParseField, queryRows } from '../lib/index.js'
import { schemaMemo } from '../lib/access/parse-config.js'
import { parseInternals, type SchemaController } from '../lib/parse/internals.js'
import { masterHeaders, startKit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { SchemaRules } = parseInternals()

@ParseClass('Memo', { clp: { find: { '*': true }, count: { '*': true }, get: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: {} } })
class Memo extends BaseModel {
  @ParseField({ type: 'String' }) declare title: string
}

const MASTER = { master: true }

/** SchemaController loads made while `body` runs (Parse's DatabaseController#loadSchema calls SchemaController.load). */
async function loadsDuring (body: () => Promise<unknown>): Promise<number> {
  const rules = SchemaRules as unknown as { load: (...args: unknown[]) => unknown }
  const load = rules.load
  let loads = 0
  rules.load = (...args: unknown[]) => { loads++; return load(...args) }
  try {
    await body()
  } finally {
    rules.load = load
  }
  return loads
}

const fieldsOf = (controller: SchemaController) => Object.keys((controller as unknown as { schemaData: Record<string, { fields: object }> }).schemaData.Memo.fields)

t.test('creates and reads share one controller, a write adding a field keeps its reload to itself, and a schema change reaches the next write', async (t) => {
  const kit = await startKit(t, { indexes: false, allowedRoutes: [{ path: '/classes/Memo', methods: ['POST'] }] })
  const user = await kit.signUp('memo-writer')
  const caller = { master: false, user: Parse.User.fromJSON({ className: '_User', objectId: user.id, sessionToken: user.token }) as Parse.User }

  await createRow(Memo, { title: 'warm' }, caller)
  await queryRows(new Parse.Query(Memo), MASTER)
  const loads = await loadsDuring(async () => {
    for (let i = 0; i < 5; i++) await createRow(Memo, { title: `shared ${i}` }, caller)
    await queryRows(new Parse.Query(Memo).limit(3), caller)
  })
  // Parse's own chains (fastPaths: false) load the schema for each operation and share none: only the answers are compared then.
  if (FAST_PATHS) t.equal(loads, 0, 'five creates and a read with the schema unchanged load no SchemaController: they share the one loaded before')
  else t.ok(loads > 0, `Parse's own chains load the schema themselves (${loads} loads)`)
  const shared = FAST_PATHS ? await schemaMemo().controller! : undefined
  if (shared) t.notOk(fieldsOf(shared).includes('extra'), 'the shared controller does not know `extra` yet')

  // A field Parse adds on the fly: the master key may (addField is closed to everyone else).
  const added = await createRow(Memo, { title: 'adds', extra: 'new field' }, MASTER)
  t.equal(added.extra, 'new field', 'the master key\'s create adds the field')
  if (shared) t.notOk(fieldsOf(shared).includes('extra'), 'the reload that followed landed on the write\'s own view: the shared controller is as it was')
  const schema = await kit.request('GET', '/parse/schemas/Memo', { headers: masterHeaders })
  t.same(schema.json.fields.extra, { type: 'String' }, 'Parse\'s schema has the new field')
  const again = await createRow(Memo, { title: 'uses', extra: 'known now' }, caller)
  t.equal(again.extra, 'known now', 'the next create, by a user who may not add fields, sees the field')
  if (shared) t.not(await schemaMemo().controller, shared, 'and shares a controller built from the new schema')

  // A schema change made elsewhere (the schemas API): the next create is validated against it, as REST's is.
  const changed = await kit.request('PUT', '/parse/schemas/Memo', { headers: masterHeaders, body: { className: 'Memo', fields: { amount: { type: 'Number' } } } })
  t.equal(changed.status, 200, changed.text)
  const byRow = await createRow(Memo, { title: 'typed', amount: 'not a number' }, caller).then(() => undefined, (error: Parse.Error) => ({ code: error.code, error: error.message }))
  const byRest = await kit.request('POST', '/parse/classes/Memo', { headers: { 'x-parse-application-id': 'test-app', 'x-parse-session-token': user.token }, body: { title: 'typed', amount: 'not a number' } })
  t.equal(byRest.status, 400, byRest.text)
  t.same(byRow, byRest.json, 'a value of the wrong type for the new field is refused with REST\'s code and message')
  const counted = await createRow(Memo, { title: 'typed', amount: 3 }, caller)
  t.equal(counted.amount, 3, 'and a number is taken')
})

t.test('concurrent creates that add fields, beside reads: every answer as Parse\'s, no field lost', async (t) => {
  const kit = await startKit(t, { indexes: false })
  await createRow(Memo, { title: 'warm' }, MASTER)
  const shared = FAST_PATHS ? await schemaMemo().controller! : undefined
  const before = shared && fieldsOf(shared)
  const work: Array<Promise<unknown>> = []
  for (let i = 0; i < 12; i++) {
    work.push(createRow(Memo, { title: `c${i}`, [`field${i % 4}`]: i }, MASTER))
    work.push(queryRows(new Parse.Query(Memo).ascending('title'), MASTER, { count: true }))
  }
  const settled = await Promise.allSettled(work)
  t.same(settled.filter((result) => result.status === 'rejected').map((result) => String((result as PromiseRejectedResult).reason)), [], 'every create and read succeeded')
  if (shared) t.same(fieldsOf(shared), before, 'the controller they started from was never changed')
  const schema = await kit.request('GET', '/parse/schemas/Memo', { headers: masterHeaders })
  for (let i = 0; i < 4; i++) t.same(schema.json.fields[`field${i}`], { type: 'Number' }, `field${i} was added`)
  const rest = await kit.request('GET', `/parse/classes/Memo?${new URLSearchParams({ order: 'title', count: '1', where: JSON.stringify({ objectId: { $exists: true } }) })}`, { headers: masterHeaders })
  const rows = await queryRows(new Parse.Query(Memo).ascending('title').exists('objectId'), MASTER, { count: true })
  t.equal(JSON.stringify(rows), rest.text, 'a read after them answers REST\'s bytes')
  t.equal(rows.count, 13, 'every row is there')
})

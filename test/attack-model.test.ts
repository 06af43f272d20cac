// The model surface as a client attacks it: array operations on what is
// stored, operations whose objects are no list, numbers past what PostgreSQL
// stores, and versions that no read gives. One kit for the file; runs on
// either database lane (the parts the MongoDB stand-in cannot run are skipped
// there with the reason).
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, ParseClass, ParseField, ParseVersionField } from '../lib/index.js'
import { appHeaders, lane, masterHeaders, needsRealMongo, startKit, type Kit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'

@ParseClass('Shelf')
class Shelf extends BaseModel {
  @ParseField({ type: 'Array' }) declare items: unknown[]
  @ParseField({ type: 'Number' }) declare count: number
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'Pointer', targetClass: 'Shelf' }) declare next: Shelf
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Relation', targetClass: 'Shelf' }) declare related: Parse.Relation
}
void Shelf

@ParseClass('Ledger')
class Ledger extends BaseModel {
  @ParseField({ type: 'Number' }) declare amount: number
  @ParseVersionField() declare version: number
}
void Ledger

let shared: Promise<Kit> | undefined
const sharedKit = () => {
  shared ??= (async () => startKit(t, {
    ...await sharedPostgres(t),
    allowedRoutes: [{ path: '/classes/*' }, { path: '/batch', methods: ['POST'] }]
  }))()
  return shared
}

const STORED = ['c', 'a', 'b', 'a', { k: 1 }, { k: 1 }, 'z']

async function shelfWith (kit: Kit, items: unknown[]): Promise<{ id: string, items: () => Promise<unknown> }> {
  const created = await kit.request('POST', '/parse/classes/Shelf', { headers: appHeaders, body: { items, count: 1, meta: { n: 1 } } })
  if (created.status !== 201) throw new Error(created.text)
  const id = created.json.objectId as string
  return { id, items: async () => (await kit.request('GET', `/parse/classes/Shelf/${id}`, { headers: masterHeaders })).json.items }
}

t.test('Add appends to the stored array as it is: order and duplicates kept', { skip: needsRealMongo() }, async (t) => {
  // Before: PostgreSQL's array_add took DISTINCT of the stored array: ["z","c","a","b",{"k":1},"d"], in the hash's order.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, STORED)
  const added = await kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body: { items: { __op: 'Add', objects: ['d', 'a'] } } })
  t.equal(added.status, 200, added.text)
  t.same(await shelf.items(), [...STORED, 'd', 'a'])
  t.same(added.json.items, [...STORED, 'd', 'a'], 'the answer says what is stored')
})

t.test('AddUnique appends each value not there yet, once, and keeps the stored array as it is', async (t) => {
  // Before: array_add_unique took DISTINCT of both: the stored duplicates went and the order was lost.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, STORED)
  const added = await kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body: { items: { __op: 'AddUnique', objects: ['d', 'a', { k: 1 }, 'e', 'd', { k: 2 }] } } })
  t.equal(added.status, 200, added.text)
  t.same(await shelf.items(), [...STORED, 'd', 'e', { k: 2 }])
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'PUT', path: `/parse/classes/Shelf/${shelf.id}`, body: { items: { __op: 'AddUnique', objects: ['f', 'c'] } } }] } })
  t.equal(batch.status, 200, batch.text)
  t.same(await shelf.items(), [...STORED, 'd', 'e', { k: 2 }, 'f'], 'inside a transactional batch too')
})

t.test('Add, AddUnique and Remove whose objects are no list are 400 (107), not 500', async (t) => {
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, ['a'])
  for (const op of ['Add', 'AddUnique', 'Remove']) {
    for (const objects of [5, 'x', { a: 1 }, null, undefined]) {
      const body = { items: { __op: op, objects } }
      const refused = await kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body })
      t.equal(refused.status, 400, `${JSON.stringify(body)} → 400 (${refused.text.slice(0, 160)})`)
      t.match(refused.json, { code: Parse.Error.INVALID_JSON, error: new RegExp(`${op} on items needs objects: a list`) })
    }
  }
  const inBatch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'PUT', path: `/parse/classes/Shelf/${shelf.id}`, body: { items: { __op: 'AddUnique', objects: 'x' } } }] } })
  t.match({ status: inBatch.status, json: inBatch.json }, { status: 400, json: { code: Parse.Error.INVALID_JSON } }, `inside a batch (${inBatch.text.slice(0, 160)})`)
  t.same(await shelf.items(), ['a'], 'nothing written')
})

t.test('on PostgreSQL, a save PostgreSQL cannot store as a number is 400 (111), not 500', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL\'s data exceptions' }, async (t) => {
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, [])
  const put = (body: unknown) => kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body })
  t.equal((await put({ count: 1e308, meta: { n: 1.5, s: 'text' } })).status, 200)
  const cases: Array<[string, unknown]> = [
    ['an Increment past the largest Number', { count: { __op: 'Increment', amount: 1e308 } }],
    ['an Increment of an Object\'s key that holds a fraction', { 'meta.n': { __op: 'Increment', amount: 1 } }],
    ['an Increment of an Object\'s key that holds text', { 'meta.s': { __op: 'Increment', amount: 1 } }]
  ]
  for (const [what, body] of cases) {
    const refused = await put(body)
    t.equal(refused.status, 400, `${what} → 400 (${refused.text.slice(0, 200)})`)
    t.match(refused.json, { code: Parse.Error.INCORRECT_TYPE, error: /^Shelf: PostgreSQL cannot store this save/ })
  }
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'PUT', path: `/parse/classes/Shelf/${shelf.id}`, body: { count: { __op: 'Increment', amount: 1e308 } } }] } })
  t.match({ status: batch.status, json: batch.json }, { status: 400, json: { code: Parse.Error.INCORRECT_TYPE } }, `inside a transactional batch (${batch.text.slice(0, 200)})`)
  const stored = await kit.request('GET', `/parse/classes/Shelf/${shelf.id}`, { headers: masterHeaders })
  t.match(stored.json, { count: 1e308, meta: { n: 1.5, s: 'text' } }, 'nothing written')
  const fits = await put({ count: { __op: 'Increment', amount: -1e308 } })
  t.equal(fits.status, 200, `an Increment within range still applies (${fits.text})`)
})

t.test('a version no read gives is 400 (142) naming it, not a conflict a reload never ends', async (t) => {
  const kit = await sharedKit()
  const created = await kit.request('POST', '/parse/classes/Ledger', { headers: appHeaders, body: { amount: 1 } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const refusedVersion = /Ledger uses optimistic locking: version takes the whole number the object was read at/
  // Before: each answered 409 CONFLICT; the client reloads, reads 1, sends "1" again, and never gets through.
  for (const version of ['1', 1.5, -1, true, {}, [1], { __type: 'Date', iso: '2026-01-01T00:00:00.000Z' }]) {
    for (const headers of [appHeaders, masterHeaders]) {
      const refused = await kit.request('PUT', `/parse/classes/Ledger/${id}`, { headers, body: { amount: 2, version } })
      t.equal(refused.status, 400, `version ${JSON.stringify(version)}${headers === masterHeaders ? ' (master key)' : ''} → 400 (${refused.text.slice(0, 160)})`)
      t.match(refused.json, { code: Parse.Error.VALIDATION_ERROR, error: refusedVersion })
    }
  }
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [{ method: 'PUT', path: `/parse/classes/Ledger/${id}`, body: { amount: 3, version: '1' } }] } })
  t.match(batch.json, [{ error: { code: Parse.Error.VALIDATION_ERROR, error: refusedVersion } }], `inside a batch (${batch.text.slice(0, 160)})`)
  const stale = await kit.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 4, version: 7 } })
  t.equal(stale.status, 409, 'a whole number that is not the stored one is still a conflict')
  const saved = await kit.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 5, version: 1 } })
  t.equal(saved.status, 200, saved.text)
  t.match((await kit.request('GET', `/parse/classes/Ledger/${id}`, { headers: masterHeaders })).json, { amount: 5, version: 2 })
})

t.test('two updates sent with the same version: exactly one wins', async (t) => {
  const kit = await sharedKit()
  const created = await kit.request('POST', '/parse/classes/Ledger', { headers: appHeaders, body: { amount: 1 } })
  const id = created.json.objectId as string
  const answers = await Promise.all([10, 11, 12, 13].map((amount) => kit.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount, version: 1 } })))
  t.same(answers.map((answer) => answer.status).sort(), [200, 409, 409, 409], answers.map((answer) => answer.text.slice(0, 80)).join(' | '))
  const winner = [10, 11, 12, 13][answers.findIndex((answer) => answer.status === 200)]
  t.match((await kit.request('GET', `/parse/classes/Ledger/${id}`, { headers: masterHeaders })).json, { amount: winner, version: 2 })
})

t.test('on PostgreSQL, an operation it cannot apply to a key inside an Object is 400 (111), not stored as the value', { skip: lane.kind === 'postgres' ? false : 'MongoDB applies them ($push, $addToSet, $pull, a deeper $inc)' }, async (t) => {
  // Before: {"meta": {"list": {"__op": "Add", "objects": [2]}}} was stored and answered 200.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, [])
  const put = (body: unknown) => kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body })
  t.equal((await put({ meta: { list: [1], n: 1, deep: { m: 1 } } })).status, 200)
  const cases: Array<[string, unknown]> = [
    ['meta.list', { __op: 'Add', objects: [2] }],
    ['meta.list', { __op: 'AddUnique', objects: [3] }],
    ['meta.list', { __op: 'Remove', objects: [1] }],
    ['meta.list', { __op: 'Batch', ops: [{ __op: 'Add', objects: [1] }] }],
    ['meta.deep.m', { __op: 'Increment', amount: 1 }],
    ['meta.deep.m', { __op: 'Delete' }]
  ]
  for (const [key, operation] of cases) {
    const refused = await put({ [key]: operation })
    t.equal(refused.status, 400, `${key}: ${JSON.stringify(operation)} → 400 (${refused.text.slice(0, 200)})`)
    t.match(refused.json, { code: Parse.Error.INCORRECT_TYPE, error: new RegExp(`^Shelf\\.${key.replace(/\./g, '\\.')}: PostgreSQL applies only Increment and Delete to a key inside an Object`) })
  }
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'PUT', path: `/parse/classes/Shelf/${shelf.id}`, body: { 'meta.list': { __op: 'Add', objects: [2] } } }] } })
  t.match({ status: batch.status, json: batch.json }, { status: 400, json: { code: Parse.Error.INCORRECT_TYPE } }, `inside a transactional batch (${batch.text.slice(0, 200)})`)
  const stored = async () => (await kit.request('GET', `/parse/classes/Shelf/${shelf.id}`, { headers: masterHeaders })).json.meta
  t.same(await stored(), { list: [1], n: 1, deep: { m: 1 } }, 'nothing written')
  t.equal((await put({ 'meta.n': { __op: 'Increment', amount: 2 }, 'meta.deep': { __op: 'Delete' } })).status, 200, 'Increment and Delete one level down still apply')
  t.same(await stored(), { list: [1], n: 3 })
})

t.test('AddRelation or RemoveRelation on a key inside an Object is 400 (107), not 500', async (t) => {
  // Before: Parse wrote to a join table named after "meta.r": PostgreSQL has none (500); MongoDB made one no query reads.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, [])
  const pointer = { __type: 'Pointer', className: 'Shelf', objectId: shelf.id }
  for (const op of ['AddRelation', 'RemoveRelation']) {
    for (const [method, url] of [['PUT', `/parse/classes/Shelf/${shelf.id}`], ['POST', '/parse/classes/Shelf']]) {
      const refused = await kit.request(method, url, { headers: appHeaders, body: { 'meta.r': { __op: op, objects: [pointer] } } })
      t.equal(refused.status, 400, `${method} ${op} on meta.r → 400 (${refused.text.slice(0, 200)})`)
      t.match(refused.json, { code: Parse.Error.INVALID_JSON, error: new RegExp(`${op} on meta\\.r: a Relation is a field of its own`) })
    }
  }
})

t.test('in-process saves (no gate) of AddRelation or RemoveRelation on a key inside an Object are 107 before anything is written', async (t) => {
  // Before: the row's own write went, then PostgreSQL's 500 (no join table "meta.r") or, on MongoDB, a join collection no query reads.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, [])
  const pointer = { __type: 'Pointer', className: 'Shelf', objectId: shelf.id }
  const rest = Parse.CoreManager.getRESTController() as { request (method: string, path: string, data: unknown, options: unknown): Promise<unknown> }
  for (const op of ['AddRelation', 'RemoveRelation']) {
    for (const [method, path] of [['PUT', `classes/Shelf/${shelf.id}`], ['POST', 'classes/Shelf']]) {
      const error = await rest.request(method, path, { label: `in-process ${op}`, 'meta.r': { __op: op, objects: [pointer] } }, { useMasterKey: true }).then(() => undefined, (caught: unknown) => caught as { code?: unknown, message?: unknown })
      t.match(error, { code: Parse.Error.INVALID_JSON, message: /^meta\.r: a Relation is a field of its own, not a key inside an Object/ }, `${method} ${op}: ${String(error?.message)}`)
    }
  }
  t.equal(await new Parse.Query('Shelf').equalTo('label', 'in-process AddRelation').count({ useMasterKey: true }), 0, 'nothing written')
  t.equal(await new Parse.Query('Shelf').equalTo('label', 'in-process RemoveRelation').count({ useMasterKey: true }), 0, 'nothing written')
  const relation = await rest.request('PUT', `classes/Shelf/${shelf.id}`, { meta: { r: 1 }, label: 'held' }, { useMasterKey: true })
  t.ok(relation, 'a save of the Object itself goes on')
})

t.test('an order on a Relation field is 400 (102) naming it on both lanes', async (t) => {
  // Before: PostgreSQL answered 200 with no rows (its adapter swallowed the missing column); MongoDB 200 in no order.
  const kit = await sharedKit()
  await shelfWith(kit, [])
  for (const [order, where] of [['related', 'a Relation field'], ['-related', 'a Relation field'], ['label,related', 'a Relation field'], ['related.x', 'inside a Relation field']]) {
    for (const [who, headers] of [['anonymous', appHeaders], ['master key', masterHeaders]] as const) {
      const answer = await kit.request('GET', `/parse/classes/Shelf?order=${order}&limit=5`, { headers })
      const key = order.replace(/^-|^label,/, '')
      t.same([answer.status, answer.json], [400, { code: Parse.Error.INVALID_QUERY, error: `order: ${key} is ${where}, which cannot order a list (its objects are kept apart from the rows); order by a String, Number, Date or Boolean field` }], `order=${order}, ${who}`)
    }
  }
  const inProcess = await new Parse.Query('Shelf').ascending('related').find({ useMasterKey: true }).then(() => undefined, (error: { code?: unknown }) => error.code)
  t.equal(inProcess, Parse.Error.INVALID_QUERY, 'in-process too')
  const held = await kit.request('GET', '/parse/classes/Shelf?order=label&limit=1', { headers: appHeaders })
  t.same([held.status, held.json.results.length], [200, 1], 'an order on another field lists')
})

t.test('an empty $in, and a $inQuery or $select whose inner query finds nothing, match no row (not every row without the field)', async (t) => {
  // Before, on PostgreSQL: Parse wrote an empty $in as `field IS NULL`, so each query below answered the row without a next.
  const kit = await sharedKit()
  const post = async (body: Record<string, unknown>) => (await kit.request('POST', '/parse/classes/Shelf', { headers: appHeaders, body: { label: 'empty-in', ...body } })).json.objectId as string
  const loose = await post({})
  const linked = await post({ next: { __type: 'Pointer', className: 'Shelf', objectId: loose } })
  const find = async (where: unknown, extra: Record<string, string> = {}) => {
    const answer = await kit.request('GET', '/parse/classes/Shelf?' + new URLSearchParams({ where: JSON.stringify({ $and: [{ label: 'empty-in' }, where] }), ...extra }), { headers: appHeaders })
    t.equal(answer.status, 200, answer.text.slice(0, 200))
    return extra.count ? answer.json.count as number : (answer.json.results as Array<{ objectId: string }>).map((row) => row.objectId).sort()
  }
  const nothing = { where: { label: 'no such label' }, className: 'Shelf' }
  t.same(await find({ next: { $in: [] } }), [], '$in: [] on a Pointer')
  t.same(await find({ items: { $in: [] } }), [], '$in: [] on an Array')
  t.same(await find({ next: { $inQuery: nothing } }), [], '$inQuery finding nothing')
  t.same(await find({ label: { $select: { query: nothing, key: 'label' } } }), [], '$select finding nothing')
  t.same(await find({ next: { $in: [] } }, { count: '1', limit: '0' }), 0, 'counted')
  t.same(await find({ $or: [{ next: { $in: [] } }, { objectId: linked }] }), [linked], 'an $or branch with it matches nothing, the other still matches')
  t.same(await find({ $nor: [{ next: { $in: [] } }] }), [loose, linked].sort(), 'under $nor it excludes nothing')
  t.same(await find({ next: { $nin: [] } }), [loose, linked].sort(), '$nin: [] excludes nothing')
  t.same(await find({ next: { $inQuery: { where: { objectId: loose }, className: 'Shelf' } } }), [linked], 'a $inQuery that finds a row still matches')
})

t.test('on PostgreSQL, $text on a field that is not text, or with a $language it has no configuration for, is 400 (102), not 500', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL\'s text search' }, async (t) => {
  const kit = await sharedKit()
  await shelfWith(kit, [])
  const cases: Array<[string, unknown]> = [
    ['a Number field', { count: { $text: { $search: { $term: 'x' } } } }],
    ['an unknown $language', { label: { $text: { $search: { $term: 'x', $language: 'no-such-language' } } } }],
    ['a $language with a quote', { label: { $text: { $search: { $term: 'x', $language: "english'" } } } }]
  ]
  for (const [what, where] of cases) {
    const extras: Array<Record<string, string>> = [{}, { count: '1', limit: '0' }]
    for (const extra of extras) {
      const refused = await kit.request('GET', '/parse/classes/Shelf?' + new URLSearchParams({ where: JSON.stringify(where), ...extra }), { headers: appHeaders })
      t.equal(refused.status, 400, `${what}${'count' in extra ? ', counted' : ''} → 400 (${refused.text.slice(0, 200)})`)
      t.match(refused.json, { code: Parse.Error.INVALID_QUERY, error: /^PostgreSQL cannot run this query: \$text/ })
    }
  }
  const found = await kit.request('GET', '/parse/classes/Shelf?' + new URLSearchParams({ where: JSON.stringify({ label: { $text: { $search: { $term: 'x', $language: 'simple' } } } }) }), { headers: appHeaders })
  t.equal(found.status, 200, `a configuration PostgreSQL has still searches (${found.text.slice(0, 200)})`)
})

t.test('a dotted key with "$" inside an Object is 400 (107): Parse refuses that key when the Object is sent whole', async (t) => {
  // Before: "meta.$x" was stored (200) and every later save sending meta back whole (the SDK's, after a change to meta) answered 121.
  const kit = await sharedKit()
  const shelf = await shelfWith(kit, [])
  const put = (body: unknown) => kit.request('PUT', `/parse/classes/Shelf/${shelf.id}`, { headers: appHeaders, body })
  for (const key of ['meta.$x', 'meta.a.$where', 'meta.x$']) {
    for (const value of [1, { __op: 'Increment', amount: 1 }, { __op: 'Delete' }]) {
      const refused = await put({ [key]: value })
      t.equal(refused.status, 400, `${key}: ${JSON.stringify(value)} → 400 (${refused.text.slice(0, 160)})`)
      t.match(refused.json, { code: Parse.Error.INVALID_JSON, error: /a key inside an Object must not contain "\$"/ })
    }
  }
  const whole = await put({ meta: { $x: 1 } })
  t.match({ status: whole.status, code: whole.json.code }, { status: 400, code: Parse.Error.INVALID_NESTED_KEY }, 'the same key sent inside the Object: Parse\'s own 121')
  t.same((await kit.request('GET', `/parse/classes/Shelf/${shelf.id}`, { headers: masterHeaders })).json.meta, { n: 1 }, 'nothing written')
  t.equal((await put({ 'meta.plain': 1 })).status, 200, 'a dotted key without "$" still saves')
})

// Triggers that read stored rows through the Parse SDK (afterFind on every
// read, beforeDelete and afterDelete on a delete) against a client that stores
// what the SDK cannot read back. Before: each such save was stored (the class
// has no save trigger), and from then on every read of the row through the
// afterFind, or its delete, answered 500 to every client. A GeoPoint whose
// latitude was text was PostgreSQL's 500 on any class.
import t from 'tap'
import Parse from 'parse/node'
import { AfterDelete, AfterFind, BaseModel, BeforeDelete, ParseClass, ParseField } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'

@ParseClass('Listed')
class Listed extends BaseModel {
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'File' }) declare attachment: Parse.File
  @AfterFind()
  static seen () {}
}

@ParseClass('Binned')
class Binned extends BaseModel {
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @BeforeDelete()
  static check () {}
}

@ParseClass('Swept')
class Swept extends BaseModel {
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @AfterDelete()
  static noted () {}
}

@ParseClass('Plain')
class Plain extends BaseModel {
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'Relation', targetClass: 'Plain' }) declare related: unknown
}
// A class clients may not read (its CLP), pointed at and related to from an open one.
@ParseClass('Vault', { clp: { find: {}, get: {}, count: {}, create: {}, update: {}, delete: {} } })
class Vault extends BaseModel {
  @ParseField({ type: 'String' }) declare code: string
}

@ParseClass('Door')
class Door extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Pointer', targetClass: 'Vault' }) declare vault: Vault
  @ParseField({ type: 'Relation', targetClass: 'Vault' }) declare vaults: Parse.Relation<Door, Vault>
  @AfterFind()
  static seen () {}
}
void [Listed, Binned, Swept, Plain, Door]

let shared: Promise<Kit> | undefined
const sharedKit = () => {
  shared ??= startKit(t, { allowedRoutes: [{ path: '/classes/*' }, { path: '/batch', methods: ['POST'] }] })
  return shared
}

const GATE = Parse.Error.INVALID_JSON
// Values Parse stores and the SDK cannot read: the gate's refusals, on every class.
const unreadable: Array<[string, unknown, RegExp]> = [
  ['meta', { at: { __type: 'GeoPoint', latitude: 100, longitude: 0 } }, /meta holds a GeoPoint that is not a latitude from -90 to 90/],
  ['meta', { at: { __type: 'GeoPoint' } }, /meta holds a GeoPoint/],
  ['tags', [{ __type: 'GeoPoint', latitude: 0, longitude: -181 }], /tags holds a GeoPoint/],
  ['meta', { area: { __type: 'Polygon', coordinates: 5 } }, /meta holds a Polygon whose coordinates are not a list/],
  ['meta', { area: { __type: 'Polygon', coordinates: [[0, 0], [1, 1], [2]] } }, /meta holds a Polygon/],
  ['meta', { row: { __type: 'Object', className: 'Plain' } }, /meta holds an Object without an objectId/],
  ['meta', { count: { __op: 'Increment' } }, /meta holds an operation \(__op\) inside its value/],
  ['tags', [{ __op: 'Delete' }], /tags holds an operation/]
]

t.test('a value the SDK cannot read back is refused before it is stored, so an afterFind or a delete trigger can still read the class', async (t) => {
  const kit = await sharedKit()
  for (const className of ['Listed', 'Binned', 'Swept', 'Plain']) {
    for (const [field, value, error] of unreadable) {
      if (className === 'Swept' && field === 'tags') continue
      if (className === 'Plain' && field === 'tags') continue
      const refused = await kit.request('POST', `/parse/classes/${className}`, { headers: appHeaders, body: { [field]: value } })
      t.equal(refused.status, 400, `${className} ${field}: ${JSON.stringify(value)} → 400 (${refused.text.slice(0, 200)})`)
      t.match(refused.json, { code: GATE, error })
    }
  }
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [{ method: 'POST', path: '/parse/classes/Listed', body: { meta: { at: { __type: 'GeoPoint', latitude: 100, longitude: 0 } } } }] } })
  t.equal(batch.status, 400, `inside a /batch (${batch.text.slice(0, 200)})`)
  t.match(batch.json, { code: GATE, error: /meta holds a GeoPoint/ })
  const listed = await kit.request('GET', '/parse/classes/Listed', { headers: appHeaders })
  t.equal(listed.status, 200, `the class still lists (${listed.text.slice(0, 200)})`)
})

t.test('a GeoPoint whose latitude is text is a 400 on a class without triggers, not PostgreSQL\'s 500', async (t) => {
  const kit = await sharedKit()
  for (const place of [{ __type: 'GeoPoint', latitude: 'x', longitude: 0 }, { __type: 'GeoPoint', latitude: 91, longitude: 0 }]) {
    const refused = await kit.request('POST', '/parse/classes/Plain', { headers: appHeaders, body: { place } })
    t.equal(refused.status, 400, `${JSON.stringify(place)} → 400 (${refused.text.slice(0, 200)})`)
    t.match(refused.json, { code: GATE, error: /place holds a GeoPoint/ })
  }
})

t.test('what the SDK reads still saves, reads through the afterFind and deletes through the triggers', async (t) => {
  const kit = await sharedKit()
  const plain = await kit.request('POST', '/parse/classes/Plain', { headers: appHeaders, body: {} })
  t.equal(plain.status, 201, plain.text)
  const plainId = plain.json.objectId as string
  const pointer = { __type: 'Pointer', className: 'Plain', objectId: plainId }
  const fitting = {
    meta: { at: { __type: 'GeoPoint', latitude: -90, longitude: 180 }, row: { __type: 'Object', className: 'Plain', objectId: plainId }, note: { op: 'Increment' } },
    tags: ['a', { __type: 'GeoPoint', latitude: 1, longitude: 2 }, pointer],
    place: { __type: 'GeoPoint', latitude: 45.5, longitude: -73.5 },
    area: { __type: 'Polygon', coordinates: [[0, 0], [0, 1], [1, 1]] },
    // Parse's REST form: a File by its name alone gets its url.
    attachment: { __type: 'File', name: 'report.txt' }
  }
  const created = await kit.request('POST', '/parse/classes/Listed', { headers: appHeaders, body: fitting })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const read = await kit.request('GET', `/parse/classes/Listed/${id}`, { headers: appHeaders })
  t.equal(read.status, 200, read.text)
  t.match(read.json, { place: { latitude: 45.5 }, area: { coordinates: [[0, 0], [0, 1], [1, 1]] }, meta: { at: { latitude: -90 } }, attachment: { name: 'report.txt', url: /report\.txt/ } })
  // Field operations, a Batch of relation operations included, are a field's own.
  const updated = await kit.request('PUT', `/parse/classes/Listed/${id}`, { headers: appHeaders, body: { tags: { __op: 'Add', objects: [{ __type: 'GeoPoint', latitude: 3, longitude: 4 }] }, 'meta.count': { __op: 'Increment', amount: 1 } } })
  t.equal(updated.status, 200, updated.text)
  const related = await kit.request('PUT', `/parse/classes/Plain/${plainId}`, {
    headers: appHeaders,
    body: { related: { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: [pointer] }, { __op: 'RemoveRelation', objects: [pointer] }] } }
  })
  t.equal(related.status, 200, `a Batch of relation operations (${related.text.slice(0, 200)})`)
  for (const className of ['Binned', 'Swept']) {
    const row = await kit.request('POST', `/parse/classes/${className}`, { headers: appHeaders, body: { meta: fitting.meta } })
    t.equal(row.status, 201, row.text)
    const deleted = await kit.request('DELETE', `/parse/classes/${className}/${row.json.objectId as string}`, { headers: appHeaders })
    t.equal(deleted.status, 200, `${className}: the delete runs its trigger (${deleted.text.slice(0, 200)})`)
  }
})

t.test('a File named by its name alone inside an Object or Array is refused on every class (Parse keeps no url there: no SDK reads the row back)', async (t) => {
  const kit = await sharedKit()
  const nested: Array<[string, string, unknown]> = [
    ['Listed', 'meta', { file: { __type: 'File', name: 'a.txt' } }],
    ['Listed', 'tags', [{ __type: 'File', name: 'a.txt' }]],
    ['Listed', 'meta.file', { __type: 'File', name: 'a.txt' }],
    ['Binned', 'meta', { file: { __type: 'File', name: 'a.txt' } }],
    ['Swept', 'meta', { file: { __type: 'File', name: 'a.txt' } }],
    ['Plain', 'meta', { file: { __type: 'File', name: 'a.txt' } }]
  ]
  for (const [className, field, value] of nested) {
    const refused = await kit.request('POST', `/parse/classes/${className}`, { headers: appHeaders, body: { [field]: value } })
    t.equal(refused.status, 400, `${className} ${field} → 400 (${refused.text.slice(0, 200)})`)
    t.match(refused.json, { code: GATE, error: new RegExp(`${field.replace('.', '\\.')} holds a File without a url inside an Object or Array`) })
  }
  const added = await kit.request('POST', '/parse/classes/Listed', { headers: appHeaders, body: { tags: { __op: 'Add', objects: [{ __type: 'File', name: 'a.txt' }] } } })
  t.match({ status: added.status, json: added.json }, { status: 400, json: { code: GATE, error: /tags holds a File without a url/ } }, 'added to an Array too')
  const listed = await kit.request('GET', '/parse/classes/Listed', { headers: appHeaders })
  t.equal(listed.status, 200, `the class still lists (${listed.text.slice(0, 200)})`)
  const withUrl = await kit.request('POST', '/parse/classes/Listed', { headers: appHeaders, body: { meta: { file: { __type: 'File', name: 'a.txt', url: 'http://127.0.0.1:1337/parse/files/test-app/a.txt' } } } })
  t.equal(withUrl.status, 201, `nested with its url (${withUrl.text.slice(0, 200)})`)
  const read = await kit.request('GET', `/parse/classes/Listed/${withUrl.json.objectId as string}`, { headers: appHeaders })
  t.equal(read.status, 200, `reads through the afterFind (${read.text.slice(0, 200)})`)
})

t.test('a find comparing a field with a value of another type is a 400, with an afterFind or without (was PostgreSQL\'s 500)', async (t) => {
  const kit = await sharedKit()
  const wheres: unknown[] = [
    { meta: { $ne: [1] } },
    { createdAt: { $gt: { __type: 'Date', iso: 5 } } }
  ]
  for (const className of ['Listed', 'Plain']) {
    for (const where of wheres) {
      const refused = await kit.request('GET', `/parse/classes/${className}?where=${encodeURIComponent(JSON.stringify(where))}`, { headers: appHeaders })
      t.equal(refused.status, 400, `${className} ${JSON.stringify(where)} → 400 (${refused.text.slice(0, 200)})`)
      t.match(refused.json, { code: Parse.Error.INVALID_QUERY, error: /^PostgreSQL cannot run this query: a value is compared with a field of another type \(operator does not exist: / })
    }
  }
})

t.test('a find on an open class does not read a class its CLP closes, through include, $inQuery, $select or redirectClassNameForKey', async (t) => {
  const kit = await sharedKit()
  const vault = await kit.request('POST', '/parse/classes/Vault', { headers: masterHeaders, body: { code: 'hidden-code' } })
  t.equal(vault.status, 201, vault.text)
  const pointer = { __type: 'Pointer', className: 'Vault', objectId: vault.json.objectId as string }
  const door = await kit.request('POST', '/parse/classes/Door', { headers: masterHeaders, body: { name: 'front', vault: pointer, vaults: { __op: 'AddRelation', objects: [pointer] } } })
  t.equal(door.status, 201, door.text)
  const reads = [
    'include=vault',
    'include=*',
    `where=${encodeURIComponent(JSON.stringify({ vault: { $inQuery: { className: 'Vault', where: { code: 'hidden-code' } } } }))}`,
    `where=${encodeURIComponent(JSON.stringify({ name: { $select: { query: { className: 'Vault', where: {} }, key: 'code' } } }))}`,
    'redirectClassNameForKey=vaults'
  ]
  for (const query of reads) {
    const read = await kit.request('GET', `/parse/classes/Door?${query}`, { headers: appHeaders })
    t.notMatch(read.text, /hidden-code/, `${decodeURIComponent(query)}: ${read.status} (${read.text.slice(0, 200)})`)
  }
  const master = await kit.request('GET', '/parse/classes/Door?include=vault', { headers: masterHeaders })
  t.match(master.text, /hidden-code/, 'the master key reads it (the include itself works)')
})

// The read path of declared endpoints: rows read through queryRows (one schema
// load per query) and Parse objects a handler returns answer exactly what
// Parse's REST API answers for the same rows — every field type, with or
// without a response schema — and keep every read rule: ACLs, class-level
// permissions, protected fields, afterFind triggers. Each test fails if an
// optimised path changed an answer or skipped a rule.
import t from 'tap'
import Parse from 'parse/node'
import { Type, type Static } from '@sinclair/typebox'
import { AfterFind, BaseModel, CloudFunction, ParseClass, ParseField, queryRows, Route, asCaller, withTransaction, type CloudRequest } from '../lib/index.js'
import { APP_ID, appHeaders, masterHeaders, needsRealMongo, startKit } from './helpers/kit.js'

@ParseClass('Shelf')
class Shelf extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

@ParseClass('Specimen', {
  clp: {
    find: { requiresAuthentication: true },
    count: { requiresAuthentication: true },
    get: { requiresAuthentication: true },
    create: {},
    update: {},
    delete: {}
  },
  protectedFields: { '*': ['secret'] }
})
class Specimen extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Shelf' }) declare shelf: Shelf
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Shelf' }) declare related: Parse.Relation
  @ParseField({ type: 'String' }) declare secret: string
  @ParseField({ type: 'String' }) declare marked: string

  @AfterFind()
  static mark (request: { objects: Specimen[] }) { // Parse passes the rows as `objects`
    for (const object of request.objects) object.set('marked', `afterFind saw ${object.get('name')}`)
    return request.objects
  }
}

const any = Type.Any()
const SpecimenJSON = Type.Object({
  objectId: Type.String(),
  className: Type.Optional(Type.String()),
  name: Type.String(),
  weight: Type.Number(),
  fresh: Type.Boolean(),
  found: any,
  shelf: any,
  place: any,
  photo: any,
  details: any,
  tags: any,
  related: any,
  secret: Type.Optional(Type.String()),
  marked: Type.Optional(Type.String()),
  ACL: any,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
})
const SpecimenList = Type.Object({ results: Type.Array(SpecimenJSON), count: Type.Integer() })

const byName = () => new Parse.Query(Specimen).ascending('name')

@Route('specimens')
export class SpecimenFunctions {
  @CloudFunction({ methods: ['GET'], returns: SpecimenList })
  static async rowsTyped (request: CloudRequest) {
    return queryRows<Static<typeof SpecimenJSON>>(byName(), request, { count: true })
  }

  @CloudFunction({ methods: ['GET'] })
  static async rowsUntyped (request: CloudRequest) {
    return queryRows(byName(), request, { count: true })
  }

  /** Rows and count of a page: the count is of every row the caller may read, whatever the page holds. */
  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number }, skip: { type: Number }, name: { type: String }, keys: { type: String } } } })
  static async rowsPaged (request: CloudRequest) {
    const query = byName()
    const { limit, skip, name, keys } = request.params as { limit?: number, skip?: number, name?: string, keys?: string }
    if (limit !== undefined) query.limit(limit)
    if (skip !== undefined) query.skip(skip)
    if (name !== undefined) query.equalTo('name', name)
    if (keys !== undefined) query.select(...keys.split(','))
    return queryRows(query, request, { count: true })
  }

  /** A count inside a transaction sees the transaction's own uncommitted row; after the rollback it is gone. */
  @CloudFunction({ methods: ['POST'] })
  static async countInTransaction (request: CloudRequest) {
    let inside: unknown
    await withTransaction(async () => {
      await new Specimen({ name: 'c written in the transaction' }).save(null, { useMasterKey: true })
      inside = await queryRows(byName().limit(1), request, { count: true })
      throw new Error('roll back')
    }).catch((error: Error) => { if (error.message !== 'roll back') throw error })
    const after = await queryRows(byName().limit(1), request, { count: true })
    return { inside, after }
  }

  @CloudFunction({ methods: ['GET'], returns: SpecimenJSON, validation: { fields: { id: { type: String, required: true } } } })
  static async objectTyped (request: CloudRequest) {
    return new Parse.Query(Specimen).get(request.params.id, asCaller(request))
  }

  @CloudFunction({ methods: ['GET'], validation: { fields: { id: { type: String, required: true } } } })
  static async objectUntyped (request: CloudRequest) {
    return new Parse.Query(Specimen).get(request.params.id, asCaller(request))
  }
}

t.test('the read path answers as Parse does and keeps its rules', async (t) => {
  // Parse's own find route, opened to compare answers with it.
  const kit = await startKit(t, { allowedRoutes: [{ path: '/classes/Specimen', methods: ['GET'] }, { path: '/schemas/Specimen', methods: ['PUT'] }] })
  const alice = await kit.signUp('reader-alice')
  const bob = await kit.signUp('reader-bob')
  const as = (user: { token: string }) => ({ ...appHeaders, 'x-parse-session-token': user.token })

  const shelf = await new Shelf({ label: 'top' }).save(null, { useMasterKey: true })
  const other = await new Shelf({ label: 'bottom' }).save(null, { useMasterKey: true })
  const shelfPointer = { __type: 'Pointer', className: 'Shelf', objectId: shelf.id }
  const specimen = async (name: string, ACL: Record<string, unknown>) => {
    const created = await kit.request('POST', '/parse/classes/Specimen', {
      headers: masterHeaders,
      body: {
        name,
        weight: 1.5,
        fresh: true,
        found: { __type: 'Date', iso: '2024-02-03T04:05:06.789Z' },
        shelf: shelfPointer,
        place: { __type: 'GeoPoint', latitude: 52.52, longitude: 13.405 },
        // A file reference: Parse fills in its url from the files adapter when reading.
        photo: { __type: 'File', name: 'photo.txt' },
        details: { nested: { deeper: [1, 'two', { three: null }] }, when: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' } },
        tags: ['a', shelfPointer, 3],
        related: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: 'Shelf', objectId: other.id }] },
        secret: `secret of ${name}`,
        ACL
      }
    })
    t.equal(created.status, 201, created.text)
    return { id: created.json.objectId as string }
  }
  const publicRow = await specimen('a public', { '*': { read: true } })
  await specimen('b alice only', { [alice.id]: { read: true, write: true } })

  t.test('queryRows answers exactly what GET /classes answers (find + count), with and without a response schema', async (t) => {
    const where = encodeURIComponent(JSON.stringify({ objectId: { $exists: true } }))
    const rest = await kit.request('GET', `/parse/classes/Specimen?order=name&count=1&where=${where}`, { headers: as(alice) })
    t.equal(rest.status, 200, rest.text)
    const untyped = await kit.request('GET', '/parse/specimens/rowsUntyped', { headers: as(alice) })
    const typed = await kit.request('GET', '/parse/specimens/rowsTyped', { headers: as(alice) })
    t.equal(untyped.status, 200, untyped.text)
    t.equal(typed.status, 200, typed.text)
    t.equal(untyped.text, rest.text, 'byte for byte the REST answer')
    t.same(JSON.parse(typed.text), JSON.parse(rest.text), 'the same fields and values through the response schema')
    t.equal(rest.json.count, 2)
    const row = untyped.json.results[0]
    t.same(row.shelf, { __type: 'Pointer', className: 'Shelf', objectId: shelf.id })
    t.same(row.found, { __type: 'Date', iso: '2024-02-03T04:05:06.789Z' })
    t.same(row.place, { __type: 'GeoPoint', latitude: 52.52, longitude: 13.405 })
    t.same(row.photo, { __type: 'File', name: 'photo.txt', url: `${kit.app.kit.options.serverURL}/files/${APP_ID}/photo.txt` })
    t.same(row.related, { __type: 'Relation', className: 'Shelf' })
    t.same(row.details.nested, { deeper: [1, 'two', { three: null }] })
  })

  t.test('pages with their count answer exactly what GET /classes answers: limits, skips past the end, conditions, keys', async (t) => {
    const cases: Array<{ params: Record<string, string>, rest: Record<string, string> }> = [
      { params: { limit: '1' }, rest: { limit: '1' } },
      { params: { skip: '1', limit: '1' }, rest: { skip: '1', limit: '1' } },
      { params: { skip: '5' }, rest: { skip: '5' } }, // an empty page still counts every row
      { params: { limit: '0' }, rest: { limit: '0' } },
      { params: { name: 'b alice only' }, rest: { where: JSON.stringify({ name: 'b alice only' }) } },
      { params: { name: 'nobody' }, rest: { where: JSON.stringify({ name: 'nobody' }) } },
      { params: { keys: 'name,weight', limit: '1' }, rest: { keys: 'name,weight', limit: '1' } }
    ]
    for (const user of [alice, bob]) {
      for (const { params, rest } of cases) {
        const where = rest.where ?? JSON.stringify({ objectId: { $exists: true } })
        const parse = await kit.request('GET', `/parse/classes/Specimen?${new URLSearchParams({ order: 'name', count: '1', ...rest, where })}`, { headers: as(user) })
        const ours = await kit.request('GET', `/parse/specimens/rowsPaged?${new URLSearchParams(params)}`, { headers: as(user) })
        t.equal(parse.status, 200, parse.text)
        t.equal(ours.text, parse.text, `${JSON.stringify(params)} for ${user === alice ? 'alice' : 'bob'}`)
      }
    }
    const empty = await kit.request('GET', '/parse/specimens/rowsPaged?skip=5', { headers: as(alice) })
    t.same(empty.json, { results: [], count: 2 }, 'no rows on the page, both counted')
    const page = await kit.request('GET', '/parse/specimens/rowsPaged?limit=1', { headers: as(bob) })
    t.same([page.json.results.length, page.json.count], [1, 1], 'the ACL hides alice\'s row from the count too')
  })

  t.test('a count inside a transaction reads on the transaction', { skip: needsRealMongo() }, async (t) => {
    const answer = await kit.request('POST', '/parse/specimens/countInTransaction', { headers: masterHeaders, body: {} })
    t.equal(answer.status, 200, answer.text)
    t.equal(answer.json.inside.count, 3, 'the uncommitted row is counted inside')
    t.same(answer.json.inside.results.map((row: { name: string }) => row.name), ['a public'])
    t.equal(answer.json.after.count, 2, 'rolled back: gone after')
  })

  t.test('a Parse object a handler returns answers the same with and without a response schema', async (t) => {
    const untyped = await kit.request('GET', `/parse/specimens/objectUntyped?id=${publicRow.id}`, { headers: as(alice) })
    const typed = await kit.request('GET', `/parse/specimens/objectTyped?id=${publicRow.id}`, { headers: as(alice) })
    t.equal(untyped.status, 200, untyped.text)
    t.same(typed.json, untyped.json)
    t.same(untyped.json.shelf, { __type: 'Pointer', className: 'Shelf', objectId: shelf.id })
    t.same(untyped.json.found, { __type: 'Date', iso: '2024-02-03T04:05:06.789Z' })
    t.same(untyped.json.ACL, { '*': { read: true } })
  })

  t.test('ACLs: a row the ACL hides is neither listed nor counted', async (t) => {
    const forBob = await kit.request('GET', '/parse/specimens/rowsTyped', { headers: as(bob) })
    t.equal(forBob.status, 200, forBob.text)
    t.same(forBob.json.results.map((row: { name: string }) => row.name), ['a public'])
    t.equal(forBob.json.count, 1)
    const forAlice = await kit.request('GET', '/parse/specimens/rowsUntyped', { headers: as(alice) })
    t.same(forAlice.json.results.map((row: { name: string }) => row.name), ['a public', 'b alice only'])
  })

  t.test('class-level permissions: finding needs a signed-in user', async (t) => {
    const anonymous = await kit.request('GET', '/parse/specimens/rowsTyped', { headers: appHeaders })
    t.equal(anonymous.json.code, Parse.Error.OBJECT_NOT_FOUND, anonymous.text)
    t.notOk(anonymous.json.results)
  })

  t.test('protected fields are hidden from users and shown to the master key', async (t) => {
    const forAlice = await kit.request('GET', '/parse/specimens/rowsUntyped', { headers: as(alice) })
    t.notOk(forAlice.json.results.some((row: Record<string, unknown>) => 'secret' in row), 'no secret for a user')
    const typedForAlice = await kit.request('GET', `/parse/specimens/objectTyped?id=${publicRow.id}`, { headers: as(alice) })
    t.notOk('secret' in typedForAlice.json)
    const master = await kit.request('GET', '/parse/specimens/rowsTyped', { headers: masterHeaders })
    t.same(master.json.results.map((row: { secret: string }) => row.secret), ['secret of a public', 'secret of b alice only'])
  })

  t.test('afterFind triggers run on every path', async (t) => {
    for (const url of ['/parse/specimens/rowsTyped', '/parse/specimens/rowsUntyped']) {
      const answer = await kit.request('GET', url, { headers: as(alice) })
      t.same(answer.json.results.map((row: { marked: string }) => row.marked), ['afterFind saw a public', 'afterFind saw b alice only'], url)
    }
    const object = await kit.request('GET', `/parse/specimens/objectTyped?id=${publicRow.id}`, { headers: as(alice) })
    t.equal(object.json.marked, 'afterFind saw a public')
  })

  // Last: it changes Specimen's permissions.
  t.test('a schema change reaches the very next read (reads share a schema only while it is unchanged)', async (t) => {
    const before = await kit.request('GET', '/parse/specimens/rowsUntyped', { headers: as(alice) })
    t.ok(before.json.results.every((row: Record<string, unknown>) => 'weight' in row), 'weight is sent before')
    const requiresAuthentication = { requiresAuthentication: true }
    const changed = await kit.request('PUT', '/parse/schemas/Specimen', {
      headers: masterHeaders,
      body: {
        classLevelPermissions: {
          find: requiresAuthentication, count: requiresAuthentication, get: requiresAuthentication, create: {}, update: {}, delete: {}, addField: {},
          protectedFields: { '*': ['secret', 'weight'] }
        }
      }
    })
    t.equal(changed.status, 200, changed.text)
    const where = encodeURIComponent(JSON.stringify({ objectId: { $exists: true } }))
    const rest = await kit.request('GET', `/parse/classes/Specimen?order=name&count=1&where=${where}`, { headers: as(alice) })
    const after = await kit.request('GET', '/parse/specimens/rowsUntyped', { headers: as(alice) })
    t.equal(after.text, rest.text, 'the same answer as REST under the new permissions')
    t.ok(after.json.results.every((row: Record<string, unknown>) => !('weight' in row)), 'weight is now protected')
  })
})

// Reads and writes checked against Parse's own answers, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - adapter-read: this file's own tests (first part, its comment kept)
// - test/read-path.test.ts (merged here): The read path of declared endpoints: rows read through queryRows (one schema …
// - test/create-row.test.ts (merged here): createRow (lib/model/create-row.ts) against the SDK save it replaces in a …
import t from 'tap'
import Parse from 'parse/node'
import { AfterFind, BaseModel, ParseClass, ParseField, addUsersToRole, queryRows, withTransaction, CloudFunction, Route, asCaller, type CloudRequest, AfterSave, BeforeSave, createRow, requireUser } from '../lib/index.js'
import { adapterRead } from '../lib/parse/adapter-read.js'
import { AuthModule } from '../lib/parse/internals.js'
import { parseConfig, schemaMemo } from '../lib/access/parse-config.js'
import { APP_ID, appHeaders, masterHeaders, needsRealMongo, startKit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { readFastPathsFrom } from '../lib/parse/fast-path-switch.js'
import { Type, type Static } from '@sinclair/typebox'
import { createObject } from '../lib/parse/direct-writes.js'

// ── adapter-read ──
// The adapter read (lib/parse/adapter-read.ts), the fast path queryRows takes
// for plain reads: every case it serves answers byte for byte what Parse's
// REST API answers for the same query and caller (every field type, ACL
// shapes, class-level permissions by role, counts, pages, conditions), and
// every case it does not serve (pointer or relation conditions, includes,
// keys, regular expressions, protected fields, find triggers,
// requiresAuthentication, a refused caller) goes through Parse's RestQuery
// and still answers exactly as REST does, errors included.
@ParseClass('Crate')
class Crate extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

// Every sample class has the same fields, one of each type.
/** Every field type, default permissions: the adapter read serves every caller here. */
@ParseClass('Sample')
export class Sample extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Crate' }) declare related: Parse.Relation
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String' }) declare secret: string
}

/** Finding and counting granted to one role only. */
@ParseClass('RoleSample', { clp: { find: { 'role:Curators': true }, count: { 'role:Curators': true }, get: { 'role:Curators': true }, create: {}, update: {}, delete: {} } })
export class RoleSample extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Crate' }) declare related: Parse.Relation
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String' }) declare secret: string
}

/** Signed-in users only (Parse's requiresAuthentication): left to Parse. */
@ParseClass('AuthSample', { clp: { find: { requiresAuthentication: true }, count: { requiresAuthentication: true }, get: { requiresAuthentication: true }, create: {}, update: {}, delete: {} } })
export class AuthSample extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Crate' }) declare related: Parse.Relation
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String' }) declare secret: string
}

/** A protected field: left to Parse for everyone but the master key. */
@ParseClass('HiddenSample', { protectedFields: { '*': ['secret'] } })
export class HiddenSample extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Crate' }) declare related: Parse.Relation
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String' }) declare secret: string
}

/** An afterFind trigger: always left to Parse. */
@ParseClass('TriggerSample')
export class TriggerSample extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'Number' }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Relation', targetClass: 'Crate' }) declare related: Parse.Relation
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String' }) declare secret: string

  @AfterFind()
  static mark (request: { objects: Parse.Object[] }) {
    for (const object of request.objects) object.set('secret', `afterFind saw ${object.get('name')}`)
    return request.objects
  }
}

const CLASSES = ['Sample', 'RoleSample', 'AuthSample', 'HiddenSample', 'TriggerSample']

t.test('the adapter read answers byte for byte as Parse\'s REST API, and leaves the rest to Parse', async (t) => {
  const kit = await startKit(t, { allowedRoutes: CLASSES.map((name) => ({ path: `/classes/${name}`, methods: ['GET'] })) })
  const alice = await kit.signUp('adapter-alice')
  const bob = await kit.signUp('adapter-bob')
  await addUsersToRole('Curators', [alice.id])
  const crate = await new Crate({ label: 'top' }).save(null, { useMasterKey: true })
  const other = await new Crate({ label: 'bottom' }).save(null, { useMasterKey: true })
  const cratePointer = { __type: 'Pointer', className: 'Crate', objectId: crate.id }

  const ACLS: Array<Record<string, unknown> | undefined> = [
    { '*': { read: true } },
    { [alice.id]: { read: true, write: true } },
    { 'role:Curators': { read: true } },
    { '*': { read: true }, [bob.id]: { write: true } },
    { [bob.id]: { read: true } },
    undefined // no ACL: public
  ]
  for (const className of CLASSES) {
    for (let i = 0; i < 12; i++) {
      const ACL = ACLS[i % ACLS.length]
      const created = await kit.request('POST', `/parse/classes/${className}`, {
        headers: masterHeaders,
        body: {
          name: `row ${String(i).padStart(2, '0')}`,
          weight: i % 3 === 0 ? i : i + 0.25,
          fresh: i % 2 === 0,
          ...(i % 4 === 3 ? {} : { found: { __type: 'Date', iso: `2024-02-${String(1 + i).padStart(2, '0')}T04:05:06.789Z` } }),
          crate: i % 2 === 0 ? cratePointer : { __type: 'Pointer', className: 'Crate', objectId: other.id },
          place: { __type: 'GeoPoint', latitude: 52.5 + i / 100, longitude: 13.4 },
          photo: { __type: 'File', name: `photo-${i}.txt` },
          details: { nested: { deeper: [1, 'two', { three: null }] }, when: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' }, i },
          tags: ['a', cratePointer, i],
          related: { __op: 'AddRelation', objects: [cratePointer] },
          area: { __type: 'Polygon', coordinates: [[0, 0], [0, 1], [1, 1], [1, 0]] },
          secret: `secret ${i}`,
          ...(ACL ? { ACL } : {})
        }
      })
      t.equal(created.status, 201, created.text)
    }
  }
  const someId = (await new Parse.Query('Sample').ascending('name').first({ useMasterKey: true }))!.id

  const config = parseConfig(APP_ID)
  const user = (id: string) => Parse.User.createWithoutData(id) as Parse.User
  const callers = [
    { name: 'master key', headers: masterHeaders, caller: { master: true }, auth: () => AuthModule.master(config) },
    { name: 'alice (Curators)', headers: { ...appHeaders, 'x-parse-session-token': alice.token }, caller: { master: false, user: user(alice.id) }, auth: () => new AuthModule.Auth({ config, isMaster: false, user: user(alice.id) }) },
    { name: 'bob', headers: { ...appHeaders, 'x-parse-session-token': bob.token }, caller: { master: false, user: user(bob.id) }, auth: () => new AuthModule.Auth({ config, isMaster: false, user: user(bob.id) }) },
    { name: 'nobody', headers: appHeaders, caller: { master: false }, auth: () => AuthModule.nobody(config) }
  ]

  type Build = (query: Parse.Query) => Parse.Query
  const FOUND = { __type: 'Date', iso: '2024-02-05T04:05:06.789Z' }
  const LATER = { __type: 'Date', iso: new Date(Date.now() + 60_000).toISOString() }
  /** The query with this where (as Parse's JSON has it), its other options kept. */
  const whereOf = (query: Parse.Query, where: Record<string, unknown>) => Parse.Query.fromJSON(query.className, { ...query.toJSON(), where })
  /** Served: plain fields with plain values, plain order, pages, counts. */
  const served: Array<[string, Build, boolean]> = [
    ['everything by name, counted', (q) => q.ascending('name').limit(100), true],
    ['newest first, 5, counted', (q) => q.descending('createdAt').limit(5), true],
    ['a page past the start, counted', (q) => q.ascending('name').skip(3).limit(4), true],
    ['a page past the end, counted', (q) => q.ascending('name').skip(50).limit(4), true],
    ['limit 0 with a count', (q) => q.limit(0), true],
    ['no count', (q) => q.ascending('name').limit(7), false],
    ['equal to a string', (q) => q.equalTo('name', 'row 04').limit(10), true],
    ['not equal, number above', (q) => q.notEqualTo('name', 'row 01').greaterThan('weight', 2).ascending('weight,name').limit(20), true],
    ['number range, descending by number', (q) => q.greaterThanOrEqualTo('weight', 1).lessThan('weight', 8).descending('weight').limit(20), true],
    ['boolean and in', (q) => q.equalTo('fresh', true).containedIn('name', ['row 00', 'row 02', 'row 05', 'row 08']).ascending('name').limit(20), true],
    ['not in', (q) => q.notContainedIn('name', ['row 00', 'row 01']).ascending('name').limit(20), true],
    ['date before, exists', (q) => q.lessThan('found', new Date('2024-02-06T00:00:00.000Z')).exists('found').ascending('found').limit(20), true],
    ['date missing', (q) => q.doesNotExist('found').ascending('name').limit(20), true],
    ['by objectId alone (a get)', (q) => q.equalTo('objectId', someId), true],
    ['updatedAt order, createdAt bound', (q) => q.greaterThan('createdAt', new Date('2000-01-01T00:00:00.000Z')).descending('updatedAt').addAscending('name').limit(20), true],
    ['or', (q) => Parse.Query.or(q.equalTo('name', 'row 01'), new Parse.Query(q.className).equalTo('name', 'row 02')).ascending('name').limit(20), true],
    // The keyset condition pageRows sends: sortBy bounded, then (sortBy strictly past, or the same value and a later objectId).
    ['keyset page after a number, descending', (q) => whereOf(q, { fresh: true, $and: [{ weight: { $lte: 6 } }, { $or: [{ weight: { $lt: 6 } }, { objectId: { $lt: someId } }] }] }).descending('weight').addDescending('objectId').limit(4), true],
    ['keyset page after a date, ascending', (q) => whereOf(q, { $and: [{ found: { $gte: FOUND } }, { $or: [{ found: { $gt: FOUND } }, { objectId: { $gt: someId } }] }] }).ascending('found').addAscending('objectId').limit(4), true],
    ['keyset page after a createdAt, descending', (q) => whereOf(q, { $and: [{ createdAt: { $lte: LATER } }, { $or: [{ createdAt: { $lt: LATER } }, { objectId: { $lt: someId } }] }] }).descending('createdAt').addDescending('objectId').limit(6), false],
    ['keyset page after a string, with a count', (q) => whereOf(q, { $and: [{ name: { $gte: 'row 03' } }, { $or: [{ name: { $gt: 'row 03' } }, { objectId: { $gt: someId } }] }] }).ascending('name').addAscending('objectId').limit(3), true]
  ]
  /** Not served: Parse answers them. */
  const parseOnly: Array<[string, Build]> = [
    ['pointer equality', (q) => q.equalTo('crate', crate).ascending('name').limit(20)],
    ['include', (q) => q.include('crate').ascending('name').limit(3)],
    ['keys', (q) => q.select('name', 'weight').ascending('name').limit(5)],
    ['regular expression', (q) => q.matches('name', /^row 0/).ascending('name').limit(20)],
    ['array contains', (q) => q.equalTo('tags', 'a').ascending('name').limit(20)],
    ['relation', (q) => (q.equalTo('related', crate) as Parse.Query).ascending('name').limit(20)],
    ['or with a regular expression', (q) => Parse.Query.or(q.matches('name', /^row 0/), new Parse.Query(q.className).equalTo('name', 'row 12')).ascending('name').limit(20)],
    ['and with a pointer', (q) => whereOf(q, { $and: [{ crate: cratePointer }, { weight: { $gt: 1 } }] }).ascending('name').limit(20)],
    ['geo', (q) => q.withinKilometers('place', new Parse.GeoPoint(52.5, 13.4), 50).limit(20)]
  ]

  const restAnswer = async (query: Parse.Query, headers: Record<string, string>, count: boolean) => {
    const { where, ...options } = query.toJSON() as { where: unknown, [option: string]: unknown }
    const params = new URLSearchParams({ where: JSON.stringify(where ?? {}) })
    for (const [key, value] of Object.entries(options)) params.set(key, String(value))
    if (count) params.set('count', '1')
    return kit.request('GET', `/parse/classes/${query.className}?${params}`, { headers })
  }
  const readOf = (query: Parse.Query, count: boolean) => {
    const { where, ...options } = query.toJSON() as { where: Record<string, unknown>, [option: string]: unknown }
    return { className: query.className, where: where ?? {}, options: count ? { ...options, count: 1 } : options }
  }
  /** queryRows' answer as REST would send it, or REST's error shape. */
  const viaQueryRows = async (query: Parse.Query, caller: { master: boolean, user?: Parse.User }, count: boolean) => {
    try {
      return JSON.stringify(await queryRows(query, caller, { count }))
    } catch (error) {
      const { code, message } = error as Parse.Error
      return JSON.stringify({ code, error: message })
    }
  }

  t.test('every served case: the same bytes as REST, through the adapter read and through queryRows', async (t) => {
    let servedCount = 0
    for (const className of ['Sample', 'RoleSample', 'HiddenSample', 'AuthSample']) {
      for (const who of callers) {
        for (const [name, build, count] of served) {
          const label = `${className}, ${who.name}: ${name}`
          const rest = await restAnswer(build(new Parse.Query(className)), who.headers, count)
          const fast = await adapterRead(config, who.auth() as never, readOf(build(new Parse.Query(className)), count))
          // Served: every plain case on Sample; on RoleSample only for the role (and the master key); on HiddenSample and AuthSample only for the master key.
          // With fastPaths: false (FPK_FAST_PATHS=false) nothing is served and every answer is Parse's.
          const expectServed = FAST_PATHS && (className === 'Sample' || (className === 'RoleSample' ? who.name !== 'bob' && who.name !== 'nobody' : who.name === 'master key'))
          t.equal(fast !== undefined, expectServed, `${label}: ${expectServed ? 'served' : 'left to Parse'}`)
          if (fast !== undefined) {
            servedCount++
            t.equal(rest.status, 200, `${label}: REST answers`)
            t.equal(JSON.stringify(fast), rest.text, `${label}: same bytes as REST`)
          }
          t.equal(await viaQueryRows(build(new Parse.Query(className)), who.caller, count), rest.status === 200 ? rest.text : JSON.stringify(rest.json), `${label}: queryRows answers as REST`)
        }
      }
    }
    if (FAST_PATHS) t.ok(servedCount > 100, `the adapter read served ${servedCount} cases`)
    else t.equal(servedCount, 0, 'fastPaths: false: the adapter read served nothing')
  })

  t.test('every case it does not serve goes through Parse and answers as REST does', async (t) => {
    for (const className of CLASSES) {
      for (const who of callers) {
        const cases: Array<[string, Build, boolean]> = [...parseOnly.map(([name, build]): [string, Build, boolean] => [name, build, true])]
        // Plain queries on the classes whose rules it leaves to Parse (for these callers).
        const leftToParse = className === 'TriggerSample' ||
          (className === 'AuthSample' && who.name !== 'master key') ||
          (className === 'HiddenSample' && who.name !== 'master key') ||
          (className === 'RoleSample' && (who.name === 'bob' || who.name === 'nobody'))
        if (leftToParse) {
          cases.push(...served)
        }
        for (const [name, build, count] of cases) {
          const label = `${className}, ${who.name}: ${name}`
          t.equal(await adapterRead(config, who.auth() as never, readOf(build(new Parse.Query(className)), count)), undefined, `${label}: left to Parse`)
          const rest = await restAnswer(build(new Parse.Query(className)), who.headers, count)
          t.equal(await viaQueryRows(build(new Parse.Query(className)), who.caller, count), rest.status === 200 ? rest.text : JSON.stringify(rest.json), `${label}: queryRows answers as REST (${rest.status})`)
        }
      }
    }
  })

  t.test('a served read inside a transaction reads on the transaction', { skip: needsRealMongo() }, async (t) => {
    const plain = () => new Parse.Query('Sample').equalTo('name', 'written in the transaction').limit(5)
    if (FAST_PATHS) t.ok(await adapterRead(config, AuthModule.master(config) as never, readOf(plain(), true)), 'the query is one the adapter read serves')
    let inside: unknown
    await withTransaction(async () => {
      await new Sample({ name: 'written in the transaction' }).save(null, { useMasterKey: true })
      inside = await queryRows(plain(), { master: true }, { count: true })
      throw new Error('roll back')
    }).catch((error: Error) => { if (error.message !== 'roll back') throw error })
    t.equal((inside as { count: number }).count, 1, 'inside: the uncommitted row is read and counted')
    t.equal((await queryRows(plain(), { master: true }, { count: true })).count, 0, 'after the rollback it is gone')
  })

  t.test('the rules still hold on the served path', { skip: !FAST_PATHS && 'fastPaths: false serves nothing' }, async (t) => {
    const rows = async (who: typeof callers[number]) => (await adapterRead(config, who.auth() as never, readOf(new Parse.Query('Sample').ascending('name').limit(100), true)))!
    const [master, aliceRows, bobRows, nobody] = [await rows(callers[0]), await rows(callers[1]), await rows(callers[2]), await rows(callers[3])]
    t.equal(master.count, 12, 'the master key reads every row')
    t.equal(nobody.count, 6, 'nobody reads the public rows only (public, public with a writer, no ACL: 3 of every 6)')
    t.equal(aliceRows.count, 10, 'alice adds her own rows and her role\'s')
    t.equal(bobRows.count, 8, 'bob adds the rows he may read')
    t.equal(aliceRows.results.length, aliceRows.count, 'rows and count agree')
    t.ok(master.results.every((row) => !Object.keys(row).some((key) => key.startsWith('_'))), 'no hidden column leaves the server')
    const photo = master.results[0].photo as { url?: string }
    t.match(photo.url, /photo-0\.txt$/, 'file URLs are filled in as RestQuery does')
  })

  t.test('fastPaths switched off: the adapter read serves nothing, and queryRows answers as REST through Parse\'s RestQuery', async (t) => {
    readFastPathsFrom(() => false)
    t.teardown(() => readFastPathsFrom(() => FAST_PATHS))
    for (const who of callers) {
      for (const [name, build, count] of served.slice(0, 6)) {
        const label = `Sample, ${who.name}: ${name}`
        t.equal(await adapterRead(config, who.auth() as never, readOf(build(new Parse.Query('Sample')), count)), undefined, `${label}: left to Parse`)
        const rest = await restAnswer(build(new Parse.Query('Sample')), who.headers, count)
        t.equal(await viaQueryRows(build(new Parse.Query('Sample')), who.caller, count), rest.text, `${label}: queryRows answers as REST`)
      }
    }
  })
})

// ── from test/read-path.test.ts ──
// The read path of declared endpoints: rows read through queryRows (one schema
// load per query) and Parse objects a handler returns answer exactly what
// Parse's REST API answers for the same rows — every field type, with or
// without a response schema — and keep every read rule: ACLs, class-level
// permissions, protected fields, afterFind triggers. Each test fails if an
// optimised path changed an answer or skipped a rule.
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

// ── from test/create-row.test.ts ──
// createRow (lib/model/create-row.ts) against the SDK save it replaces in a
// handler: for every field type, ACL shape, class-level permission and
// trigger shape, and for every caller, `createRow(Class, fields, caller)`
// must store what `new Class(fields).save(null, asCaller(caller))` stores,
// refuse with the same code and message, and answer the stored row exactly as
// Parse's REST API reads it back. Parse's REST create runs beside both: the
// same status.
@ParseClass('RowCrate')
class RowCrate extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

/** One field of every type a create takes, a default, a required field, and no trigger. */
@ParseClass('PlainRow')
export class PlainRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
  @ParseField({ type: 'Number', default: 7 }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'RowCrate' }) declare crate: RowCrate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String', default: 'kept' }) declare secret: string
}

const afterSaves: string[] = []

/** The same fields, with a beforeSave that derives one field, drops another and refuses a name; an afterSave. */
@ParseClass('TriggerRow')
export class TriggerRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
  @ParseField({ type: 'Number', default: 7 }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'RowCrate' }) declare crate: RowCrate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String', default: 'kept' }) declare secret: string
  @ParseField({ type: 'String' }) declare derived: string
  @ParseField({ type: 'String' }) declare contextSeen: string
  @ParseField({ type: 'String' }) declare installation: string

  @BeforeSave()
  static before (request: Parse.Cloud.BeforeSaveRequest<TriggerRow>) {
    if (request.object.name === 'refused') throw new Parse.Error(Parse.Error.VALIDATION_ERROR, 'refused by beforeSave')
    request.object.derived = `${request.object.name}|${request.user?.id ?? (request.master ? 'master' : 'nobody')}`
    request.object.unset('secret') // its default comes back
    request.object.unset('fresh') // gone for good
    const note = (request.context as { note?: string }).note
    if (note) request.object.contextSeen = note
    if (request.object.name === 'installation') request.object.installation = request.installationId ?? 'none'
  }

  @AfterSave()
  static after (request: Parse.Cloud.AfterSaveRequest<TriggerRow>) {
    afterSaves.push(request.object.name)
  }
}

/** Creating granted to one role only. */
@ParseClass('RoleRow', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { 'role:RowMakers': true }, update: {}, delete: {} } })
export class RoleRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
}

/** Signed-in users only. */
@ParseClass('AuthRow', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { requiresAuthentication: true }, update: {}, delete: {} } })
export class AuthRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
}

const RowJSON = Type.Object({ objectId: Type.String(), name: Type.String(), weight: Type.Number(), createdAt: Type.String(), updatedAt: Type.String() })

/** A declared endpoint answering a created row, on both of its routes. */
@Route(PlainRow)
export class PlainRowFunctions {
  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    returns: RowJSON,
    validation: { fields: { name: { type: String, required: true } } }
  })
  static async makeRow (request: CloudRequest<{ name: string }>) {
    requireUser(request)
    return createRow<Static<typeof RowJSON>>(PlainRow, PlainRow.fieldsFromParams(request.params), request)
  }

  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { name: { type: String, required: true } } } })
  static async makeRowUntyped (request: CloudRequest<{ name: string }>) {
    requireUser(request)
    return createRow(PlainRow, PlainRow.fieldsFromParams(request.params), request)
  }
}

const ROW_CLASSES: Record<string, new (attributes?: Record<string, unknown>) => BaseModel> = { PlainRow, TriggerRow, RoleRow, AuthRow }
const FULL = new Set(['PlainRow', 'TriggerRow'])

/** Keys sorted at every level, so two JSON answers compare by content. */
function canonical (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
}

/** What differs between two creations of the same fields: the id, the times, and what the trigger derived from the caller. */
function comparable (row: Record<string, unknown>): unknown {
  const { objectId, createdAt, updatedAt, ...rest } = row
  return canonical({ ...rest, objectId: typeof objectId, createdAt: typeof createdAt, updatedAt: updatedAt === createdAt ? 'createdAt' : updatedAt })
}

/** An answer as text, with what differs between two creations (id and time) named instead. */
function masked (answer: Record<string, unknown>): string {
  return JSON.stringify({ ...answer, ...('objectId' in answer ? { objectId: 'id' } : {}), ...('createdAt' in answer ? { createdAt: 'time' } : {}) })
}

async function outcome (save: () => Promise<unknown>): Promise<{ ok: true, json: Record<string, unknown> } | { ok: false, code: number, message: string }> {
  try {
    const saved = await save()
    const json = saved instanceof Parse.Object ? saved.toJSON() : saved
    return { ok: true, json: json as Record<string, unknown> }
  } catch (error) {
    const { code, message } = error as Parse.Error
    return { ok: false, code, message }
  }
}

t.test('createRow answers and stores what the SDK save it replaces does, for every caller', async (t) => {
  const kit = await startKit(t, { allowedRoutes: Object.keys(ROW_CLASSES).map((name) => ({ path: `/classes/${name}`, methods: ['POST', 'GET'] })) })
  const alice = await kit.signUp('row-alice')
  const bob = await kit.signUp('row-bob')
  await addUsersToRole('RowMakers', [alice.id])
  const crate = await new RowCrate({ label: 'top' }).save(null, { useMasterKey: true })
  const sessionUser = (id: string, token: string) => Parse.User.fromJSON({ className: '_User', objectId: id, sessionToken: token }) as Parse.User
  const callers: Array<{ name: string, headers: Record<string, string>, caller: { master: boolean, user?: Parse.User } }> = [
    { name: 'master key', headers: masterHeaders, caller: { master: true } },
    { name: 'alice (RowMakers)', headers: { ...appHeaders, 'x-parse-session-token': alice.token }, caller: { master: false, user: sessionUser(alice.id, alice.token) } },
    { name: 'bob', headers: { ...appHeaders, 'x-parse-session-token': bob.token }, caller: { master: false, user: sessionUser(bob.id, bob.token) } },
    { name: 'nobody', headers: appHeaders, caller: { master: false } }
  ]
  const acls: Array<[string, () => Parse.ACL | undefined]> = [
    ['no ACL', () => undefined],
    ['public read', () => { const acl = new Parse.ACL(); acl.setPublicReadAccess(true); return acl }],
    ['alice only', () => new Parse.ACL({ [alice.id]: { read: true, write: true } })],
    ['a role and a writer', () => new Parse.ACL({ 'role:RowMakers': { read: true }, [bob.id]: { write: true } })]
  ]
  /** Field sets: every type; the smallest; a missing required field; a value the trigger refuses. */
  const fieldSets: Array<[string, (className: string) => Record<string, unknown>]> = [
    ['every field type', (className) => FULL.has(className)
      ? {
          name: 'full',
          weight: 2.5,
          fresh: true,
          found: new Date('2024-02-03T04:05:06.789Z'),
          crate,
          place: new Parse.GeoPoint(52.5, 13.4),
          photo: Parse.File.fromJSON({ __type: 'File', name: 'photo.txt', url: `${Parse.serverURL}/files/${APP_ID}/photo.txt` }),
          details: { nested: { deeper: [1, 'two', { three: null }] }, when: new Date('2020-01-01T00:00:00.000Z') },
          tags: ['a', crate, 3],
          area: new Parse.Polygon([[0, 0], [0, 1], [1, 1], [1, 0]]),
          secret: 'sent'
        }
      : { name: 'full' }],
    ['the required field only', () => ({ name: 'small' })],
    ['the required field missing', () => (({ fresh: false }))],
    ['refused by the trigger', () => ({ name: 'refused' })]
  ]

  let compared = 0
  for (const [className, Class] of Object.entries(ROW_CLASSES)) {
    for (const who of callers) {
      for (const [aclName, acl] of acls) {
        for (const [setName, fields] of fieldSets) {
          if (setName === 'refused by the trigger' && className !== 'TriggerRow') continue
          const label = `${className}, ${who.name}, ${aclName}, ${setName}`
          const values = (): Record<string, unknown> => { const made = acl(); return { ...fields(className), ...(made ? { ACL: made } : {}) } }
          const bySdk = await outcome(() => new Class(values()).save(null, asCaller({ user: undefined, ...who.caller })))
          const byRow = await outcome(() => createRow(className, values(), who.caller))
          const restBody = (new Class(values()) as Parse.Object & { _getSaveJSON (): Record<string, unknown> })._getSaveJSON()
          const rest = await kit.request('POST', `/parse/classes/${className}`, { headers: who.headers, body: restBody })
          t.equal(byRow.ok, bySdk.ok, `${label}: createRow ${bySdk.ok ? 'creates' : 'refuses'} as the SDK save does`)
          t.equal(rest.status === 201, bySdk.ok, `${label}: as REST does (${rest.status})`)
          // RestWrite's ordinary steps (parse/lean-create.ts, which createRow and the SDK's saves take) against Parse's REST create: the same bytes.
          const lean = await outcome(() => createObject({ config: parseConfig(APP_ID), schemaMemo: schemaMemo() }, className, { ...restBody }, who.caller.master ? { useMasterKey: true } : { sessionToken: who.caller.user?.getSessionToken() }))
          t.equal(lean.ok ? masked(lean.json) : JSON.stringify({ code: lean.code, error: lean.message }), rest.status === 201 ? masked(rest.json) : rest.text, `${label}: RestWrite's ordinary steps answer REST's bytes`)
          if (!byRow.ok || !bySdk.ok) {
            if (!byRow.ok && !bySdk.ok) t.same({ code: byRow.code, message: byRow.message }, { code: bySdk.code, message: bySdk.message }, `${label}: the same refusal`)
            continue
          }
          compared++
          const stored = async (id: unknown) => (await kit.request('GET', `/parse/classes/${className}/${id}`, { headers: masterHeaders })).json as Record<string, unknown>
          const [rowStored, sdkStored] = [await stored(byRow.json.objectId), await stored(bySdk.json.objectId)]
          // The database closes a polygon's ring; the answer keeps the points sent, as the SDK's saved object does.
          const { area: answeredArea, ...answered } = byRow.json as { area?: { coordinates: number[][] } }
          const { area: storedArea, ...storedRest } = rowStored as { area?: { coordinates: number[][] } }
          t.same(canonical(answered), canonical(storedRest), `${label}: the answer is the stored row, as REST reads it`)
          if (setName === 'every field type' && FULL.has(className)) t.same([...answeredArea!.coordinates, answeredArea!.coordinates[0]], storedArea?.coordinates, `${label}: the polygon answered, and stored closed by the database`)
          t.same(comparable(rowStored), comparable(sdkStored), `${label}: the same row as the SDK save stores`)
        }
      }
    }
  }
  t.ok(compared >= 40, `${compared} created rows compared`)

  t.test('the context reaches the triggers; operations are refused; a class name or a model', async (t) => {
    const row = await createRow<{ contextSeen?: string }>(TriggerRow, { name: 'with context' }, { master: true }, { context: { note: 'from the handler' } })
    t.equal(row.contextSeen, 'from the handler', 'beforeSave read the context')
    await createRow(TriggerRow, { name: 'after save probe' }, { master: true })
    t.ok(afterSaves.includes('after save probe'), 'afterSave ran for a createRow')
    // As asCaller gives the SDK: no installation id of the client's, Parse's 'cloud'.
    const withInstallation = { master: false, user: sessionUser(alice.id, alice.token), installationId: 'client-installation' }
    const viaRow = await createRow<{ installation?: string }>(TriggerRow, { name: 'installation' }, withInstallation)
    const viaSdk = await new TriggerRow({ name: 'installation' }).save(null, asCaller({ user: withInstallation.user, master: false }))
    t.equal(viaRow.installation, viaSdk.get('installation'), `the trigger sees the installation the SDK save gives it (${viaSdk.get('installation')})`)
    // An ACL as Parse stores it (granted permissions only); a null as sent (PostgreSQL's GET leaves a null column out, MongoDB's answers it).
    const sparse = await createRow(PlainRow, { name: 'sparse', fresh: null, ACL: { [alice.id]: { read: true, write: false }, [bob.id]: { read: false } } }, { master: true })
    const read = (await kit.request('GET', `/parse/classes/PlainRow/${sparse.objectId}`, { headers: masterHeaders })).json
    t.equal(sparse.fresh, null, 'the null answered as sent')
    t.equal((await createRow<{ weight: number }>(PlainRow, { name: 'undefined', weight: undefined }, { master: true })).weight, 7, 'an undefined value is not sent: the default applies')
    t.same(canonical({ ...sparse, fresh: undefined }), canonical({ ...read, fresh: undefined }), 'denied permissions: the answer is the row GET reads')
    await t.rejects(createRow(PlainRow, { name: 'x', crate: new RowCrate({ label: 'unsaved' }) }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /createRow: crate: .*unsaved/ }, 'an unsaved object: 142 naming the field')
    await t.rejects(createRow(PlainRow, { name: 'x', ACL: { someone: { read: 'yes' } } }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /createRow: ACL: / }, 'an ACL Parse.ACL refuses: 142')
    await t.rejects(createRow('_User', { username: 'u', password: 'p' }, { master: true }), /_User has rules of its own/, '_User: the SDK creates it')
    await t.rejects(createRow('PlainRow', { name: 'x', weight: { __op: 'Increment', amount: 1 } }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /weight is an operation/ })
    // Parse's own classes take rest.create itself (lean-create serves ordinary classes only).
    const role = await createRow<{ name: string }>('_Role', { name: 'RowRole', ACL: new Parse.ACL({ '*': { read: true } }) }, { master: true })
    t.equal(role.name, 'RowRole', 'a _Role created through Parse\'s own path')
    t.equal((await new Parse.Query(Parse.Role).equalTo('name', 'RowRole').first({ useMasterKey: true }))?.id, role.objectId, 'and stored')
    await t.rejects(createRow(class NotAModel extends Parse.Object {}, { name: 'x' }, { master: true }), /NotAModel has no @ParseClass/)
  })

  t.test('a declared endpoint answers the row; Parse\'s /functions route tags it as a Parse object', async (t) => {
    const headers = { ...appHeaders, 'x-parse-session-token': alice.token }
    const plain = await kit.request('POST', '/parse/plain-rows/makeRow', { headers, body: { name: 'declared' } })
    t.equal(plain.status, 200, plain.text)
    t.same(Object.keys(plain.json).sort(), ['createdAt', 'name', 'objectId', 'updatedAt', 'weight'], 'the declared answer: the schema\'s fields, the default included')
    t.equal(plain.json.weight, 7, 'the default the server set')
    const twin = await kit.request('POST', '/parse/functions/makeRow', { headers, body: { name: 'through functions' } })
    t.equal(twin.status, 200, twin.text)
    t.match(twin.json.result, { __type: 'Object', className: 'PlainRow', name: 'through functions', weight: 7 }, 'tagged: Parse.Cloud.run decodes a Parse.Object')
    const { __type: _tag, ...json } = twin.json.result
    const decoded = Parse.Object.fromJSON(json)
    t.ok(decoded instanceof Parse.Object && decoded.id === twin.json.result.objectId && decoded.get('weight') === 7, 'the SDK decodes it into a PlainRow')
    const untyped = await kit.request('POST', '/parse/functions/makeRowUntyped', { headers, body: { name: 'without returns' } })
    t.match(untyped.json.result, { __type: 'Object', className: 'PlainRow', name: 'without returns', weight: 7 }, 'tagged without `returns` too')
  })

  t.test('inside a transaction, a createRow is rolled back with it', { skip: needsRealMongo() }, async (t) => {
    await withTransaction(async () => {
      await createRow(PlainRow, { name: 'rolled back' }, { master: true })
      throw new Error('roll back')
    }).catch((error: Error) => { if (error.message !== 'roll back') throw error })
    t.equal(await new Parse.Query(PlainRow).equalTo('name', 'rolled back').count({ useMasterKey: true }), 0, 'no row after the rollback')
  })
})

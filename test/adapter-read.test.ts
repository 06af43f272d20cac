// Reads and writes checked against Parse's own answers, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - adapter-read: this file's own tests (first part, its comment kept)
// - test/read-path.test.ts (merged here): The read path of declared endpoints: rows read through queryRows (one schema …
// - test/create-row.test.ts (merged here): createRow (lib/model/create-row.ts) against the SDK save it replaces in a …
// - test/paging.test.ts (merged here, in a block of its own at the end; it held test/count-modes.test.ts): keyset paging over HTTP and queryRows' count modes, each compared with Parse's own answers
import t, { type Test } from 'tap'
import Parse from 'parse/node'
import { AfterFind, Type, type Static, BaseModel, BeforeFind, ParseClass, ParseField, addUsersToRole, pageOf, pageRows, pagingFields, queryRows, withTransaction, CloudFunction, Route, asCaller, type CloudRequest, type CountMode, type QueryCaller, AfterSave, BeforeSave, createRow, requireUser } from '../lib/index.js'
import { adapterRead } from '../lib/parse/adapter-read.js'
import { parseInternals } from '../lib/parse/internals.js'
import { parseConfig, schemaMemo } from '../lib/access/parse-config.js'
import { APP_ID, appHeaders, lane, masterHeaders, needsRealMongo, startKit, type Kit } from './helpers/kit.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { readFastPathsFrom } from '../lib/parse/fast-path-switch.js'
import { createObject } from '../lib/parse/direct-writes.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { AuthModule } = parseInternals()

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

  // Every plain case on every class for every caller, once: where the class's rules leave
  // it to Parse (TriggerSample; RoleSample for bob and nobody; HiddenSample and AuthSample
  // but for the master key) this is also the check that Parse answers it. The adapter read
  // is asked every case everywhere (it must serve none of a class it leaves to Parse), and
  // queryRows through Parse is compared with REST for every case on TriggerSample, for
  // every caller; on the three classes whose rule refuses a caller, for the cases below:
  // what they add is the rule's answer (a refusal, fewer rows, a hidden field), which the
  // query's shape does not change, and each option of the query is among them.
  const RULE_CASES = new Set(['everything by name, counted', 'newest first, 5, counted', 'a page past the start, counted', 'limit 0 with a count', 'no count', 'by objectId alone (a get)', 'keyset page after a date, ascending'])
  /** The adapter read serves this class for this caller (unless fastPaths is off): every plain case on Sample; on RoleSample only for the role (and the master key); on HiddenSample and AuthSample only for the master key; never on TriggerSample (an afterFind trigger). */
  const servedByRule = (className: string, who: string) => className !== 'TriggerSample' &&
    (className === 'Sample' || (className === 'RoleSample' ? who !== 'bob' && who !== 'nobody' : who === 'master key'))
  t.test('every served case: the same bytes as REST, through the adapter read and through queryRows', async (t) => {
    let servedCount = 0
    for (const className of CLASSES) {
      for (const who of callers) {
        for (const [name, build, count] of served) {
          const label = `${className}, ${who.name}: ${name}`
          const fast = await adapterRead(config, who.auth() as never, readOf(build(new Parse.Query(className)), count))
          // With fastPaths: false (FPK_FAST_PATHS=false) nothing is served and every answer is Parse's.
          const expectServed = FAST_PATHS && servedByRule(className, who.name)
          t.equal(fast !== undefined, expectServed, `${label}: ${expectServed ? 'served' : 'left to Parse'}`)
          const refusedByRule = className !== 'TriggerSample' && !servedByRule(className, who.name)
          if (fast === undefined && refusedByRule && !RULE_CASES.has(name)) continue
          const rest = await restAnswer(build(new Parse.Query(className)), who.headers, count)
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

  // The plain cases on the classes whose rules leave them to Parse are compared above, once.
  t.test('every case it does not serve goes through Parse and answers as REST does', async (t) => {
    for (const className of CLASSES) {
      for (const who of callers) {
        for (const [name, build] of parseOnly) {
          const label = `${className}, ${who.name}: ${name}`
          t.equal(await adapterRead(config, who.auth() as never, readOf(build(new Parse.Query(className)), true)), undefined, `${label}: left to Parse`)
          const rest = await restAnswer(build(new Parse.Query(className)), who.headers, true)
          t.equal(await viaQueryRows(build(new Parse.Query(className)), who.caller, true), rest.status === 200 ? rest.text : JSON.stringify(rest.json), `${label}: queryRows answers as REST (${rest.status})`)
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
/** The field sets every class refuses, whoever calls and whatever the ACL. */
const REFUSED_SETS = new Set(['the required field missing', 'refused by the trigger'])

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
  /**
   * Field sets: every type (on the classes that declare them; the others' only field is
   * the required one); the smallest; a missing required field; a value the trigger refuses.
   */
  const fieldSets: Array<[string, () => Record<string, unknown>]> = [
    ['every field type', () => ({
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
    })],
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
          if (setName === 'every field type' && !FULL.has(className)) continue
          // These sets are refused whatever the ACL (every ACL here is valid): one ACL, the richest, shows the refusal.
          if (REFUSED_SETS.has(setName) && aclName !== 'a role and a writer') continue
          const label = `${className}, ${who.name}, ${aclName}, ${setName}`
          const values = (): Record<string, unknown> => { const made = acl(); return { ...fields(), ...(made ? { ACL: made } : {}) } }
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

// ── paging (from test/paging.test.ts, in a block of its own: its helpers keep their names) ──
{
  // ── paging ──
  // pageRows, keyset paging over real HTTP: a walk through every page meets
  // each row once, in order, with many equal sort values; rows deleted or
  // inserted between pages are neither skipped nor repeated; pages of a session
  // user and of an anonymous caller hold exactly the rows each may read, full
  // while readable rows remain; a cursor edited, cut short or taken from another
  // list is 400 naming `after`; skip/page/offset are refused, naming `after`.
  // On PostgreSQL, with 120,000 rows filled by SQL, a page 10,000 rows deep is
  // read through the (createdAt, objectId) index, as EXPLAIN shows.
  @ParseClass('Ledger')
  class Ledger extends BaseModel {
    @ParseField({ type: 'Number' }) declare seq: number
    @ParseField({ type: 'Date' }) declare at: Date
    @ParseField({ type: 'String' }) declare label: string
    @ParseField({ type: 'String' }) declare shelf: string
  }

  @ParseClass('Journal')
  class Journal extends BaseModel {
    @ParseField({ type: 'String' }) declare label: string
  }

  const LedgerJSON = Type.Object({
    objectId: Type.String(),
    seq: Type.Optional(Type.Number()),
    label: Type.Optional(Type.String()),
    shelf: Type.Optional(Type.String()),
    at: Type.Optional(Type.Unknown()),
    ACL: Type.Optional(Type.Unknown()),
    createdAt: Type.String(),
    updatedAt: Type.String()
  })

  /** `count` as a request parameter: exact, estimated, none, or upTo:N. */
  function countParam (value: string | undefined): CountMode | undefined {
    if (value === undefined) return undefined
    const capped = /^upTo:(\d+)$/.exec(value)
    return capped ? { upTo: Number(capped[1]) } : value as CountMode
  }

  @Route('ledger')
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
  class LedgerFunctions {
    @CloudFunction({
      methods: ['GET'],
      returns: pageOf(LedgerJSON, { description: 'Ledger rows, a page at a time.' }),
      validation: { fields: { ...pagingFields, shelf: { type: String }, sortBy: { type: String, options: ['createdAt', 'seq', 'at', 'label'] }, ascending: { type: Boolean }, count: { type: String } } }
    })
    static async list (request: CloudRequest<{ limit?: number, after?: string, shelf?: string, sortBy?: string, ascending?: boolean, count?: string }>) {
      const query = new Parse.Query(Ledger)
      if (request.params.shelf) query.equalTo('shelf', request.params.shelf)
      return pageRows<Static<typeof LedgerJSON>>(query, request, { limit: request.params.limit, sortBy: request.params.sortBy, descending: request.params.ascending !== true, count: countParam(request.params.count) })
    }
  }

  type Page = { results: Array<{ objectId: string, seq?: number }>, next: string | null, count?: number, countKind?: string }

  /** Every page of a list, following `next`; the ids in the order met and the page sizes. */
  async function walk (kit: Kit, query: Record<string, string>, headers: Record<string, string> = appHeaders): Promise<{ ids: string[], sizes: number[], pages: Page[] }> {
    const ids: string[] = []
    const sizes: number[] = []
    const pages: Page[] = []
    let after: string | null = null
    for (let guard = 0; guard < 500; guard++) {
      const params = new URLSearchParams({ ...query, ...(after ? { after } : {}) })
      const answer = await kit.request('GET', `/parse/ledger/list?${params}`, { headers })
      if (answer.status !== 200) throw new Error(`page ${guard + 1}: ${answer.status} ${answer.text}`)
      const page = answer.json as Page
      pages.push(page)
      ids.push(...page.results.map((row) => row.objectId))
      sizes.push(page.results.length)
      after = page.next
      if (after === null) return { ids, sizes, pages }
    }
    throw new Error('no last page after 500 pages')
  }

  /** The ids of a shelf in the database's own order (sort field, then objectId), as the master key reads them. */
  async function ordered (shelf: string, sortBy: string, descending: boolean, caller: { master: boolean, user?: Parse.User } = { master: true }): Promise<string[]> {
    const query = new Parse.Query(Ledger).equalTo('shelf', shelf).limit(1000)
    if (descending) query.descending(sortBy).addDescending('objectId')
    else query.ascending(sortBy).addAscending('objectId')
    return (await queryRows<{ objectId: string }>(query, caller)).results.map((row) => row.objectId)
  }

  async function saveRows (rows: Array<Record<string, unknown>>): Promise<Parse.Object[]> {
    return await Parse.Object.saveAll(rows.map((fields) => new Ledger(fields as never)), { useMasterKey: true })
  }

  // Run at the end of this block, on the one kit it shares with the two parts below.
  const keysetPaging = async (t: Test, kit: Kit): Promise<void> => {
    const alice = await kit.signUp('pager-alice')
    const bob = await kit.signUp('pager-bob')

    t.test('many equal sort values: each row once, in order', async (t) => {
      // 37 rows, seq 0…4: runs of seven or eight equal values; ties are broken by objectId.
      await saveRows(Array.from({ length: 37 }, (_, i) => ({ shelf: 'ties', seq: i % 5, label: `tie ${i}` })))
      for (const [sortBy, descending] of [['seq', true], ['seq', false], ['createdAt', true]] as const) {
        const expected = await ordered('ties', sortBy, descending)
        const walked = await walk(kit, { shelf: 'ties', sortBy, limit: '4', ...(descending ? {} : { ascending: 'true' }) }, masterHeaders)
        t.same(walked.ids, expected, `${sortBy} ${descending ? 'descending' : 'ascending'}: the walk meets every row once, in the database's order`)
        t.same(walked.sizes, [...Array(9).fill(4), 1], 'full pages, then the rest; next is null on the last page')
      }
    })

    t.test('rows with one createdAt (written by SQL) page without loss', { skip: lane.kind === 'mongo' ? 'createdAt is set by SQL on PostgreSQL' : false }, async (t) => {
      await saveRows(Array.from({ length: 23 }, (_, i) => ({ shelf: 'same-time', seq: i })))
      const pg = (currentDatabase()!.adapter as unknown as { _client: { none (sql: string, values?: unknown): Promise<null> } })._client
      await pg.none('UPDATE "Ledger" SET "createdAt" = $1 WHERE shelf = $2', ['2026-03-01T12:00:00.000Z', 'same-time'])
      const expected = await ordered('same-time', 'createdAt', true)
      t.equal(expected.length, 23)
      const walked = await walk(kit, { shelf: 'same-time', limit: '5' }, masterHeaders)
      t.same(walked.ids, expected, 'all 23 rows share one createdAt: objectId orders them, none lost or repeated')
      t.same(walked.sizes, [5, 5, 5, 5, 3])
    })

    t.test('deletes and inserts between pages', async (t) => {
      const rows = await saveRows(Array.from({ length: 30 }, (_, i) => ({ shelf: 'churn', seq: Math.floor(i / 3) })))
      const before = await ordered('churn', 'seq', true)
      const first = (await kit.request('GET', '/parse/ledger/list?shelf=churn&sortBy=seq&limit=5', { headers: masterHeaders })).json as Page
      t.same(first.results.map((row) => row.objectId), before.slice(0, 5))
      const cursorRow = before[4]
      const laterRow = before[12]
      // The cursor's own row and a row not yet seen go; a row sorting before the cursor and one after it arrive.
      await rows.find((row) => row.id === cursorRow)!.destroy({ useMasterKey: true })
      await rows.find((row) => row.id === laterRow)!.destroy({ useMasterKey: true })
      const [early, late] = await saveRows([{ shelf: 'churn', seq: 100, label: 'sorts before the cursor' }, { shelf: 'churn', seq: 0.5, label: 'sorts after the cursor' }])
      const rest: string[] = []
      let after = first.next
      while (after) {
        const page = (await kit.request('GET', `/parse/ledger/list?shelf=churn&sortBy=seq&limit=5&after=${after}`, { headers: masterHeaders })).json as Page
        rest.push(...page.results.map((row) => row.objectId))
        after = page.next
      }
      const now = await ordered('churn', 'seq', true)
      const expected = now.filter((id) => id === late.id! || before.slice(5).includes(id))
      t.same(rest, expected, 'the pages after the first hold every remaining row after the cursor once, the new later row in its place')
      t.notOk(rest.includes(laterRow), 'a row deleted before its page is not listed')
      t.notOk(rest.includes(early.id!), 'a row inserted before the cursor is not listed (it belongs to pages already read)')
      t.equal(new Set([...first.results.map((row) => row.objectId), ...rest]).size, 5 + rest.length, 'no row is listed twice')
    })

    t.test('pages hold the rows the caller may read, full while rows remain', async (t) => {
      const acls = [{ '*': { read: true } }, { [alice.id]: { read: true, write: true } }, { [bob.id]: { read: true, write: true } }]
      const rows = Array.from({ length: 24 }, (_, i) => {
        const row = new Ledger({ shelf: 'acl', seq: i % 4 } as never)
        row.setACL(new Parse.ACL(acls[i % 3] as never))
        return row
      })
      await Parse.Object.saveAll(rows, { useMasterKey: true })
      const asAlice = { ...appHeaders, 'x-parse-session-token': alice.token }
      const aliceWalk = await walk(kit, { shelf: 'acl', sortBy: 'seq', limit: '5', count: 'exact' }, asAlice)
      const aliceCanRead = await ordered('acl', 'seq', true, { master: false, user: Parse.User.createWithoutData(alice.id) as Parse.User })
      t.equal(aliceCanRead.length, 16, 'alice may read the public rows and her own')
      t.same(aliceWalk.ids, aliceCanRead, 'alice: every row she may read, once, in order')
      t.same(aliceWalk.sizes, [5, 5, 5, 1], 'alice: full pages while rows remain')
      t.ok(aliceWalk.pages.every((page) => page.count === 16 && page.countKind === 'exact'), 'the count is of the whole list, on every page')
      const anonymousWalk = await walk(kit, { shelf: 'acl', sortBy: 'seq', limit: '3' })
      const publicRows = await ordered('acl', 'seq', true, { master: false })
      t.equal(publicRows.length, 8)
      t.same(anonymousWalk.ids, publicRows, 'anonymous: the public rows only, in order')
      t.same(anonymousWalk.sizes, [3, 3, 2])
      t.notOk(anonymousWalk.ids.some((id) => !publicRows.includes(id)), 'no owner-only row reaches an anonymous caller')
    })

    t.test('cursors that are not this list\'s are 400 naming after', async (t) => {
      const page = (await kit.request('GET', '/parse/ledger/list?shelf=acl&sortBy=seq&limit=2', { headers: masterHeaders })).json as Page
      const other = (await kit.request('GET', '/parse/ledger/list?shelf=churn&sortBy=seq&limit=2', { headers: masterHeaders })).json as Page
      const cursor = page.next!
      const [payload, mac] = cursor.split('.') as [string, string]
      const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
      const forged = Buffer.from(JSON.stringify(['n', 99, 'zzzzzzzzzz'])).toString('base64url')
      const cases: Array<[string, string, string]> = [
        ['a character of the position changed', `${flip(payload, 3)}.${mac}`, 'shelf=acl&sortBy=seq'],
        ['a character of the signature changed', `${payload}.${flip(mac, 5)}`, 'shelf=acl&sortBy=seq'],
        ['cut short', cursor.slice(0, -4), 'shelf=acl&sortBy=seq'],
        ['the position alone', payload, 'shelf=acl&sortBy=seq'],
        ['a position of its own with the old signature', `${forged}.${mac}`, 'shelf=acl&sortBy=seq'],
        ['from another filter', other.next!, 'shelf=acl&sortBy=seq'],
        ['from another sort field', cursor, 'shelf=acl&sortBy=label'],
        ['from the other direction', cursor, 'shelf=acl&sortBy=seq&ascending=true'],
        ['not base64', '%%%.***', 'shelf=acl&sortBy=seq'],
        ['far too long', 'a'.repeat(5000), 'shelf=acl&sortBy=seq']
      ]
      for (const [name, after, query] of cases) {
        const answer = await kit.request('GET', `/parse/ledger/list?${query}&after=${encodeURIComponent(after)}`, { headers: masterHeaders })
        t.equal(answer.status, 400, `${name}: 400`)
        t.same(answer.json, { code: 142, error: 'after: not a cursor of this list; start again without it' }, `${name}: names after`)
      }
      const good = await kit.request('GET', `/parse/ledger/list?shelf=acl&sortBy=seq&limit=2&after=${encodeURIComponent(cursor)}`, { headers: masterHeaders })
      t.equal(good.status, 200, 'the untouched cursor still works')
      t.equal((await kit.request('GET', '/parse/ledger/list?shelf=acl&sortBy=seq&after=', { headers: masterHeaders })).status, 200, 'an empty after is the first page')
    })

    t.test('skip, page and offset are refused, naming after', async (t) => {
      for (const name of ['skip', 'page', 'offset']) {
        const answer = await kit.request('GET', `/parse/ledger/list?shelf=acl&${name}=10`, { headers: masterHeaders })
        t.equal(answer.status, 400, `${name}: 400`)
        t.same(answer.json, { code: 142, error: `${name} is not supported: page with \`after\` (the \`next\` of the previous page)` })
      }
    })

    t.test('a query with its own order or skip is a programming error', async (t) => {
      await t.rejects(pageRows(new Parse.Query(Ledger).descending('seq'), { master: true }), /pageRows sets the order itself/)
      await t.rejects(pageRows(new Parse.Query(Ledger).skip(5), { master: true }), /remove skip\(\)/)
      await t.rejects(pageRows(new Parse.Query(Ledger), { master: true }, { sortBy: 'seq; DROP' }), /sortBy must name a plain field/)
    })

    t.test('rows without a sort value are not listed, nor counted', async (t) => {
      await saveRows(Array.from({ length: 9 }, (_, i) => (i % 3 === 0 ? { shelf: 'gaps', label: `no seq ${i}` } : { shelf: 'gaps', seq: i, label: `seq ${i}` })))
      for (const ascending of [false, true]) {
        const walked = await walk(kit, { shelf: 'gaps', sortBy: 'seq', limit: '2', count: 'exact', ...(ascending ? { ascending: 'true' } : {}) }, masterHeaders)
        t.same(walked.ids, await ordered('gaps', 'seq', !ascending).then(async (ids) => {
          const withSeq = new Set((await new Parse.Query(Ledger).equalTo('shelf', 'gaps').exists('seq').find({ useMasterKey: true })).map((row) => row.id))
          return ids.filter((id) => withSeq.has(id))
        }), `${ascending ? 'ascending' : 'descending'}: the six rows with a seq, in order`)
        t.same(walked.sizes, [2, 2, 2])
        t.equal(walked.pages[0].count, 6, 'the count is of the rows listed')
      }
    })

    t.test('a query that selects keys pages too (its sort key is read with them)', async (t) => {
      const query = () => new Parse.Query(Ledger).equalTo('shelf', 'ties').select('label')
      const first = await pageRows<{ objectId: string, label: string }>(query(), { master: true }, { sortBy: 'seq', limit: 30 })
      const second = await pageRows<{ objectId: string, label: string }>(query(), { master: true, params: { after: first.next } }, { sortBy: 'seq', limit: 30 })
      t.same([first.results.length, second.results.length, second.next], [30, 7, null])
      t.same([...first.results, ...second.results].map((row) => row.objectId), await ordered('ties', 'seq', true))
    })

    t.test('the answer schema says what next, count and countKind mean', async (t) => {
      const schema = pageOf(LedgerJSON) as unknown as { properties: Record<string, { description?: string, enum?: unknown[] }>, required: string[] }
      t.same(schema.required.sort(), ['next', 'results'])
      t.match(schema.properties.next.description, /after/)
      t.match(schema.properties.count.description, /countKind/)
      t.match(schema.properties.countKind.description, /exact.*estimated.*atLeast/s)
      t.same(schema.properties.countKind.enum, ['exact', 'estimated', 'atLeast'])
      t.same(pagingFields.after.type, String)
    })
  }

  // On the block's one kit (a database on the file's shared server: its plan is the table's, whose statistics are per database).
  const deepPage = async (t: Test): Promise<void> => {
    type Pg = { none (sql: string, values?: unknown): Promise<null>, any (sql: string, values?: unknown): Promise<Array<Record<string, any>>>, one (sql: string, values?: unknown): Promise<Record<string, any>> }
    const adapter = currentDatabase()!.adapter as unknown as { _client: Pg, _pgp: { as: { format (sql: string, values?: unknown): string } } }
    const pg = adapter._client
    await new Journal({ label: 'makes the table' } as never).save(null, { useMasterKey: true })
    // Parse's row format; ten rows share each createdAt, half are public, half readable by one user only.
    await pg.none(`
      INSERT INTO "Journal" ("objectId", "createdAt", "updatedAt", label, _rperm, _wperm)
      SELECT 'j' || lpad(to_hex((i::bigint * 2654435761) % 68719476736), 9, '0'),
             timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
             timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
             'row ' || i,
             CASE WHEN i % 2 = 0 THEN ARRAY['*'] ELSE ARRAY['someoneElse'] END,
             ARRAY['someoneElse']
      FROM generate_series(1, 120000) AS i`)
    // The index a list by createdAt needs (the example app and the generated resource declare it).
    await pg.none('CREATE INDEX "Journal_createdAt_objectId" ON "Journal" ("createdAt", "objectId")')
    await pg.none('VACUUM ANALYZE "Journal"')

    // Every statement the adapter sends while a page is read.
    const sent: string[] = []
    const capture = async <T>(work: () => Promise<T>): Promise<T> => {
      const real = adapter._client
      adapter._client = new Proxy(real, {
        get (target, property, receiver) {
          const value = Reflect.get(target, property, receiver)
          if (property !== 'any' || typeof value !== 'function') return value
          return (sql: string, values?: unknown) => { sent.push(adapter._pgp.as.format(sql, values)); return value.call(target, sql, values) }
        }
      })
      try { return await work() } finally { adapter._client = real }
    }

    for (const [who, caller] of [['master key', { master: true }], ['anonymous', { master: false }]] as const) {
      let after: string | null = null
      let firstMs = 0
      let deepMs = 0
      // 100 pages of 100: the 101st starts 10,000 rows deep.
      for (let page = 1; page <= 101; page++) {
        const started = performance.now()
        const answer: { next: string | null, results: unknown[] } = page === 101
          ? await capture(() => pageRows(new Parse.Query(Journal), { ...caller, params: after ? { after } : {} }, { limit: 100 }))
          : await pageRows(new Parse.Query(Journal), { ...caller, params: after ? { after } : {} }, { limit: 100 })
        const ms = performance.now() - started
        if (page === 1) firstMs = ms
        if (page === 101) deepMs = ms
        t.equal(answer.results.length, 100, `${who}: page ${page} is full`)
        after = answer.next
        if (page < 101) t.ok(after, `${who}: page ${page} has a next`)
      }
      t.comment(`${who}: page 1 ${firstMs.toFixed(1)} ms, page 101 (10,000 rows deep) ${deepMs.toFixed(1)} ms`)
      const statement = sent.pop()!
      t.match(statement, /"createdAt" <= .* OR .*"objectId" < /s, `${who}: the keyset condition is in the statement`)
      t.comment(`${who}: page 101 is ${statement.replace(/\s+/g, ' ')}`)
      const [{ Plan: plan, 'Execution Time': executionMs }] = (await pg.one(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`))['QUERY PLAN']
      const nodes: Array<Record<string, any>> = []
      const visit = (node: Record<string, any>) => { nodes.push(node); for (const child of node.Plans ?? []) visit(child) }
      visit(plan)
      const scan = nodes.find((node) => node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan')
      t.ok(scan, `${who}: an index scan (${nodes.map((node) => node['Node Type']).join(' → ')})`)
      t.equal(scan?.['Index Name'], 'Journal_createdAt_objectId', `${who}: on (createdAt, objectId)`)
      t.equal(scan?.['Scan Direction'], 'Backward', `${who}: newest first, read backward`)
      t.notOk(nodes.some((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan'), `${who}: no sort, no table scan`)
      const visited = (scan?.['Actual Rows'] ?? 0) + (scan?.['Rows Removed by Filter'] ?? 0)
      t.ok(visited < 1000, `${who}: the scan visits ${visited} index entries for a page of 100, not the 10,000 before it`)
      t.comment(`${who}: EXPLAIN ANALYZE of page 101: ${nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''} (rows ${node['Actual Rows']}, removed ${node['Rows Removed by Filter'] ?? 0})`).join(' → ')}; ${executionMs} ms; shared buffers hit ${plan['Shared Hit Blocks']}`)
      // The same depth by OFFSET, for the record.
      const offset = statement.replace(/WHERE .* ORDER BY/s, (match) => match.includes('_rperm') ? 'WHERE ("_rperm" IS NULL OR "_rperm" && ARRAY[\'*\']) ORDER BY' : 'ORDER BY').replace(/LIMIT \d+/, 'LIMIT 101 OFFSET 10000')
      const [{ 'Execution Time': offsetMs }] = (await pg.one(`EXPLAIN (ANALYZE, FORMAT JSON) ${offset}`))['QUERY PLAN']
      t.comment(`${who}: the same page by OFFSET 10000: ${offsetMs} ms`)
    }

    for (const [who, caller] of [['master key', { master: true }], ['anonymous', { master: false }]] as const) {
      const timed = async (count: CountMode) => {
        const started = performance.now()
        const answer = await queryRows(new Parse.Query(Journal).limit(0), caller, { count })
        return { ...answer, ms: performance.now() - started }
      }
      const exact = await timed('exact')
      const capped = await timed({ upTo: 1000 })
      const estimated = await timed('estimated')
      t.equal(exact.count, who === 'anonymous' ? 60001 : 120001, `${who}: exact (the filled rows and the one saved first, public)`)
      t.same([capped.count, capped.countKind], [1000, 'atLeast'], `${who}: capped at 1000`)
      if (FAST_PATHS) {
        t.equal(estimated.countKind, 'estimated')
        t.ok(estimated.count! > exact.count! / 2 && estimated.count! < exact.count! * 2, `${who}: the planner's estimate ${estimated.count} is near ${exact.count}`)
      } else {
        // Parse's own chain (fastPaths: false) has no planner estimate: 'estimated' falls back to a capped count, as behind a find trigger.
        t.same([estimated.count, estimated.countKind], [1000, 'atLeast'], `${who}: on Parse's own chain, the estimate falls back to a count capped at 1000`)
      }
      t.comment(`${who}: exact count ${exact.ms.toFixed(1)} ms, capped at 1000 ${capped.ms.toFixed(1)} ms, estimated ${estimated.ms.toFixed(1)} ms (${estimated.count})`)
    }
  }

  // ── from test/count-modes.test.ts ──
  // queryRows' count modes, each for the master key, a session user and an
  // anonymous caller, on the adapter read and on Parse's RestQuery path:
  // exact (true / 'exact'), capped ({ upTo: N }: exact at or below N, "at least
  // N" above), estimated (the database's estimate, never a scan), and none.
  // Rows and count run side by side, and a list over HTTP answers countKind.
  @ParseClass('Tally')
  class Tally extends BaseModel {
    @ParseField({ type: 'String' }) declare label: string
    @ParseField({ type: 'Number' }) declare n: number
  }

  /** A find trigger: its reads always go through Parse's RestQuery. */
  @ParseClass('TriggeredTally')
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
  class TriggeredTally extends BaseModel {
    @ParseField({ type: 'String' }) declare label: string
    @ParseField({ type: 'Number' }) declare n: number

    @AfterFind()
    static seen (request: { objects: Parse.Object[] }) { return request.objects }
  }

  /** A beforeFind that narrows every read to n < 10 and counts its runs: it runs once per list, for rows and count alike. */
  const beforeFindRuns: Array<{ count: boolean }> = []
  @ParseClass('NarrowedTally')
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
  class NarrowedTally extends BaseModel {
    @ParseField({ type: 'String' }) declare label: string
    @ParseField({ type: 'Number' }) declare n: number

    @BeforeFind()
    static narrow (request: { query: Parse.Query, count: boolean }) {
      beforeFindRuns.push({ count: request.count })
      request.query.lessThan('n', 10)
    }
  }

  @Route('tally')
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
  class TallyFunctions {
    @CloudFunction({ methods: ['GET'], validation: { fields: { count: { type: String } } } })
    // Not `list`: paging's LedgerFunctions.list shares this process, and function names are global.
    static async tallies (request: CloudRequest<{ count?: string }>) {
      const capped = /^upTo:(\d+)$/.exec(request.params.count ?? '')
      const count = capped ? { upTo: Number(capped[1]) } : request.params.count as CountMode | undefined
      return queryRows(new Parse.Query(Tally).ascending('n').limit(3), request, { count })
    }
  }

  const countModes = async (t: Test, kit: Kit): Promise<void> => {
    const alice = await kit.signUp('counter-alice')
    for (const className of ['Tally', 'TriggeredTally', 'NarrowedTally']) {
      // 30 rows: even n public, odd n alice's own.
      await Parse.Object.saveAll(Array.from({ length: 30 }, (_, n) => {
        const row = new Parse.Object(className, { label: `row ${n}`, n })
        row.setACL(new Parse.ACL(n % 2 === 0 ? { '*': { read: true } } : { [alice.id]: { read: true } } as never))
        return row
      }), { useMasterKey: true })
    }
    const callers: Array<[string, QueryCaller, number]> = [
      ['master key', { master: true }, 30],
      ['alice', { master: false, user: Parse.User.createWithoutData(alice.id) as Parse.User }, 30],
      ['anonymous', { master: false }, 15]
    ]
    // The adapter read (a plain query), and Parse's RestQuery (a regular expression; a find trigger).
    const queries: Array<[string, () => Parse.Query]> = [
      ['plain', () => new Parse.Query('Tally').ascending('n').limit(4)],
      ['regular expression', () => new Parse.Query('Tally').matches('label', /^row/).ascending('n').limit(4)],
      ['find trigger', () => new Parse.Query('TriggeredTally').ascending('n').limit(4)]
    ]

    for (const [path, build] of queries) {
      for (const [who, caller, readable] of callers) {
        const label = `${path}, ${who}`
        const count = async (mode: boolean | CountMode | undefined) => {
          const answer = await queryRows(build(), caller, mode === undefined ? {} : { count: mode })
          t.equal(answer.results.length, 4, `${label}, ${JSON.stringify(mode)}: the page is unchanged by the count`)
          return answer.count === undefined ? answer : { count: answer.count, countKind: answer.countKind }
        }
        t.same(await count(true), { count: readable, countKind: undefined }, `${label}: true is exact, in Parse's REST shape (no countKind)`)
        t.same(await count('exact'), { count: readable, countKind: 'exact' }, `${label}: exact`)
        t.same(await count({ upTo: readable + 10 }), { count: readable, countKind: 'exact' }, `${label}: capped above the rows: exact`)
        t.same(await count({ upTo: readable }), { count: readable, countKind: 'exact' }, `${label}: capped at exactly the rows: exact`)
        t.same(await count({ upTo: readable - 1 }), { count: readable - 1, countKind: 'atLeast' }, `${label}: capped below the rows: at least the cap`)
        t.same(await count({ upTo: 5 }), { count: 5, countKind: 'atLeast' }, `${label}: capped at 5`)
        t.same(await count({ upTo: 0 }), { count: 0, countKind: 'atLeast' }, `${label}: capped at 0: at least 0, there are rows`)
        const estimated = await count('estimated') as { count: number, countKind: string }
        t.type(estimated.count, 'number', `${label}: estimated answers a number`)
        // With fastPaths: false every read is RestQuery's: no estimate, the capped count below.
        if (lane.kind === 'postgres' && path === 'plain' && FAST_PATHS) {
          t.equal(estimated.countKind, 'estimated', `${label}: the planner's estimate (${estimated.count})`)
          t.ok(estimated.count >= 1, `${label}: the estimate is a row count (${estimated.count})`)
        } else if (lane.kind === 'mongo' && path === 'plain' && who === 'master key' && FAST_PATHS) {
          t.same(estimated, { count: 30, countKind: 'estimated' }, `${label}: the collection's size, nothing filters it`)
        } else {
          // RestQuery's path, or MongoDB with a row ACL: no estimate of the filtered rows, a capped count (1000) instead.
          t.same(estimated, { count: readable, countKind: 'exact' }, `${label}: no estimate here: a capped count, exact below its cap`)
        }
        for (const none of ['none', false, undefined] as const) {
          const answer = await count(none)
          t.notOk('count' in answer || 'countKind' in answer, `${label}: ${String(none)}: no count`)
        }
      }
    }

    t.test('a beforeFind runs once per list, told of the count, and narrows rows and count alike', async (t) => {
      for (const mode of [true, 'exact', { upTo: 3 }, { upTo: 50 }, 'estimated', 'none'] as const) {
        beforeFindRuns.length = 0
        const answer = await queryRows(new Parse.Query('NarrowedTally').ascending('n').limit(100), { master: false }, { count: mode })
        const label = JSON.stringify(mode)
        t.same(beforeFindRuns, [{ count: mode !== 'none' }], `${label}: one beforeFind run`)
        t.same(answer.results.map((row) => row.n), [0, 2, 4, 6, 8], `${label}: the rows it left (public, n < 10)`)
        if (mode === 'none') t.notOk('count' in answer, `${label}: no count`)
        else if (typeof mode === 'object' && mode.upTo === 3) t.same([answer.count, answer.countKind], [3, 'atLeast'], `${label}: the cap`)
        else t.equal(answer.count, 5, `${label}: the count of the rows it left`)
      }
    })

    t.test('a mode that is none of these is a programming error', async (t) => {
      for (const mode of [{ upTo: -1 }, { upTo: 1.5 }, 'planned', { upTo: '5' }]) {
        await t.rejects(queryRows(new Parse.Query('Tally'), { master: true }, { count: mode as never }), TypeError, JSON.stringify(mode))
      }
    })

    t.test('withCount() on the query still counts exactly, as count: true does', async (t) => {
      const answer = await queryRows(new Parse.Query('Tally').withCount().limit(1), { master: true })
      t.same(Object.keys(answer), ['results', 'count'], 'as REST answers count=1')
      t.same([answer.count, answer.results.length], [30, 1])
    })

    t.test('limit 0 answers the count alone', async (t) => {
      t.same(await queryRows(new Parse.Query('Tally').limit(0), { master: false }, { count: { upTo: 100 } }), { results: [], count: 15, countKind: 'exact' })
    })

    t.test('rows and count run side by side', async (t) => {
      // Where the statements go: on PostgreSQL the capped count is the kit's own statement on Parse's
      // pool, so the pool's calls are watched there; on MongoDB the adapter's find and count.
      const adapter = currentDatabase()!.adapter as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      const watched = (pgDatabase(adapter) ?? adapter) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      const methods = pgDatabase(adapter) ? ['any', 'one'] : ['find', 'count']
      const events: string[] = []
      // Only the queried class's statements count: under load another read (a cache refilled, say) can fall in between.
      const queried = { className: '' }
      // The class is the first argument on MongoDB; on PostgreSQL a quoted name in the statement, or a value it is formatted with.
      const aboutQueried = (args: unknown[]) => {
        const text = (() => { try { return JSON.stringify(args.slice(0, 2)) } catch { return undefined } })()
        return text === undefined || text.includes(`"${queried.className}"`) || text.includes(`\\"${queried.className}\\"`)
      }
      // Each call waits a little before it runs: if the second started only after the first ended, the order shows it.
      for (const method of methods) {
        const own = watched[method]
        watched[method] = async function (this: unknown, ...args: unknown[]) {
          if (!aboutQueried(args)) return await own.apply(this, args)
          events.push(`${method} starts`)
          await new Promise((resolve) => setTimeout(resolve, 50))
          try { return await own.apply(this, args) } finally { events.push(`${method} ends`) }
        }
        t.teardown(() => { watched[method] = own })
      }
      for (const [path, build] of queries) {
        for (const mode of ['exact', { upTo: 10 }] as const) {
          events.length = 0
          queried.className = build().className
          await queryRows(build(), { master: false }, { count: mode })
          t.equal(events.length, 4, `${path}, ${JSON.stringify(mode)}: two statements (${events.join(', ')})`)
          t.ok(events[0].endsWith('starts') && events[1].endsWith('starts'), `${path}, ${JSON.stringify(mode)}: both start before either ends (${events.join(', ')})`)
        }
      }
    })

    t.test('over HTTP: the count and what it is', async (t) => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['exact', { count: 30, countKind: 'exact' }],
        ['upTo:10', { count: 10, countKind: 'atLeast' }],
        ['upTo:100', { count: 30, countKind: 'exact' }],
        ['none', {}]
      ]
      for (const [mode, expected] of cases) {
        const answer = await kit.request('GET', `/parse/tally/tallies?count=${mode}`, { headers: masterHeaders })
        t.equal(answer.status, 200)
        const { results, ...rest } = answer.json.result ?? answer.json
        t.equal(results.length, 3)
        t.same(rest, expected, `count=${mode}`)
      }
    })
  }

  // Paging, the 120,000-row case and count modes boot with the same options (none): one kit serves
  // the three (each reads classes and rows of its own), two boots less.
  t.test('paging and counts, on one kit', async (t) => {
    const kit = await startKit(t)
    await t.test('keyset paging over HTTP', (t) => keysetPaging(t, kit))
    await t.test('a page 10,000 rows deep reads the index, not the table (120,000 rows)', { skip: needsRealMongo() || (lane.kind === 'mongo' ? 'EXPLAIN of PostgreSQL' : false) }, (t) => deepPage(t))
    await t.test('count modes', (t) => countModes(t, kit))
  })
}

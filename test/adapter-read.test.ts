// The adapter read (lib/parse/adapter-read.ts), the fast path queryRows takes
// for plain reads: every case it serves answers byte for byte what Parse's
// REST API answers for the same query and caller (every field type, ACL
// shapes, class-level permissions by role, counts, pages, conditions), and
// every case it does not serve (pointer or relation conditions, includes,
// keys, regular expressions, protected fields, find triggers,
// requiresAuthentication, a refused caller) goes through Parse's RestQuery
// and still answers exactly as REST does, errors included.
import t from 'tap'
import Parse from 'parse/node'
import { AfterFind, BaseModel, ParseClass, ParseField, addUsersToRole, queryRows, withTransaction } from '../lib/index.js'
import { adapterRead } from '../lib/parse/adapter-read.js'
import { AuthModule } from '../lib/parse/internals.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { APP_ID, appHeaders, masterHeaders, needsRealMongo, startKit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { readFastPathsFrom } from '../lib/parse/fast-path-switch.js'

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

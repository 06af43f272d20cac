// The data-at-scale surfaces against a hostile client: finds with huge
// `where` lists, counts and limits at their bounds, keyset cursors replayed
// by another caller or on another list, and odd session tokens. One kit.
// Runs on either database lane.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, pageRows, pagingFields, ParseClass, ParseField, queryRows, Route, type CloudRequest } from '../lib/index.js'
import { appHeaders, lane, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { currentDatabase } from '../lib/storage/database.js'

@ParseClass('Heap', { protectedFields: { '*': ['secret'] } })
class Heap extends BaseModel {
  @ParseField({ type: 'Number' }) declare seq: number
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'String' }) declare secret: string
  @ParseField({ type: 'Date' }) declare at: Date
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'Boolean' }) declare flag: boolean
  @ParseField({ type: 'Array' }) declare tags: string[]
}

@Route('heap')
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class HeapFunctions {
  @CloudFunction({ methods: ['GET'], validation: { fields: { ...pagingFields, sortBy: { type: String, options: ['createdAt', 'seq', 'secret', 'at', 'label', 'flag', 'tags', 'nothing', 'place'] }, ascending: { type: Boolean }, label: { type: String } } } })
  static async list (request: CloudRequest<{ limit?: number, after?: string, sortBy?: string, ascending?: boolean, label?: string }>) {
    const query = new Parse.Query(Heap)
    if (request.params.label) query.equalTo('label', request.params.label)
    return pageRows(query, request, { limit: request.params.limit, sortBy: request.params.sortBy, descending: request.params.ascending !== true, count: 'exact' })
  }

  @CloudFunction({ methods: ['POST'], validation: { fields: { ids: { type: Array, items: 'String', required: true } } } })
  static async byIds (request: CloudRequest<{ ids: string[] }>) {
    return queryRows(new Parse.Query(Heap).containedIn('objectId', request.params.ids), request, { count: true })
  }

  @CloudFunction({ methods: ['GET', 'POST'], requiresAuth: true })
  static async whoami (request: CloudRequest) {
    return { user: request.user?.id ?? null }
  }
}

type Page = { results: Array<{ objectId: string, seq?: number, secret?: string }>, next: string | null, count?: number }

/** The ids of every page of a list as the master key walks it, and the page sizes; at most 20 pages. */
async function walk (kit: Kit, query: string): Promise<{ ids: string[], sizes: number[], ended: boolean }> {
  const ids: string[] = []
  const sizes: number[] = []
  let after: string | null = null
  for (let guard = 0; guard < 20; guard++) {
    const answer = await kit.request('GET', `/parse/heap/list?${query}${after ? `&after=${encodeURIComponent(after)}` : ''}`, { headers: masterHeaders })
    if (answer.status !== 200) throw new Error(`${answer.status} ${answer.text}`)
    const page = answer.json as Page
    ids.push(...page.results.map((row) => row.objectId))
    sizes.push(page.results.length)
    after = page.next
    if (after === null) return { ids, sizes, ended: true }
  }
  return { ids, sizes, ended: false }
}

t.test('data at scale, as a hostile client', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true, allowedRoutes: [{ path: '/classes/Heap', methods: ['GET', 'POST'] }, { path: '/batch', methods: ['POST'] }] })
  const alice = await kit.signUp('scale-alice')
  const asAlice = { ...appHeaders, 'x-parse-session-token': alice.token }
  // Twelve rows: the even ones public, the odd ones alice's alone.
  await Parse.Object.saveAll(Array.from({ length: 12 }, (_, i) => {
    const row = new Heap({ seq: i % 4, label: 'acl', secret: `secret ${i}` } as never)
    if (i % 2 === 1) row.setACL(new Parse.ACL({ [alice.id]: { read: true } } as never))
    return row
  }), { useMasterKey: true })

  t.test('a where of more values than the databases take is 400 naming where, not a 500', async (t) => {
    const many = (n: number, of: (i: number) => unknown = (i) => i) => Array.from({ length: n }, (_, i) => of(i))
    const refusal = { code: 102, error: 'Request refused: where holds more than 10000 values (each item of a $in list is one): split it into several queries.' }
    // A GET with its where in the body (the SDKs' POST with _method: GET): the query string is bounded by the header size.
    const cases: Array<[string, Record<string, unknown>]> = [
      ['$in of 100,000 numbers, counted', { where: { seq: { $in: many(100_000) } }, count: 1, limit: 0 }],
      ['$in of 100,000 ids', { where: { objectId: { $in: many(100_000, (i) => `id${i}`) } } }],
      ['$nin of 100,000 strings', { where: { label: { $nin: many(100_000, (i) => `x${i}`) } } }],
      ['$or of 60,000 branches', { where: { $or: many(60_000, (i) => ({ seq: i })) } }],
      ['two lists of 6,000', { where: { seq: { $in: many(6000) }, label: { $nin: many(6000, String) } } }]
    ]
    for (const [name, query] of cases) {
      for (const [who, headers] of [['anonymous', appHeaders], ['master key', masterHeaders]] as const) {
        const answer = await kit.request('POST', '/parse/classes/Heap', { headers, body: { _method: 'GET', ...query } })
        t.equal(answer.status, 400, `${name}, ${who}: 400`)
        t.same(answer.json, refusal, `${name}, ${who}: names where`)
      }
    }
    const inBatch = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'GET', path: '/parse/classes/Heap', body: { where: { seq: { $in: many(100_000) } } } }] } })
    t.equal(inBatch.status, 400, 'inside a /batch: 400')
    t.same(inBatch.json, refusal)
    // A handler's containedIn of a client's list, through queryRows: the same refusal, without "Request refused".
    const byIds = await kit.request('POST', '/parse/heap/byIds', { headers: appHeaders, body: { ids: many(100_000, (i) => `id${i}`) } })
    t.same([byIds.status, byIds.json], [400, { code: 102, error: refusal.error.replace('Request refused: ', '').replace(/\.$/, '') }], 'a handler\'s list of 100,000 ids: 400 (PostgreSQL answered 500)')
    const fewIds = await kit.request('POST', '/parse/heap/byIds', { headers: appHeaders, body: { ids: many(10_000, (i) => `id${i}`) } })
    t.same([fewIds.status, fewIds.json?.count], [200, 0], 'a list of 10,000 ids is read')
    // At the bound: answered.
    const atBound = await kit.request('POST', '/parse/classes/Heap', { headers: appHeaders, body: { _method: 'GET', where: { label: 'acl', seq: { $in: many(9_999) } }, count: 1, limit: 0 } })
    t.equal(atBound.status, 200, atBound.text.slice(0, 200))
    t.equal(atBound.json.count, 6, '10,000 values (9,999 and the label): the public rows counted')
  })

  t.test('dates written by SQL with microseconds page each row once', { skip: lane.kind === 'mongo' ? 'MongoDB stores milliseconds' : false }, async (t) => {
    // A bulk load in one statement: every row the same instant, 456 µs past a millisecond.
    await Parse.Object.saveAll(Array.from({ length: 10 }, () => new Heap({ label: 'micro' } as never)), { useMasterKey: true })
    const pg = (currentDatabase()!.adapter as unknown as { _client: { none (sql: string, values: unknown[]): Promise<null> } })._client
    await pg.none('UPDATE "Heap" SET "at" = $1::timestamptz, "createdAt" = $1::timestamptz WHERE label = $2', ['2026-01-01T00:00:00.000456Z', 'micro'])
    const every = (await new Parse.Query(Heap).equalTo('label', 'micro').find({ useMasterKey: true })).map((row) => row.id).sort()
    for (const sortBy of ['at', 'createdAt']) {
      for (const ascending of [false, true]) {
        const walked = await walk(kit, `label=micro&sortBy=${sortBy}&limit=3${ascending ? '&ascending=true' : ''}`)
        const label = `${sortBy} ${ascending ? 'ascending' : 'descending'}`
        t.ok(walked.ended, `${label}: the last page comes (it repeated the first page forever)`)
        t.same([...walked.ids].sort(), every, `${label}: each row once`)
        t.same(walked.sizes, [3, 3, 3, 1], `${label}: full pages`)
      }
    }
  })

  t.test('dates of one millisecond at different microseconds page each row once, in order', { skip: lane.kind === 'mongo' ? 'MongoDB stores milliseconds' : false }, async (t) => {
    // Rows a load wrote one by one (each statement's now()): one millisecond, ten microseconds, the objectIds
    // in the other order. The cursor knew the millisecond only: rows were skipped (ascending) or repeated.
    const rows = await Parse.Object.saveAll(Array.from({ length: 10 }, () => new Heap({ label: 'spread' } as never)), { useMasterKey: true })
    const byId = rows.map((row) => row.id).sort()
    const pg = (currentDatabase()!.adapter as unknown as { _client: { none (sql: string, values: unknown[]): Promise<null> } })._client
    for (const [i, id] of byId.entries()) {
      const at = `2026-02-01T00:00:00.000${String(900 - i * 90).padStart(3, '0')}Z`
      await pg.none('UPDATE "Heap" SET "at" = $1::timestamptz, "createdAt" = $1::timestamptz WHERE "objectId" = $2', [at, id])
    }
    // Ascending by the stored instant: the last id first.
    const stored = [...byId].reverse()
    for (const sortBy of ['at', 'createdAt']) {
      for (const ascending of [false, true]) {
        for (const limit of [1, 3]) {
          const walked = await walk(kit, `label=spread&sortBy=${sortBy}&limit=${limit}${ascending ? '&ascending=true' : ''}`)
          const label = `${sortBy} ${ascending ? 'ascending' : 'descending'}, ${limit} a page`
          t.ok(walked.ended, `${label}: the last page comes`)
          t.same(walked.ids, ascending ? stored : [...stored].reverse(), `${label}: each row once, in the stored order`)
        }
      }
    }
    // The later walk of the whole list stays within its 20 pages.
    await Parse.Object.destroyAll(rows, { useMasterKey: true })
  })

  t.test('a sort value a client saved as null: not listed, on either database', async (t) => {
    const rows = await Parse.Object.saveAll(Array.from({ length: 5 }, (_, i) => new Heap({ seq: i, label: 'nulls' } as never)), { useMasterKey: true })
    // As a client clears a field: MongoDB keeps the null (PostgreSQL's column holds NULL either way).
    const cleared = await kit.request('PUT', `/parse/classes/Heap/${rows[0].id}`, { headers: masterHeaders, body: { seq: null } })
    t.equal(cleared.status, 200)
    const listed = rows.slice(1).map((row) => row.id).sort()
    for (const ascending of [false, true]) {
      for (const limit of [1, 2]) {
        const walked = await walk(kit, `label=nulls&sortBy=seq&limit=${limit}${ascending ? '&ascending=true' : ''}`)
        t.same([...walked.ids].sort(), listed, `${ascending ? 'ascending' : 'descending'}, ${limit} a page: the four rows with a seq, once (MongoDB answered 500 where the null row ended a page)`)
      }
    }
    const counted = (await kit.request('GET', '/parse/heap/list?label=nulls&sortBy=seq&limit=0', { headers: masterHeaders })).json as Page
    t.equal(counted.count, 4, 'nor counted')
  })

  t.test('a cursor carries no value a caller may not see, and a long sort value pages on', async (t) => {
    // The master key lists by a field its answer could leave out; the cursor travels in the next URL.
    const page = (await kit.request('GET', '/parse/heap/list?label=acl&sortBy=secret&limit=2', { headers: masterHeaders })).json as Page
    const opened = Buffer.from(page.next!.split('.')[0], 'base64url').toString('latin1')
    t.notMatch(opened, /secret \d+/, 'the sort value is not readable in the cursor (it was base64 JSON)')
    t.notMatch(opened, new RegExp(page.results[1].objectId), 'nor the row\'s id')
    // Sort values of 1,000 characters: each cursor about 1,400 characters (the list refused past 1,024).
    await Parse.Object.saveAll(Array.from({ length: 5 }, (_, i) => new Heap({ label: `${String(i)}${'x'.repeat(999)}`, seq: i } as never)), { useMasterKey: true })
    const walked = await walk(kit, 'sortBy=label&limit=2&ascending=true')
    t.ok(walked.ended, 'the walk reaches the last page')
    t.equal(new Set(walked.ids).size, walked.ids.length, 'no row twice')
    t.ok(walked.ids.length >= 5, 'the long labels are listed')
  })

  t.test('a list ordered by a GeoPoint or Polygon field is 400 on PostgreSQL, not a 500', async (t) => {
    for (const field of ['place', 'area']) {
      for (const query of [`order=${field}&limit=2`, `order=-${field},seq&limit=2&count=1`]) {
        const answer = await kit.request('GET', `/parse/classes/Heap?${query}`, { headers: appHeaders })
        if (lane.kind === 'mongo') {
          t.equal(answer.status, 200, `${query}: MongoDB orders it`)
          continue
        }
        t.equal(answer.status, 400, `${query}: 400 (was 500)`)
        t.equal(answer.json.code, 102)
        t.match(answer.json.error, /^PostgreSQL cannot run this query: a GeoPoint or Polygon field cannot order a list \(could not identify an ordering operator for type (point|polygon)\)/)
      }
    }
  })

  t.test('held: a cursor replayed by another caller reads only what that caller may read', async (t) => {
    const first = (await kit.request('GET', '/parse/heap/list?label=acl&sortBy=seq&limit=3', { headers: asAlice })).json as Page
    t.equal(first.count, 12, 'alice counts every row')
    t.ok(first.next)
    const anonymous = await kit.request('GET', `/parse/heap/list?label=acl&sortBy=seq&limit=20&after=${encodeURIComponent(first.next!)}`, { headers: appHeaders })
    t.equal(anonymous.status, 200)
    const page = anonymous.json as Page
    const publicIds = new Set((await new Parse.Query(Heap).equalTo('label', 'acl').find()).map((row) => row.id))
    t.equal(page.count, 6, 'anonymous: the public rows counted')
    t.ok(page.results.length > 0 && page.results.every((row) => publicIds.has(row.objectId)), 'anonymous: public rows only')
    t.ok(page.results.every((row) => row.secret === undefined), 'no protected field')
  })

  t.test('a sortBy of a field a page cannot be ordered by is 400 naming it, on every page', async (t) => {
    await Parse.Object.saveAll(Array.from({ length: 3 }, (_, i) => new Heap({ label: 'sorts', flag: i > 0, tags: [`t${i}`], place: new Parse.GeoPoint(i, i) } as never)), { useMasterKey: true })
    for (const [field, type] of [['flag', 'a Boolean field'], ['tags', 'an Array field'], ['place', 'a GeoPoint field'], ['nothing', 'Heap has no such field']]) {
      for (const limit of [1, 10]) {
        const answer = await kit.request('GET', `/parse/heap/list?label=sorts&sortBy=${field}&limit=${limit}`, { headers: masterHeaders })
        t.same([answer.status, answer.json], [400, { code: 102, error: `sortBy ${field}: ${type}; a page is ordered by a String, Number or Date field` }], `${field}, limit ${limit}: 400 (was 500 when a next page existed)`)
      }
    }
  })

  t.test('held: a list ordered by a protected field is refused for a caller it is hidden from', async (t) => {
    const answer = await kit.request('GET', '/parse/heap/list?sortBy=secret&limit=2', { headers: asAlice })
    t.equal(answer.status, 400)
    t.same(answer.json, { code: 119, error: 'Permission denied' })
    const master = await kit.request('GET', '/parse/heap/list?sortBy=secret&limit=2', { headers: masterHeaders })
    t.equal(master.status, 200, 'the master key may')
  })

  t.test('held: odd session tokens are 4xx on /users/me and on a declared function', async (t) => {
    const tokens = ['r:', `r:${'x'.repeat(8000)}`, 'r:\u00e9\u00e9', `${alice.token}, ${alice.token}`]
    for (const token of tokens) {
      for (const path of ['/parse/users/me', '/parse/functions/whoami']) {
        const answer = await kit.request('GET', path, { headers: { ...appHeaders, 'x-parse-session-token': Buffer.from(token, 'utf8').toString('latin1') } })
        t.same([answer.status, answer.json], [400, { code: 209, error: 'Invalid session token' }], `${path}, ${JSON.stringify(token.slice(0, 12))}…: 209`)
      }
    }
    for (const token of [5, [alice.token], { a: 1 }, null, '']) {
      const answer = await kit.request('POST', '/parse/functions/whoami', { contentType: 'text/plain', body: JSON.stringify({ _ApplicationId: 'test-app', _SessionToken: token }) })
      t.equal(answer.status, 400, `text/plain _SessionToken ${JSON.stringify(token)}: 400`)
      t.equal(answer.json.code, 101, 'no session: authentication required')
    }
  })
})

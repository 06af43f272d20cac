// Paged and counted lists, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - paging: this file's own tests (first part, its comment kept)
// - test/count-modes.test.ts (merged here): queryRows' count modes, each for the master key, a session user and an …
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, Type, pageOf, pageRows, pagingFields, queryRows, type CloudRequest, type CountMode, type Static, AfterFind, BeforeFind, type QueryCaller } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { appHeaders, lane, masterHeaders, needsRealMongo, startKit, type Kit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'

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
export class Ledger extends BaseModel {
  @ParseField({ type: 'Number' }) declare seq: number
  @ParseField({ type: 'Date' }) declare at: Date
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'String' }) declare shelf: string
}

@ParseClass('Journal')
export class Journal extends BaseModel {
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
export class LedgerFunctions {
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

t.test('keyset paging over HTTP', async (t) => {
  const kit = await startKit(t)
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
})

t.test('a page 10,000 rows deep reads the index, not the table (120,000 rows)', { skip: needsRealMongo() || (lane.kind === 'mongo' ? 'EXPLAIN of PostgreSQL' : false) }, async (t) => {
  await startKit(t)
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
})

// ── from test/count-modes.test.ts ──
// queryRows' count modes, each for the master key, a session user and an
// anonymous caller, on the adapter read and on Parse's RestQuery path:
// exact (true / 'exact'), capped ({ upTo: N }: exact at or below N, "at least
// N" above), estimated (the database's estimate, never a scan), and none.
// Rows and count run side by side, and a list over HTTP answers countKind.
@ParseClass('Tally')
export class Tally extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Number' }) declare n: number
}

/** A find trigger: its reads always go through Parse's RestQuery. */
@ParseClass('TriggeredTally')
export class TriggeredTally extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Number' }) declare n: number

  @AfterFind()
  static seen (request: { objects: Parse.Object[] }) { return request.objects }
}

/** A beforeFind that narrows every read to n < 10 and counts its runs: it runs once per list, for rows and count alike. */
const beforeFindRuns: Array<{ count: boolean }> = []
@ParseClass('NarrowedTally')
export class NarrowedTally extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Number' }) declare n: number

  @BeforeFind()
  static narrow (request: { query: Parse.Query, count: boolean }) {
    beforeFindRuns.push({ count: request.count })
    request.query.lessThan('n', 10)
  }
}

@Route('tally')
export class TallyFunctions {
  @CloudFunction({ methods: ['GET'], validation: { fields: { count: { type: String } } } })
  // Not `list`: paging's LedgerFunctions.list shares this process, and function names are global.
  static async tallies (request: CloudRequest<{ count?: string }>) {
    const capped = /^upTo:(\d+)$/.exec(request.params.count ?? '')
    const count = capped ? { upTo: Number(capped[1]) } : request.params.count as CountMode | undefined
    return queryRows(new Parse.Query(Tally).ascending('n').limit(3), request, { count })
  }
}

t.test('count modes', async (t) => {
  const kit = await startKit(t)
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
    // Each call waits a little before it runs: if the second started only after the first ended, the order shows it.
    for (const method of methods) {
      const own = watched[method]
      watched[method] = async function (this: unknown, ...args: unknown[]) {
        events.push(`${method} starts`)
        await new Promise((resolve) => setTimeout(resolve, 50))
        try { return await own.apply(this, args) } finally { events.push(`${method} ends`) }
      }
      t.teardown(() => { watched[method] = own })
    }
    for (const [path, build] of queries) {
      for (const mode of ['exact', { upTo: 10 }] as const) {
        events.length = 0
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
})

// queryRows' count modes, each for the master key, a session user and an
// anonymous caller, on the adapter read and on Parse's RestQuery path:
// exact (true / 'exact'), capped ({ upTo: N }: exact at or below N, "at least
// N" above), estimated (the database's estimate, never a scan), and none.
// Rows and count run side by side, and a list over HTTP answers countKind.
import t from 'tap'
import Parse from 'parse/node'
import { AfterFind, BaseModel, BeforeFind, CloudFunction, ParseClass, ParseField, Route, queryRows, type CloudRequest, type CountMode, type QueryCaller } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { pgDatabase } from '../lib/parse/adapter-internals.js'
import { lane, masterHeaders, startKit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'

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
  static async list (request: CloudRequest<{ count?: string }>) {
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
      const answer = await kit.request('GET', `/parse/tally/list?count=${mode}`, { headers: masterHeaders })
      t.equal(answer.status, 200)
      const { results, ...rest } = answer.json.result ?? answer.json
      t.equal(results.length, 3)
      t.same(rest, expected, `count=${mode}`)
    }
  })
})

// The example app's listNotes on a Note table of 120,000 rows made by SQL in
// Parse's row format (half public, the rest readable by their owner or a
// role): the statements the list sends over HTTP, anonymous and with a
// session (row-ACL predicate `"_rperm" IS NULL OR "_rperm" && ARRAY[…]`),
// and a page after a cursor, read the index the Note model declares for the
// list's order, as EXPLAIN ANALYZE shows: an index scan backward on
// (createdAt, objectId), about two page lengths of entries, no sequential
// scan, no sort. The capped count reads at most 1,001 ids and stops. With a
// status filter that matches few notes, the (status, createdAt, objectId)
// index is read and nothing scans the table.
import t, { type Test } from 'tap'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { currentDatabase } from '../lib/storage/database.js'
import { appHeaders, lane, startKit } from './helpers/kit.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')
const ROWS = 120_000

interface Pg {
  none (sql: string, values?: unknown): Promise<null>
  any (sql: string, values?: unknown): Promise<Array<Record<string, any>>>
  one (sql: string, values?: unknown): Promise<Record<string, any>>
}
interface PlanNode { 'Node Type': string, 'Index Name'?: string, 'Scan Direction'?: string, 'Actual Rows'?: number, 'Rows Removed by Filter'?: number, Plans?: PlanNode[] }

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test(`listNotes on ${ROWS.toLocaleString('en')} notes reads the indexes Note declares`, async (t) => {
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions') })
  await kit.app.kit.indexesApplied
  const reader = await kit.signUp('reader')
  const adapter = currentDatabase()!.adapter as unknown as { _client: Pg, _pgp: { as: { format (sql: string, values?: unknown): string } } }
  const pg = adapter._client

  const indexes = new Map((await pg.any(`SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname = 'Note' AND x.indisvalid`)).map((row) => [row.name as string, row.def as string]))
  t.match(indexes.get('Note_createdAt_1_objectId_1'), /\("createdAt", "objectId"\)/, 'the list\'s order, declared by the model')
  t.match(indexes.get('Note_status_1_createdAt_1_objectId_1'), /\(status, "createdAt", "objectId"\)/, 'the status filter, then the order')

  // Parse's row format: one row in ten per second of createdAt (equal values: objectId breaks ties);
  // half public (published), a quarter the reader's own or another user's drafts, a quarter a role's.
  await pg.none(`
    INSERT INTO "Note" ("objectId", "createdAt", "updatedAt", title, status, slug, views, _rperm, _wperm)
    SELECT 'n' || lpad(to_hex((i::bigint * 2654435761) % 68719476736), 9, '0'),
           timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
           timestamptz '2026-01-01T00:00:00Z' + (i / 10) * interval '1 second',
           'note ' || i,
           CASE WHEN i % 2 = 0 THEN 'published' ELSE 'draft' END,
           'note-' || i,
           0,
           CASE WHEN i % 2 = 0 THEN ARRAY['*', 'u' || (i % 5000)]
                WHEN i % 4 = 1 THEN ARRAY[CASE WHEN i % 400 = 1 THEN $1 ELSE 'u' || (i % 5000) END]
                ELSE ARRAY['role:team' || (i % 50)] END,
           ARRAY['u' || (i % 5000)]
    FROM generate_series(1, ${ROWS}) AS i`, [reader.id])
  await pg.none('VACUUM ANALYZE "Note"')

  /** Every statement the adapter sends while `work` runs, values in place. */
  const capture = async (work: () => Promise<unknown>): Promise<string[]> => {
    const sent: string[] = []
    const real = adapter._client
    adapter._client = new Proxy(real, {
      get (target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof value !== 'function' || !['any', 'manyOrNone', 'one', 'oneOrNone', 'many', 'map', 'none', 'query'].includes(String(property))) return value
        return (sql: string, values?: unknown, ...rest: unknown[]) => {
          sent.push(adapter._pgp.as.format(sql, values))
          return value.call(target, sql, values, ...rest)
        }
      }
    })
    try {
      await work()
    } finally {
      adapter._client = real
    }
    return sent
  }
  const explain = async (statement: string) => {
    const [{ Plan: plan }] = (await pg.one(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`))['QUERY PLAN']
    const nodes: PlanNode[] = []
    const visit = (node: PlanNode) => { nodes.push(node); for (const child of node.Plans ?? []) visit(child) }
    visit(plan)
    const text = (await pg.any(`EXPLAIN (ANALYZE, COSTS OFF) ${statement}`)).map((row) => row['QUERY PLAN'] as string).join('\n')
    return { nodes, text }
  }

  const session = { ...appHeaders, 'x-parse-session-token': reader.token }
  const CREATED = 'Note_createdAt_1_objectId_1'
  const STATUS = 'Note_status_1_createdAt_1_objectId_1'
  /** One listNotes request over HTTP, and the EXPLAIN ANALYZE of the rows statement it sent. */
  const answers = new Map<string, { next: string | null }>()
  /**
   * `ordered`: the page is read in order from one of `indexes`, backward, no sort (cost: the page).
   * `filtered`: the filter's index is read, and no table scan (cost: the rows the filter matches).
   */
  const listed = (t: Test, who: string, query: string, headers: Record<string, string>, indexes: string[], condition: RegExp, expect: 'ordered' | 'filtered' = 'ordered') => t.test(who, async (t) => {
    let answer: Awaited<ReturnType<typeof kit.request>> | undefined
    const sent = await capture(async () => { answer = await kit.request('GET', `/parse/notes/listNotes?${query}`, { headers }) })
    t.equal(answer!.status, 200, answer!.status === 200 ? 'answered' : answer!.text)
    t.equal(answer!.json.results.length, 100, 'a full page')
    t.same([answer!.json.count, answer!.json.countKind], [1000, 'atLeast'], 'the count stops at 1000')
    const notes = sent.filter((statement) => /FROM "Note"/.test(statement))
    const rows = notes.find((statement) => /ORDER BY "createdAt" DESC,\s*"objectId" DESC/.test(statement))
    if (!t.ok(rows, `the rows statement is among what the list sent:\n${notes.join('\n')}`)) return
    t.match(rows, condition, 'with the caller\'s conditions')
    t.comment(`${who}: ${rows!.replace(/\s+/g, ' ')}`)
    const plan = await explain(rows!)
    t.comment(`${who}: EXPLAIN ANALYZE\n${plan.text}`)
    const shape = plan.nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`).join(' → ')
    t.notOk(plan.nodes.some((node) => node['Node Type'] === 'Seq Scan'), `no sequential scan: ${shape}`)
    if (expect === 'ordered') {
      const scan = plan.nodes.find((node) => node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan')
      t.ok(indexes.includes(scan?.['Index Name'] ?? ''), `an index scan on ${indexes.join(' or ')}`)
      t.equal(scan?.['Scan Direction'], 'Backward', 'newest first: the index read backward')
      t.notOk(plan.nodes.some((node) => node['Node Type'] === 'Sort'), 'no sort')
      const visited = (scan?.['Actual Rows'] ?? 0) + (scan?.['Rows Removed by Filter'] ?? 0)
      t.ok(visited < 1000, `${visited} index entries visited for a page of 100, not the ${ROWS.toLocaleString('en')} rows`)
    } else {
      t.ok(plan.nodes.some((node) => indexes.includes(node['Index Name'] ?? '')), `${indexes.join(' or ')} is read`)
    }
    // The capped count: at most 1,001 ids; its scan stops once it has them (or, filtered, reads what the filter's indexes give).
    const count = notes.find((statement) => statement !== rows && /LIMIT 1001/.test(statement))
    if (t.ok(count, 'the capped count reads at most 1,001 ids')) {
      const counted = await explain(count!)
      t.comment(`${who}: the capped count's EXPLAIN ANALYZE\n${counted.text}`)
      const read = counted.nodes.filter((node) => /Scan/.test(node['Node Type'])).reduce((sum, node) => sum + (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0), 0)
      if (expect === 'ordered') t.ok(read < 10_000, `the count's scan stops early: ${read} rows read of ${ROWS.toLocaleString('en')}`)
      else t.notOk(counted.nodes.some((node) => node['Node Type'] === 'Seq Scan'), 'the count reads the filter\'s indexes, not the table')
    }
    answers.set(who, answer!.json)
  })

  // The row-ACL filter, anonymous: Parse sends ("_rperm" IS NULL OR "_rperm" && ARRAY['*','*']).
  await listed(t, 'anonymous', 'limit=100', appHeaders, [CREATED], /\("_rperm" IS NULL OR "_rperm" && ARRAY\['\*'(,'\*')?\]\)/)
  await listed(t, 'with a session', 'limit=100', session, [CREATED], new RegExp(`\\("_rperm" IS NULL OR "_rperm" && ARRAY\\[('\\*',)+'${reader.id}'\\]\\)`))
  await listed(t, 'anonymous, the page after a cursor', `limit=100&after=${encodeURIComponent(answers.get('anonymous')?.next ?? '')}`, appHeaders, [CREATED], /"createdAt" <= .*"objectId" < /s)
  // Half the notes are published: the planner may read either index (both serve the order).
  await listed(t, 'with a session, status=published (half the notes)', 'status=published&limit=100', session, [CREATED, STATUS], /"status" = 'published'/)

  // A selective filter: nine published notes in ten become their authors' private drafts; one note in twenty stays published.
  // Published and public go together here, which the planner cannot know: it may combine the status
  // index with the ACL indexes (aclIndex) and sort the published notes rather than read them in order.
  await pg.none('UPDATE "Note" SET status = \'draft\', _rperm = ARRAY["_wperm"[1]] WHERE status = \'published\' AND substr(title, 6)::int % 20 <> 0')
  await pg.none('VACUUM ANALYZE "Note"')
  await listed(t, 'anonymous, status=published (one note in twenty)', 'status=published&limit=100', appHeaders, [STATUS], /"status" = 'published'/, 'filtered')
  await listed(t, 'with a session, status=published (one note in twenty)', 'status=published&limit=100', session, [STATUS], /"status" = 'published'/, 'filtered')
})

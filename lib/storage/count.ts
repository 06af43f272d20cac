// How many rows a read matches, in the mode its caller chose, database-neutral:
// - exact: the adapter's own count (every matching row is visited);
// - { upTo: N }: at most N+1 matching rows visited, so the cost is bounded
//   by N however large the table (exact below the cap, "at least N" above
//   it): on PostgreSQL one count over a LIMIT N+1 subquery, elsewhere N+1
//   objectIds read through the adapter's find;
// - estimated: the database's own estimate without visiting rows (PostgreSQL:
//   the planner's row estimate of the same statement; MongoDB: the
//   collection's size when nothing filters it), else a capped count.
// `query` is the adapter-level query (the row-ACL term included).
import { pgDatabase } from '../parse/adapter-internals.js'
import { plannedRows } from './postgres/estimate.js'
import { pgCappedCount } from './postgres/capped-count.js'
import { collectionSize } from './mongo/estimate.js'

/** What a caller may ask of a count. */
export type CountMode = 'exact' | 'estimated' | 'none' | { upTo: number }
/** What a count answered: every row counted, the database's estimate, or the cap reached (there are more). */
export type CountKind = 'exact' | 'estimated' | 'atLeast'
export interface CountResult { count: number, countKind: CountKind }

/** The cap an estimate falls back to where the database has none for the query (MongoDB with a filter or a row ACL). */
export const ESTIMATE_FALLBACK = 1000

interface CountingAdapter {
  find (className: string, schema: unknown, query: Record<string, unknown>, options: Record<string, unknown>): Promise<unknown[]>
  count (className: string, schema: unknown, query: Record<string, unknown>, readPreference?: unknown, estimate?: unknown): Promise<number>
}

export async function countRows (adapter: object, className: string, schema: unknown, query: Record<string, unknown>, mode: Exclude<CountMode, 'none'>): Promise<CountResult> {
  const counting = adapter as CountingAdapter
  if (mode === 'exact') return { count: await counting.count(className, schema, query, undefined, false), countKind: 'exact' }
  if (mode === 'estimated') {
    const estimate = pgDatabase(adapter) !== undefined
      ? await plannedRows(adapter, className, schema, query)
      : await collectionSize(adapter, className, query)
    if (estimate !== undefined) return { count: estimate, countKind: 'estimated' }
    return await cappedCount(counting, className, schema, query, ESTIMATE_FALLBACK)
  }
  return await cappedCount(counting, className, schema, query, mode.upTo)
}

async function cappedCount (adapter: CountingAdapter, className: string, schema: unknown, query: Record<string, unknown>, upTo: number): Promise<CountResult> {
  const found = (pgDatabase(adapter) !== undefined ? await pgCappedCount(adapter, className, schema, query, upTo + 1) : undefined) ??
    (await adapter.find(className, schema, query, { keys: ['objectId'], limit: upTo + 1, sort: {} })).length
  return found > upTo ? { count: upTo, countKind: 'atLeast' } : { count: found, countKind: 'exact' }
}

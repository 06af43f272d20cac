// queryRows: a Parse.Query run by Parse Server's own query engine in-process,
// answering plain rows as Parse's REST API would — without turning each row
// into a Parse.Object and back. The caller's ACLs, class-level permissions,
// protected fields and find triggers all apply, exactly as on REST.
//
// The count is a choice (CountMode): exact (a scan of every matching row),
// capped (exact up to N, then "at least N"), the database's estimate, or none.
// Rows and count run side by side when both are asked for.
import Parse from 'parse/node'
import { authOf } from '../parse/parse-calls.js'
import { parseRestRead, prepareRestRead } from '../parse/rest-read.js'
import { fastPathsOn } from '../parse/fast-path-switch.js'
import { adapterRead, type RowCounter } from '../parse/adapter-read.js'
import { parseConfig, schemaMemo } from '../access/parse-config.js'
import { withOneSchemaLoad } from '../parse/one-schema-load.js'
import { countRows, ESTIMATE_FALLBACK, type CountKind, type CountMode, type CountResult } from './count.js'
import { TOO_MANY_WHERE_VALUES, tooManyWhereValues } from './where-values.js'

export type { CountKind, CountMode } from './count.js'

export interface QueryRowsResult<Row = Record<string, unknown>> {
  results: Row[]
  /** How many rows match the query (all pages), as `countKind` says. */
  count?: number
  /** Present whenever `count` is: 'exact', 'estimated' (the database's estimate) or 'atLeast' (more rows than the cap). */
  countKind?: CountKind
}

/** Who runs the query: what a handler receives (master key, session user, or nobody). */
export interface QueryCaller { master: boolean, user?: Parse.User, installationId?: string }

export interface QueryRowsOptions {
  /**
   * true: every matching row counted, answered as Parse's REST API answers
   * `count=1` ({ results, count }); 'exact': the same count with countKind;
   * { upTo: N }: exact up to N, else N and 'atLeast'; 'estimated': the
   * database's estimate; false, 'none' or absent: no count.
   */
  count?: boolean | CountMode
}

export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options: { count: true }): Promise<{ results: Row[], count: number }>
export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options: { count: Exclude<CountMode, 'none'> }): Promise<Required<QueryRowsResult<Row>>>
export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options?: QueryRowsOptions): Promise<QueryRowsResult<Row>>
export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options: QueryRowsOptions = {}): Promise<QueryRowsResult<Row>> {
  const { where, count: asked, ...restOptions } = query.toJSON() as { where: Record<string, unknown>, [option: string]: unknown }
  // A handler's containedIn of a client's list: a 400 rather than PostgreSQL's 500 past 100,000 values.
  if (tooManyWhereValues(where)) throw new Parse.Error(Parse.Error.INVALID_QUERY, TOO_MANY_WHERE_VALUES)
  // `count: true` (and a query made with Parse's withCount(), unless the options say otherwise) is
  // Parse's own count=1: the exact count, answered byte for byte as REST answers it (no countKind).
  const restShape = options.count === true || (options.count === undefined && asked !== undefined)
  const mode = restShape ? 'exact' : countModeOf(options.count)
  // One schema load for the whole query (find, count, protected fields) instead of one per step,
  // and none while Parse's schema cache is unchanged since an earlier read's.
  const config = withOneSchemaLoad(parseConfig(Parse.CoreManager.get('APPLICATION_ID')), { memo: schemaMemo() })
  const auth = authOf(config, caller)
  // A plain read (plain fields, a plain grant, no find trigger) straight from Parse's storage adapter; anything else through RestQuery.
  const counter: RowCounter | undefined = mode === 'none' || restShape ? undefined : async (adapter, className, schema, aclQuery) => await countRows(adapter, className, schema, aclQuery, mode)
  const plain = await adapterRead(config, auth, { className: query.className, where: where ?? {}, options: restShape ? { ...restOptions, count: 1 } : restOptions, counter })
  if (plain) return plain as QueryRowsResult<Row>

  // fastPaths: false: a list, with or without REST's count, is one RestQuery, as REST runs it.
  if ((restShape || mode === 'none') && !fastPathsOn()) {
    const answer = await parseRestRead(config, auth, query.className, where ?? {}, restShape ? { ...restOptions, count: 1 } : restOptions)
    const results = answer.results as Row[]
    return restShape ? { results, count: answer.count ?? 0 } : { results }
  }
  // Parse's RestQuery: its beforeFind trigger once, then rows and count side by side.
  const run = await prepareRestRead(config, auth, query.className, where ?? {}, restOptions, mode !== 'none')
  const rows = restOptions.limit === 0 && mode !== 'none' ? Promise.resolve(undefined) : run({}, true)
  const counted = mode === 'none' ? Promise.resolve(undefined) : restCount(mode, (options) => run({ ...COUNT_ONLY, ...options }, false))
  const [found, count] = await bothSettled(rows, counted)
  const results = (found?.results ?? []) as Row[]
  if (count === undefined) return { results }
  return restShape ? { results, count: count.count } : { results, count: count.count, countKind: count.countKind }
}

/** Both results; when both fail, the rows' error (the one Parse would have answered, its find running first). */
async function bothSettled<A, B> (first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second])
  if (a.status === 'rejected') throw a.reason
  if (b.status === 'rejected') throw b.reason
  return [a.value, b.value]
}

/** The count a caller asked for, as a mode ('none' when none). */
export function countModeOf (count: boolean | CountMode | undefined): CountMode {
  if (count === true) return 'exact'
  if (count === false || count === undefined) return 'none'
  if (count === 'exact' || count === 'estimated' || count === 'none') return count
  if (typeof count === 'object' && count !== null && Number.isInteger(count.upTo) && count.upTo >= 0) return { upTo: count.upTo }
  throw new TypeError(`queryRows: count must be true, false, 'exact', 'estimated', 'none' or { upTo: a whole number ≥ 0 }; got ${JSON.stringify(count)}`)
}

/** What a count's read leaves of the query's options: no page, no order, no projection, no include. */
const COUNT_ONLY = { limit: undefined, skip: undefined, order: undefined, keys: undefined, include: undefined, excludeKeys: undefined }

/**
 * A count through Parse's RestQuery, for reads the adapter path leaves to
 * Parse: exact as Parse counts; capped (and the estimate, which only the
 * adapter path can ask the database for) by reading at most N+1 objectIds.
 */
async function restCount (mode: Exclude<CountMode, 'none'>, run: (options: Record<string, unknown>) => Promise<{ results: unknown[], count?: number }>): Promise<CountResult> {
  if (mode === 'exact') return { count: (await run({ count: 1, limit: 0 })).count ?? 0, countKind: 'exact' }
  const upTo = mode === 'estimated' ? ESTIMATE_FALLBACK : mode.upTo
  const { results } = await run({ keys: 'objectId', limit: upTo + 1 })
  return results.length > upTo ? { count: upTo, countKind: 'atLeast' } : { count: results.length, countKind: 'exact' }
}

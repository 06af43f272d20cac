// A read the adapter path leaves to Parse, through Parse's RestQuery, with its
// rows and its count as two RestQueries side by side instead of one after the
// other. The beforeFind trigger runs once, as for REST's count=1 (it is told
// a count is asked), and both reads use the where and options it leaves;
// afterFind sees the rows only, as Parse's own count never runs it.
import { parseInternals } from './internals.js'
import type { ParseAuth, ParseConfig } from './server-shapes.js'

export interface RestAnswer { results: Array<Record<string, unknown>>, count?: number }

/** Runs RestQuery on what beforeFind left, with more options (undefined: leave it out); `afterFind` false for a count's read. */
export type RestRun = (options: Record<string, unknown>, afterFind: boolean) => Promise<RestAnswer>

export async function prepareRestRead (config: ParseConfig, auth: ParseAuth, className: string, where: Record<string, unknown>, options: Record<string, unknown>, counting: boolean): Promise<RestRun> {
  const context: Record<string, unknown> = {}
  const asked = counting ? { ...options, count: 1 } : { ...options }
  const { RestQuery, triggers } = parseInternals()
  const left = await triggers.maybeRunQueryTrigger('beforeFind', className, structuredClone(where), asked, config, auth, context, false)
  const restWhere = left.restWhere ?? where
  const { count: _count, ...restOptions } = left.restOptions ?? asked
  return async (extra, afterFind) => {
    const query = await RestQuery({
      method: RestQuery.Method.find,
      config,
      auth,
      className,
      restWhere: structuredClone(restWhere),
      // An option set to undefined in `extra` is left out (Parse reads every key it is given).
      restOptions: Object.fromEntries(Object.entries({ ...restOptions, ...extra }).filter(([, value]) => value !== undefined)),
      context,
      runBeforeFind: false,
      runAfterFind: afterFind
    })
    return await query.execute()
  }
}

/**
 * One RestQuery as Parse's REST find runs it (its beforeFind and afterFind
 * included, the count in the same query): the read with fastPaths: false.
 */
export async function parseRestRead (config: ParseConfig, auth: ParseAuth, className: string, where: Record<string, unknown>, options: Record<string, unknown>): Promise<RestAnswer> {
  const { RestQuery } = parseInternals()
  const query = await RestQuery({ method: RestQuery.Method.find, config, auth, className, restWhere: where, restOptions: options, context: {} })
  return await query.execute()
}

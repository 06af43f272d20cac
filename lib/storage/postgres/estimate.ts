// The planner's estimate of how many rows a count would visit: the count's
// own statement (as Parse's adapter builds it) under EXPLAIN, never run.
import { pgDatabase } from '../../parse/adapter-internals.js'
import { matchingRowsStatement, zeroWithoutTable } from './count-statement.js'

interface PlanNode { 'Plan Rows'?: number }

export async function plannedRows (adapter: object, className: string, schema: unknown, query: Record<string, unknown>): Promise<number | undefined> {
  // The rows themselves, not count(*): the aggregate's estimate is one row, and a parallel scan's is per worker.
  const rows = await matchingRowsStatement(adapter, className, schema, query)
  if (rows === undefined) return undefined
  const plan = await zeroWithoutTable(async () => (await pgDatabase(adapter)!.one(`EXPLAIN (FORMAT JSON) ${rows}`))['QUERY PLAN'] as Array<{ Plan: PlanNode }>)
  if (plan === 0) return 0
  const estimate = plan[0]?.Plan['Plan Rows']
  return typeof estimate === 'number' ? Math.round(estimate) : undefined
}

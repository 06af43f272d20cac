// The planner's estimate of how many rows a count would visit: the count's
// own statement (as Parse's adapter builds it) under EXPLAIN, never run.
import { pgCountStatement, pgDatabase } from '../../parse/adapter-internals.js'

const COUNT_HEAD = /^\s*SELECT\s+count\(\*\)\s+FROM\s/i

interface PlanNode { 'Plan Rows'?: number }

export async function plannedRows (adapter: object, className: string, schema: unknown, query: Record<string, unknown>): Promise<number | undefined> {
  const statement = await pgCountStatement(adapter, className, schema, query)
  if (!COUNT_HEAD.test(statement)) return undefined
  // The rows themselves, not count(*): the aggregate's estimate is one row, and a parallel scan's is per worker.
  const rows = statement.replace(COUNT_HEAD, 'SELECT 1 FROM ')
  let plan: Array<{ Plan: PlanNode }>
  try {
    plan = (await pgDatabase(adapter)!.one(`EXPLAIN (FORMAT JSON) ${rows}`))['QUERY PLAN'] as Array<{ Plan: PlanNode }>
  } catch (error) {
    // A class never written has no table: nothing to count, as Parse's own count answers.
    if ((error as { code?: string }).code === '42P01') return 0
    throw error
  }
  const estimate = plan[0]?.Plan['Plan Rows']
  return typeof estimate === 'number' ? Math.round(estimate) : undefined
}

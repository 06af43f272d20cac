// The rows a count would visit, as one statement: Parse's adapter builds the
// count (its row ACL and conditions included), and the head is swapped so the
// estimate and the capped count can wrap it.
import { pgCountStatement } from '../../parse/adapter-internals.js'

const COUNT_HEAD = /^\s*SELECT\s+count\(\*\)\s+FROM\s/i

/** `SELECT 1 FROM … WHERE …` for the query's matching rows; undefined when Parse's count is not a plain one. */
export async function matchingRowsStatement (adapter: object, className: string, schema: unknown, query: Record<string, unknown>): Promise<string | undefined> {
  const statement = await pgCountStatement(adapter, className, schema, query)
  return COUNT_HEAD.test(statement) ? statement.replace(COUNT_HEAD, 'SELECT 1 FROM ') : undefined
}

/** A class never written has no table: nothing to count, as Parse's own count answers. */
export async function zeroWithoutTable<T> (read: () => Promise<T>): Promise<T | 0> {
  try {
    return await read()
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return 0
    throw error
  }
}

// A capped count on PostgreSQL: the matching rows, at most N of them, counted
// by the database, which stops at the cap and sends one number back instead
// of N ids to decode.
import { pgDatabase } from '../../parse/adapter-internals.js'
import { matchingRowsStatement, zeroWithoutTable } from './count-statement.js'

/** How many rows match, counting no further than `limit`; undefined when the statement is not a plain count. */
export async function pgCappedCount (adapter: object, className: string, schema: unknown, query: Record<string, unknown>, limit: number): Promise<number | undefined> {
  const rows = await matchingRowsStatement(adapter, className, schema, query)
  if (rows === undefined) return undefined
  return await zeroWithoutTable(async () => (await pgDatabase(adapter)!.one(`SELECT count(*)::int AS count FROM (${rows} LIMIT ${Math.trunc(limit)}) AS capped`)).count as number)
}

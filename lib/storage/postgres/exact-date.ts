// A Date as PostgreSQL keeps it, to the microsecond, for a page's cursor.
// Parse answers milliseconds, but a row written by SQL may hold microseconds
// (now() does), and a page is ordered by the stored value: the rows of one
// millisecond at different microseconds were skipped or repeated by a cursor
// that knew only the millisecond. One look-up by objectId (the primary key)
// when a page ends on a Date; the page's own statement is unchanged.
import { pgDatabase } from '../../parse/adapter-internals.js'
import type { PgQueries } from '../../parse/storage-shapes.js'
import { sessionFor } from '../scope.js'

/** The row's stored `field` as ISO text with six fraction digits; undefined when the row is not there (or not readable so). */
export async function exactDate (adapter: object, className: string, field: string, objectId: string): Promise<string | undefined> {
  // Inside a transaction, on its connection: the row may be its own, and a second connection could wait on a full pool.
  const queries = (sessionFor(className) as { t?: PgQueries } | undefined)?.t ?? pgDatabase(adapter)
  if (!queries) return undefined
  try {
    // one(): a row by its primary key (it rejects when the row is gone: then the millisecond, as before).
    const { iso } = await queries.one('SELECT to_char($1:name AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\') AS iso FROM $2:name WHERE "objectId" = $3', [field, className, objectId])
    return typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? iso : undefined
  } catch {
    // The row gone since its page was read, or a date PostgreSQL writes otherwise (before year 1): the millisecond, as before.
    return undefined
  }
}

// An order on a Relation field: its rows live in a join table, the class has
// no column or value to order by. PostgreSQL's adapter swallowed the missing
// column and answered no rows (200, an empty list); MongoDB ordered by nothing.
// Both lanes refuse it here, at the adapter's find, with Parse's 102.
import Parse from 'parse/node'

/** Refuses a find whose sort names a Relation field of `schema` (or a key under one). */
export function refuseRelationOrder (schema: unknown, options: unknown): void {
  const sort = (options as { sort?: unknown } | null | undefined)?.sort
  if (sort === null || typeof sort !== 'object') return
  const fields = (schema as { fields?: Record<string, { type?: unknown } | undefined> } | null | undefined)?.fields
  if (!fields) return
  for (const key of Object.keys(sort)) {
    const root = key.split('.')[0]
    if (Object.hasOwn(fields, root) && fields[root]?.type === 'Relation') {
      throw new Parse.Error(Parse.Error.INVALID_QUERY, `order: ${key} is ${key === root ? 'a Relation field' : 'inside a Relation field'}, which cannot order a list (its objects are kept apart from the rows); order by a String, Number, Date or Boolean field`)
    }
  }
}

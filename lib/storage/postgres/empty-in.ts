// An empty $in matches nothing (MongoDB, and what a client means by "one of
// these none"), but Parse's PostgreSQL adapter writes it as `field IS NULL`:
// every row without the field matched. A $inQuery or $select whose inner
// query finds nothing arrives here as such an $in, so "posts whose author is
// one of my friends" answered, to a user without friends, every post without
// an author. A condition with an empty $in is rewritten to one no row meets
// (objectId IS NULL), in the where and in its $or, $and and $nor branches.

type Query = Record<string, unknown>

function isQuery (value: unknown): value is Query {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The query with each condition that holds an empty $in made one that matches no row; the same object when it has none. */
export function emptyInMatchesNothing (query: unknown): unknown {
  if (!isQuery(query)) return query
  let copy: Query | undefined
  for (const [key, value] of Object.entries(query)) {
    if ((key === '$or' || key === '$and' || key === '$nor') && Array.isArray(value)) {
      const branches = value.map(emptyInMatchesNothing)
      if (branches.some((branch, at) => branch !== value[at])) (copy ??= { ...query })[key] = branches
      continue
    }
    // One conjunct that no row meets: the whole condition meets none. ($in is a query operator, read by name.)
    const { $in: list } = isQuery(value) ? value : {}
    if (Array.isArray(list) && list.length === 0) return { objectId: { $exists: false } }
  }
  return copy ?? query
}

// How many values a query's `where` holds. PostgreSQL's adapter sends one
// statement parameter per value, and the driver takes at most 100,000 in a
// statement: past that a find was a 500. Every database lane takes this many.

/** The most values (numbers, strings, booleans, nulls at any depth) a `where` may hold. */
export const MAX_WHERE_VALUES = 10_000

/** The sentence a refusal of a larger `where` says. */
export const TOO_MANY_WHERE_VALUES = `where holds more than ${MAX_WHERE_VALUES} values (each item of a $in list is one): split it into several queries`

/** Whether `where` holds more than MAX_WHERE_VALUES values; stops counting once past it. */
export function tooManyWhereValues (where: unknown): boolean {
  let left = MAX_WHERE_VALUES
  const stack: unknown[] = [where]
  while (stack.length > 0) {
    const next = stack.pop()
    if (next !== null && typeof next === 'object') {
      for (const inner of Object.values(next)) stack.push(inner)
    } else if (--left < 0) {
      return true
    }
  }
  return false
}

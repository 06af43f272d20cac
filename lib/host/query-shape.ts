// Parse Server's find routes take `where`, `limit` and `skip` from the query
// string (each value JSON-parsed when it parses) or a GET-overridden body, and
// some shapes it does not check crash it: `where=null`, `$or: [null]`,
// `$and: "x"` (a TypeError), `limit=abc` (NaN reaches the database). Each was
// a 500. The mount refuses them first, in the kit's {code, error} shape.
// `limit=-5`, `skip=-5` (PostgreSQL refuses a negative LIMIT or OFFSET) and
// numbers past what the databases take (`limit=1e20`) were 500s too: both
// must lie in 0…2147483647, which every database lane takes.
// A `where` of 100,000 values (`$in`, `$nin`, a long `$or`) was a 500 on
// PostgreSQL: at most MAX_WHERE_VALUES are taken (storage/where-values.ts).

import { isJsonObject } from './json-object.js'
import { TOO_MANY_WHERE_VALUES, tooManyWhereValues } from '../storage/where-values.js'

/** Parse's routes that run a find: /classes/{name}, /aggregate/{name} and the special classes' own. */
const FIND_PATH = /^\/(?:(?:classes|aggregate)\/[^/]+|users|roles|sessions|installations|push_audiences)\/?$/i

const LOGICAL = new Set(['$or', '$and', '$nor'])
/** Operators holding a subquery `{query: {className, where}, key}`: Parse reads that `where` without checking it. */
const SELECTS = new Set(['$select', '$dontSelect'])
/** The largest limit or skip taken: a 32-bit count, which MongoDB and PostgreSQL both take. */
export const MAX_LIMIT_OR_SKIP = 2_147_483_647

/** Why Parse cannot run this find's `where`, `limit` or `skip`, or undefined. `method` is the one Parse runs (after `_method`). */
export function findQueryProblem (method: string, path: string, query: unknown, body: unknown): string | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !FIND_PATH.test(path)) return undefined
  const parameter = (name: string) => asParseReads(query, body, name)
  for (const name of ['limit', 'skip']) {
    const value = parameter(name)
    if (value === undefined || value === null || value === '') continue
    const number = Number(value)
    if (!Number.isInteger(number) || number < 0 || number > MAX_LIMIT_OR_SKIP) return `${name} must be a whole number from 0 to ${MAX_LIMIT_OR_SKIP} (got ${JSON.stringify(value)})`
  }
  let where = parameter('where')
  if (where === undefined) return undefined
  if (typeof where === 'string') {
    try {
      where = JSON.parse(where)
    } catch {
      return undefined // Parse answers it: "where parameter is not valid JSON"
    }
  }
  if (!isJsonObject(where)) return `where must be a JSON object (got ${where === null ? 'null' : Array.isArray(where) ? 'an array' : typeof where})`
  return logicalProblem(where, 0) ?? (tooManyWhereValues(where) ? TOO_MANY_WHERE_VALUES : undefined)
}

/**
 * Why a find without the master key may not ask this many rows (the kit's maxClientLimit), or
 * undefined: Parse alone has no bound, and one anonymous `limit=1000000` held a 1M-row table's
 * rows in memory for the whole databaseTimeout.
 */
export function clientLimitProblem (method: string, path: string, query: unknown, body: unknown, bound: number): string | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !FIND_PATH.test(path)) return undefined
  const limit = Number(asParseReads(query, body, 'limit'))
  if (!(limit > bound)) return undefined
  return `limit ${limit} is more than a client may ask (maxClientLimit: ${bound}); page with skip, or ask with the master key`
}

/** Parse's read routes that take include, keys and excludeKeys: the finds and the gets by id. */
const READ_PATH = /^\/(?:(?:classes|aggregate)\/[^/]+(?:\/[^/]+)?|(?:users|roles|sessions|installations)(?:\/[^/]+)?|push_audiences)\/?$/i
const PATH_LISTS = ['include', 'keys', 'excludeKeys']
/** Segments a dotted path may have: Parse builds every prefix of each path (time squared in its length) before its own depth check, which the master key skips. */
export const MAX_PATH_SEGMENTS = 64

/** Why Parse should not be given this read's include, keys or excludeKeys, or undefined. `method` is the one Parse runs (after `_method`). */
export function pathListProblem (method: string, path: string, query: unknown, body: unknown): string | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !READ_PATH.test(path)) return undefined
  for (const name of PATH_LISTS) {
    const value = asParseReads(query, body, name)
    if (value === undefined || value === null) continue
    // Parse reads each as String(value): a list of comma-separated dotted paths.
    let segments = 1
    for (const character of String(value)) {
      if (character === ',') segments = 1
      else if (character === '.' && ++segments > MAX_PATH_SEGMENTS) return `${name} paths have at most ${MAX_PATH_SEGMENTS} segments ("a.b.c" has 3)`
    }
  }
  return undefined
}

/** What Parse's find reads: the query string's value (JSON-parsed when it parses) over the body's. */
function asParseReads (query: unknown, body: unknown, name: string): unknown {
  const fromQuery = isJsonObject(query) ? query[name] : undefined
  if (typeof fromQuery === 'string') {
    try {
      return JSON.parse(fromQuery)
    } catch {
      return fromQuery
    }
  }
  if (fromQuery !== undefined) return fromQuery // repeated: an array, as Parse gets it
  return isJsonObject(body) ? body[name] : undefined
}

/** `$or`, `$and`, `$nor` hold lists of conditions (objects), at any depth Parse walks them. */
function logicalProblem (condition: Record<string, unknown>, depth: number): string | undefined {
  if (depth > 64) return undefined // the body depth limit, or the header size, bounds it before this
  for (const [key, value] of Object.entries(condition)) {
    if (LOGICAL.has(key)) {
      if (!Array.isArray(value) || !value.every(isJsonObject)) return `${key} must be a list of conditions (JSON objects)`
      for (const inner of value as Array<Record<string, unknown>>) {
        const problem = logicalProblem(inner, depth + 1)
        if (problem) return problem
      }
    } else if (SELECTS.has(key) && isJsonObject(value) && isJsonObject(value.query) && 'where' in value.query && !isJsonObject(value.query.where)) {
      return `${key}'s query.where must be a JSON object`
    } else if (isJsonObject(value)) {
      const problem = logicalProblem(value, depth + 1)
      if (problem) return problem
    }
  }
  return undefined
}

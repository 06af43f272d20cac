// Keyset paging of any declared query: rows ordered by an indexed sort key,
// objectId breaking ties, each page starting after the last row of the one
// before. The cursor (`after`, the previous page's `next`) is opaque and
// signed (page-cursor.ts). Unlike skip/offset, a page at any depth costs what
// the first page costs with an index on (sort key, objectId), and rows
// inserted or deleted between pages are neither skipped nor repeated.
//
// The condition for a descending page after (v, id) is
//   sortBy <= v AND (sortBy < v OR objectId < id)
// (mirrored for ascending): the first term bounds where an index scan
// starts, the second drops the rows up to and including the cursor's row.
import Parse from 'parse/node'
import type { TSchema } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { clampLimit, MAX_QUERY_LIMIT } from '../model/helpers.js'
import { queryRows, type QueryCaller, type QueryRowsResult } from './query-rows.js'
import type { CountKind, CountMode } from './count.js'
import { cursorBinding, decodeCursor, encodeCursor, type CursorPosition } from './page-cursor.js'
import { parseConfig, schemaMemo } from '../access/parse-config.js'
import { withOneSchemaLoad } from '../parse/one-schema-load.js'
import { currentDatabase } from './database.js'
import { exactDate } from './postgres/exact-date.js'

export interface PageOptions {
  /** Rows per page; clamped like clampLimit (default 100, at most MAX_QUERY_LIMIT). */
  limit?: number
  /** An indexed plain field (String, Number, Date, or createdAt/updatedAt); default 'createdAt'. */
  sortBy?: string
  /** Default true: newest (largest) first. */
  descending?: boolean
  /** As queryRows' count (true is 'exact'), of the whole query, not of the rows after the cursor; default 'none'. */
  count?: boolean | CountMode
  /** The request parameter holding the cursor; default 'after' (named in refusals). */
  cursorParam?: string
}

export interface Page<Row> extends QueryRowsResult<Row> {
  /** The cursor of the next page (pass it as `after`), or null on the last page. */
  next: string | null
}

/** Parameters of offset paging that a keyset list refuses instead of ignoring. */
const OFFSET_PARAMS = ['skip', 'page', 'offset']
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/
const DATE_FIELDS = new Set(['createdAt', 'updatedAt'])
/** Fields every row has. */
const ALWAYS_SET = new Set(['objectId', 'createdAt', 'updatedAt'])
/**
 * The longest cursor read: what a sort value of some 12,000 characters gives (a longer one
 * cannot travel in a URL either); 1024 refused the cursor of a 750-character String, and the list stopped there.
 */
const MAX_CURSOR_CHARS = 16_384
/** Parse's query operator for "all of" (a name, not a private member). */
const AND = '$and'

/**
 * One page of `query` for the caller, after the cursor in
 * `request.params[cursorParam]`. pageRows sets the order and the limit itself:
 * a query with its own order or skip is a programming error.
 */
export async function pageRows<Row = Record<string, unknown>> (query: Parse.Query, request: QueryCaller & { params?: Record<string, unknown> }, options: PageOptions = {}): Promise<Page<Row>> {
  const sortBy = options.sortBy ?? 'createdAt'
  const descending = options.descending ?? true
  const param = options.cursorParam ?? 'after'
  const limit = clampLimit(options.limit)
  if (!FIELD_NAME.test(sortBy)) throw new Parse.Error(Parse.Error.INVALID_QUERY, `pageRows: sortBy must name a plain field; got ${JSON.stringify(sortBy)}`)
  const json = query.toJSON() as { where?: Record<string, unknown>, order?: string, skip?: number, [option: string]: unknown }
  if (json.order !== undefined) throw new Error(`pageRows sets the order itself (${sortBy}, then objectId): remove ascending()/descending() from the ${query.className} query and pass { sortBy, descending }`)
  if (json.skip !== undefined && json.skip > 0) throw new Error(`pageRows pages with a cursor: remove skip() from the ${query.className} query`)
  if (!ALWAYS_SET.has(sortBy)) await sortable(query.className, sortBy)

  const params = request.params ?? {}
  for (const name of OFFSET_PARAMS) {
    if (Object.hasOwn(params, name)) throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${name} is not supported: page with \`${param}\` (the \`next\` of the previous page)`)
  }
  const own = json.where ?? {}
  const binding = cursorBinding(query.className, sortBy, descending, own)
  // A row without a sort value has no place in the order (and no cursor): such rows are not listed, nor counted.
  // `$ne: null`, not `$exists`: MongoDB keeps a null a client saved, and `$exists` lists it (a 500 at a page's end).
  const where = ALWAYS_SET.has(sortBy) ? own : withConditions(own, { [sortBy]: { $ne: null } })
  const after = await exactPosition(cursorOf(params[param], binding, param), query.className, sortBy)

  const { where: _where, limit: _limit, count: _count, ...rest } = json
  const direction = descending ? '-' : ''
  const pageQuery = Parse.Query.fromJSON(query.className, {
    ...rest,
    // A query that selects keys still needs the position of its last row.
    ...(typeof rest.keys === 'string' ? { keys: `${rest.keys},${sortBy}` } : {}),
    where: after ? afterPosition(where, sortBy, descending, after) : where,
    order: `${direction}${sortBy},${direction}objectId`,
    limit: limit + 1 // one more row says whether a next page exists
  })
  const counting = options.count !== undefined && options.count !== false && options.count !== 'none'
  // true is 'exact' here: a page always says what its count is.
  const countMode = options.count === true ? 'exact' : options.count as Exclude<CountMode, 'none'>
  let found: QueryRowsResult<Row>
  let counted: QueryRowsResult<unknown> | undefined
  if (counting && !after && limit > 0) {
    // The first page's rows and the count share their conditions: one read answers both (side by side).
    found = counted = await queryRows<Row>(pageQuery, request, { count: countMode })
  } else {
    [found, counted] = await Promise.all([
      limit === 0 ? Promise.resolve({ results: [] as Row[] }) : queryRows<Row>(pageQuery, request),
      counting ? queryRows(Parse.Query.fromJSON(query.className, { ...rest, where }).limit(0), request, { count: countMode }) : Promise.resolve(undefined)
    ])
  }
  const results = found.results.slice(0, limit)
  const last = results.at(-1) as Record<string, unknown> | undefined
  // The rows on either side of the last one in the order: the one before it (on this page, or the cursor's) and the next page's first.
  const neighbours = [results.length > 1 ? positionOf(results.at(-2) as Record<string, unknown>, sortBy) : after, found.results[limit] ? positionOf(found.results[limit] as Record<string, unknown>, sortBy) : undefined]
  const next = found.results.length > limit && last ? encodeCursor(markShared(positionOf(last, sortBy), neighbours), binding) : null
  const page: Page<Row> = { results, next }
  if (counted?.count !== undefined) {
    page.count = counted.count
    page.countKind = counted.countKind
  }
  return page
}

/** The types a page's position can hold (positionOf). */
const SORTABLE_TYPES = new Set(['String', 'Number', 'Date'])

/**
 * A sortBy of another type is refused before the read (102, 400): an application may pass a client's
 * sortBy through, and a Boolean or Array field failed only when a next page existed, with a 500.
 */
async function sortable (className: string, sortBy: string): Promise<void> {
  const schema = await withOneSchemaLoad(parseConfig(Parse.CoreManager.get('APPLICATION_ID') as string), { memo: schemaMemo() }).database.loadSchema()
  // A class not made yet lists nothing; its field is checked once it exists.
  if (!schema.schemaData[className]) return
  const expected = schema.getExpectedType(className, sortBy) as { type?: unknown } | string | undefined
  const type = typeof expected === 'string' ? expected : expected?.type
  if (typeof type === 'string' && SORTABLE_TYPES.has(type)) return
  throw new Parse.Error(Parse.Error.INVALID_QUERY, `sortBy ${sortBy}: ${type === undefined ? `${className} has no such field` : `${/^[AEIOU]/.test(String(type)) ? 'an' : 'a'} ${String(type)} field`}; a page is ordered by a String, Number or Date field`)
}

function refuse (param: string): never {
  throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${param}: not a cursor of this list; start again without it`)
}

/** The position a request's cursor carries; undefined for the first page; a refusal for anything not issued by this list. */
function cursorOf (given: unknown, binding: string, param: string): CursorPosition | undefined {
  if (given === undefined || given === null || given === '') return undefined
  if (typeof given !== 'string' || given.length > MAX_CURSOR_CHARS) refuse(param)
  return decodeCursor(given, binding) ?? refuse(param)
}

/** A row's position as a cursor keeps it. */
function positionOf (row: Record<string, unknown>, sortBy: string): CursorPosition {
  const value = row[sortBy]
  const objectId = row.objectId as string
  if (DATE_FIELDS.has(sortBy) && typeof value === 'string') return { kind: 'date', value, objectId }
  const date = value as { __type?: unknown, iso?: unknown } | null
  if (typeof date === 'object' && date !== null && date.__type === 'Date' && typeof date.iso === 'string') return { kind: 'date', value: date.iso, objectId }
  if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'number', value, objectId }
  if (typeof value === 'string') return { kind: 'string', value, objectId }
  throw new Error(`pageRows: sortBy ${sortBy} must be a String, Number or Date field that every listed row has; row ${objectId} has ${JSON.stringify(value)}`)
}

/**
 * A Date position a row next to it in the order shares its millisecond with is marked: on PostgreSQL
 * the stored value may hold microseconds that order those rows, and the cursor's millisecond cannot
 * place it among them. Otherwise its millisecond is its own (the rows of a millisecond are next to
 * each other in the order) and places it exactly.
 */
function markShared (position: CursorPosition, neighbours: Array<CursorPosition | undefined>): CursorPosition {
  if (position.kind !== 'date' || MICROSECONDS.test(position.value as string)) return position
  const millisecond = Date.parse(position.value as string)
  return neighbours.some((near) => near?.kind === 'date' && Date.parse(near.value as string) === millisecond) ? { ...position, shared: true } : position
}

/**
 * A marked position read as stored, to the microsecond (exact-date.ts, one look-up by objectId), when
 * its cursor is used: a list whose `next` is never followed pays nothing for it. A row gone since, or
 * whose date moved out of the cursor's millisecond, keeps the millisecond. MongoDB keeps milliseconds.
 */
async function exactPosition (position: CursorPosition | undefined, className: string, sortBy: string): Promise<CursorPosition | undefined> {
  if (!position?.shared) return position
  const database = currentDatabase()
  if (database?.kind !== 'postgres') return position
  const exact = await exactDate(database.adapter, className, sortBy, position.objectId)
  const sameMillisecond = exact !== undefined && Math.floor(Date.parse(exact)) === Date.parse(position.value as string)
  return sameMillisecond ? { ...position, value: exact } : position
}

/** A date's ISO text with microseconds (six fraction digits): a stored instant, not Parse's millisecond. */
const MICROSECONDS = /\.\d{6}Z$/

/**
 * The keyset condition after `after`, beside the query's own conditions. A
 * date the cursor holds to the microsecond (PostgreSQL, exactPosition) is
 * compared as it is stored. One it holds to the millisecond (MongoDB, or a
 * row gone before its look-up) may stand for a stored value with
 * microseconds, which lies past its own millisecond, and `>= v AND (> v OR
 * objectId > id)` listed it again on every page (ascending) or skipped its
 * millisecond's other rows (descending). So such a millisecond is one place,
 * its rows in objectId order: the bound past it is its last microsecond
 * (`v.mmm999`).
 */
function afterPosition (where: Record<string, unknown>, sortBy: string, descending: boolean, after: CursorPosition): Record<string, unknown> {
  const exact = after.kind === 'date' && MICROSECONDS.test(after.value as string)
  const [first, last] = after.kind === 'date'
    ? [{ __type: 'Date', iso: after.value }, { __type: 'Date', iso: exact ? after.value : new Date(after.value).toISOString().replace(/Z$/, '999Z') }]
    : [after.value, after.value]
  const [orEqual, strictly] = descending ? ['$lte', '$lt'] : ['$gte', '$gt']
  return withConditions(
    where,
    { [sortBy]: { [orEqual]: descending ? last : first } },
    { $or: [{ [sortBy]: { [strictly]: descending ? first : last } }, { objectId: { [strictly]: after.objectId } }] }
  )
}

/** The query's own conditions and more, side by side in `$and` (the query's own `$and` kept). */
function withConditions (where: Record<string, unknown>, ...conditions: Array<Record<string, unknown>>): Record<string, unknown> {
  const own = where[AND]
  return { ...where, [AND]: [...(Array.isArray(own) ? own as unknown[] : []), ...conditions] }
}

/** Declared parameters of a paged list (validation.fields). */
export const pagingFields = {
  // Bounds the route refuses outside of (400, naming `limit`) and the API document shows.
  limit: { type: Number, integer: true, min: 0, max: MAX_QUERY_LIMIT, description: `Rows per page (default 100, at most ${MAX_QUERY_LIMIT}; 0: no rows, only the count of a list that counts).` },
  after: { type: String, description: 'The `next` of the previous page; omit it for the first page. Offset paging (`skip`, `page`, `offset`) is refused.' }
}

/**
 * The answer of a paged list (a TypeBox object, for `returns`): its rows, the
 * next page's cursor, and the count when one is asked for.
 */
export function pageOf<T extends TSchema> (row: T, options: { description?: string } = {}) {
  return Type.Object({
    results: Type.Array(row),
    next: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `after` for the next page; null on the last page.' }),
    count: Type.Optional(Type.Integer({ minimum: 0, description: 'How many rows match the list\'s filter, on every page; what it means is in countKind.' })),
    // One enum (not a union of literals): what API documents and client generators show best.
    countKind: Type.Optional(Type.Unsafe<CountKind>({
      type: 'string',
      enum: ['exact', 'estimated', 'atLeast'],
      description: 'exact: every matching row counted; estimated: the database\'s estimate, which may be off; atLeast: at least `count` rows match (counting stopped at that cap).'
    }))
  }, options.description ? { description: options.description } : {})
}

// A declared query's plain read, answered from Parse's storage adapter with
// the steps Parse's RestQuery and DatabaseController would take for it, minus
// their generic machinery (a query object per call, relation and subquery
// rewriting, include handling, pointer permissions, protected fields, a
// second permission pass for the count). It serves only reads those steps
// are known for (see `servable` and `permitted`); for anything else it
// answers undefined and the caller runs Parse's RestQuery as before.
//
// What it keeps, step for step with Parse 9.10:
// - the class-level permission (Parse's own testPermissionsForClassName) for
//   find (or get) and count, decided before any row is read;
// - the row ACL as Parse adds it: `_rperm ∈ {null, '*', ...caller and roles}`
//   (roles from Parse's Auth#getUserRoles, with its cache);
// - conditions as Parse hands them to the adapter: plain ones, and `$or` /
//   `$and` lists of plain ones (pageRows' keyset condition), unchanged;
// - SQL and row decoding by Parse's adapter (adapter.find / adapter.count, or
//   the caller's counter for a count mode), rows and count side by side;
// - ACL shaping (untransformObjectACL), hidden `_` columns dropped and file
//   URLs expanded as RestQuery does.
// test/adapter-read.test.ts runs every case it serves through it and through
// Parse's REST API and compares the answers byte for byte.
import type Parse from 'parse/node'
import { parseInternals } from './internals.js'
import { fastPathsOn } from './fast-path-switch.js'
import type { ParseConfig, SchemaController } from './server-shapes.js'

/**
 * Counts the rows of a read as the adapter has it (the row-ACL term included),
 * in whatever way the caller chose; given a copy of the query it may keep.
 */
export type RowCounter = (adapter: object, className: string, schema: ClassSchema, query: Record<string, unknown>) => Promise<{ count: number, countKind?: string }>

/** The query as Parse.Query#toJSON gives it, the where apart; `count` as Parse's REST count=1, or a counter of the caller's. */
export interface PlainRead {
  className: string
  where: Record<string, unknown>
  options: Record<string, unknown>
  counter?: RowCounter
}

/** The caller as Parse's Auth has it. */
interface ReadAuth {
  isMaster?: boolean
  isMaintenance?: boolean
  user?: Parse.User
  getUserRoles (): Promise<string[]>
}

export interface ClassSchema { fields: Record<string, { type: string }> }

/** Parse's storage adapter, the two calls a read makes (both adapters have them). */
interface ReadAdapter {
  find (className: string, schema: ClassSchema, query: Record<string, unknown>, options: Record<string, unknown>): Promise<Array<Record<string, unknown>>>
  count (className: string, schema: ClassSchema, query: Record<string, unknown>, readPreference?: unknown, estimate?: unknown, hint?: unknown, comment?: unknown): Promise<number>
}

interface ReadSchemaController extends SchemaController {
  getOneSchema (className: string, allowVolatileClasses?: boolean): Promise<ClassSchema>
  getClassLevelPermissions (className: string): Record<string, unknown> | undefined
  testPermissionsForClassName (className: string, aclGroup: string[], operation: string): boolean
}

interface ReadConfig extends ParseConfig {
  applicationId: string
  requestComplexity?: { queryDepth?: number }
  filesController: { expandFilesInObject (config: unknown, objects: unknown): Promise<void> }
}

const OPTIONS = new Set(['limit', 'skip', 'order', 'count'])
const FIELD_TYPES = new Set(['String', 'Number', 'Boolean', 'Date'])
const OPERATORS = new Set(['$lt', '$lte', '$gt', '$gte', '$ne', '$in', '$nin', '$exists'])
/** How deep `$or` / `$and` may nest here (a keyset page needs two levels). */
const MAX_DEPTH = 4

/** What one comparison value may be for a field of this type: a plain value, or a Date as Parse encodes it. */
function plainValue (type: string, value: unknown): boolean {
  switch (type) {
    case 'String': return typeof value === 'string'
    case 'Number': return typeof value === 'number' && Number.isFinite(value)
    case 'Boolean': return typeof value === 'boolean'
    case 'Date': {
      const date = value as { __type?: unknown, iso?: unknown } | null
      return typeof date === 'object' && date !== null && Object.keys(date).length === 2 && date.__type === 'Date' && typeof date.iso === 'string'
    }
    default: return false
  }
}

function plainConstraint (type: string, constraint: unknown): boolean {
  if (plainValue(type, constraint)) return true
  if (typeof constraint !== 'object' || constraint === null || Array.isArray(constraint)) return false
  const entries = Object.entries(constraint)
  return entries.length > 0 && entries.every(([operator, value]) => {
    if (!OPERATORS.has(operator)) return false
    if (operator === '$exists') return typeof value === 'boolean'
    if (operator === '$ne' && value === null) return true // has a value (pageRows' condition on its sort key)
    if (operator === '$in' || operator === '$nin') return Array.isArray(value) && value.length > 0 && value.every((item) => plainValue(type, item))
    return plainValue(type, value)
  })
}

/** Only plain fields compared with plain values, ordered by plain fields, paged: what Parse's generic steps leave unchanged. */
function servable (read: PlainRead, schema: ClassSchema): boolean {
  if (!Object.keys(read.options).every((option) => OPTIONS.has(option))) return false
  const { limit, skip, order, count } = read.options
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 0)) return false
  if (skip !== undefined && !(Number.isInteger(skip) && (skip as number) >= 0)) return false
  if (count !== undefined && count !== 1 && count !== true) return false
  const typeOf = (field: string) => {
    const type = Object.hasOwn(schema.fields, field) ? schema.fields[field]?.type : undefined
    return type !== undefined && FIELD_TYPES.has(type) ? type : undefined
  }
  if (order !== undefined) {
    if (typeof order !== 'string') return false
    if (!order.split(',').every((key) => typeOf(key.trim().replace(/^-/, '')) !== undefined)) return false
  }
  return plainWhere(read.where, typeOf, 0)
}

/** Plain constraints on plain fields, or `$or` / `$and` lists of such wheres (Parse passes them to the adapter unchanged). */
function plainWhere (where: unknown, typeOf: (field: string) => string | undefined, depth: number): boolean {
  if (typeof where !== 'object' || where === null || Array.isArray(where)) return false
  return Object.entries(where).every(([field, constraint]) => {
    if (field === '$or' || field === '$and') {
      return depth < MAX_DEPTH && Array.isArray(constraint) && constraint.length > 0 && constraint.every((inner) => plainWhere(inner, typeOf, depth + 1))
    }
    const type = typeOf(field)
    return type !== undefined && plainConstraint(type, constraint)
  })
}

/** How deep `$or` / `$and` nest in a where (0: not at all). */
function nesting (where: unknown): number {
  if (typeof where !== 'object' || where === null) return 0
  let deepest = 0
  for (const [key, value] of Object.entries(where)) {
    if ((key === '$or' || key === '$and') && Array.isArray(value)) for (const inner of value) deepest = Math.max(deepest, 1 + nesting(inner))
  }
  return deepest
}

/** Parse's sort map for an order option ('-createdAt,title' → {createdAt: -1, title: 1}). */
function sortOf (order: unknown): Record<string, number> {
  const sort: Record<string, number> = {}
  if (typeof order !== 'string') return sort
  for (const raw of order.split(',')) {
    const field = raw.trim()
    if (field.startsWith('-')) sort[field.slice(1)] = -1
    else sort[field] = 1
  }
  return sort
}

function hasFileField (schema: ClassSchema): boolean {
  for (const name in schema.fields) if (schema.fields[name].type === 'File') return true
  return false
}

/** Parse's untransformObjectACL: _rperm/_wperm become an ACL object after the other keys. */
function withACL (row: Record<string, unknown>): Record<string, unknown> {
  const { _rperm, _wperm, ...output } = row as { _rperm?: string[], _wperm?: string[] } & Record<string, unknown>
  if (_rperm || _wperm) {
    const acl: Record<string, { read?: true, write?: true }> = {}
    for (const entry of _rperm ?? []) (acl[entry] ??= {}).read = true
    for (const entry of _wperm ?? []) (acl[entry] ??= {}).write = true
    output.ACL = acl
  }
  // Parse's filterSensitiveData: columns whose name starts with '_' never leave the server.
  for (const key of Object.keys(output)) if (key.startsWith('_')) delete output[key]
  return output
}

/** No protected field applies: no rule names any field (the empty '*' rule Parse adds by default is fine). */
function noProtectedFields (permissions: Record<string, unknown> | undefined): boolean {
  const rules = permissions?.protectedFields as Record<string, unknown> | undefined
  return rules === undefined || Object.values(rules).every((fields) => Array.isArray(fields) && fields.length === 0)
}

/**
 * The read answered from the adapter, or undefined when it is not one this
 * path serves (the caller then runs Parse's RestQuery, which answers it —
 * including every error — as Parse does).
 */
export async function adapterRead (config: ParseConfig, auth: ReadAuth, read: PlainRead): Promise<{ results: Array<Record<string, unknown>>, count?: number, countKind?: string } | undefined> {
  // fastPaths: false: every read is Parse's.
  if (!fastPathsOn()) return undefined
  const server = config as ReadConfig
  const { className } = read
  if (className.startsWith('_') || auth.isMaintenance) return undefined
  const { triggers } = parseInternals()
  if (triggers.getTrigger(className, 'beforeFind', server.applicationId) || triggers.getTrigger(className, 'afterFind', server.applicationId)) return undefined
  const schemaController = await server.database.loadSchema() as ReadSchemaController
  const isMaster = auth.isMaster === true
  let schema: ClassSchema
  try {
    schema = await schemaController.getOneSchema(className, isMaster)
  } catch {
    return undefined // no such class: Parse answers it (an empty list, or its error)
  }
  if (!servable(read, schema)) return undefined
  // Parse's requestComplexity.queryDepth refuses deep nesting for everyone but the master key: Parse answers it.
  const maxDepth = server.requestComplexity?.queryDepth
  if (!isMaster && typeof maxDepth === 'number' && maxDepth !== -1 && nesting(read.where) > maxDepth) return undefined

  const counting = read.options.count !== undefined || read.counter !== undefined
  let query: Record<string, unknown> = { ...read.where }
  if (!isMaster) {
    const permissions = schemaController.getClassLevelPermissions(className)
    if (!noProtectedFields(permissions)) return undefined
    const aclGroup = ['*', ...(auth.user ? [...await auth.getUserRoles(), auth.user.id!] : [])]
    const op = typeof read.where.objectId === 'string' && Object.keys(read.where).length === 1 ? 'get' : 'find'
    // Anything short of a plain grant (requiresAuthentication, pointer permissions, a refusal) is Parse's to answer.
    if (!schemaController.testPermissionsForClassName(className, aclGroup, op)) return undefined
    if (counting && !schemaController.testPermissionsForClassName(className, aclGroup, 'count')) return undefined
    query = { ...query, _rperm: { $in: [null, '*', ...aclGroup] } }
  }

  try {
    return await run(server, schema, read, query, counting)
  } catch {
    // A failed statement: Parse runs the query again and answers the failure in its own words.
    return undefined
  }
}

async function run (server: ReadConfig, schema: ClassSchema, read: PlainRead, query: Record<string, unknown>, counting: boolean): Promise<{ results: Array<Record<string, unknown>>, count?: number, countKind?: string }> {
  const { className } = read
  const adapter = server.database.adapter as ReadAdapter
  // The adapter may rewrite the query it is given: the count gets its own copy. Rows and count run side by side.
  const counted = !counting
    ? undefined
    : read.counter
      ? read.counter(adapter, className, schema, structuredClone(query))
      : adapter.count(className, schema, structuredClone(query), undefined, undefined, undefined, undefined).then((count) => ({ count }))
  const [results, count] = await Promise.all([findRows(server, adapter, schema, read, query), counted])
  return count === undefined ? { results } : { results, ...count }
}

async function findRows (server: ReadConfig, adapter: ReadAdapter, schema: ClassSchema, read: PlainRead, query: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  const { className } = read
  const limit = read.options.limit as number | undefined
  let results: Array<Record<string, unknown>> = []
  if (limit !== 0) {
    const rows = await adapter.find(className, schema, query, {
      skip: read.options.skip,
      limit,
      sort: sortOf(read.options.order),
      keys: undefined,
      readPreference: undefined,
      hint: undefined,
      caseInsensitive: false,
      explain: undefined,
      comment: undefined
    })
    results = rows.map(withACL)
    // Parse gives File values their URL; only a File column holds one (the schema refuses it elsewhere).
    if (hasFileField(schema)) await server.filesController.expandFilesInObject(server, results)
  }
  return results
}

// The SQL text of an index: the CREATE INDEX statement, its partial filter as a
// SQL condition, its names, and the index in words. Text only: nothing here
// talks to the database.
import type { IndexSpec } from '../indexes/plan.js'
import { plainFallbackName as fallbackSpecName } from '../indexes/sessions.js'
import { pgIdentifier } from './identifiers.js'

type Format = (query: string, values?: unknown) => string

/** The index in words: "unique (sku)", "ordered (rank desc)", "compound (code) unique where active = true". */
export function indexRule (spec: IndexSpec, format: Format): string {
  const columns = spec.fields.map((field) => `${field.name}${field.direction === -1 ? ' desc' : ''}`).join(', ')
  const parts = [spec.kind, `(${columns})`]
  if (spec.kind !== 'unique' && spec.unique) parts.push('unique')
  if (spec.sparse) parts.push('sparse')
  if (spec.partial) parts.push(`where ${partialSql(spec.partial, format)}`)
  return parts.join(' ')
}

/**
 * The name, the SQL that makes a planned index (built CONCURRENTLY: what is
 * printed when the database is away) and its definition: what decides whether
 * a stored index is the same one, kept in the form earlier versions recorded so
 * that an upgrade rebuilds nothing.
 */
export function postgresIndexCommand (spec: IndexSpec, format: Format): { name: string, command: string, definition: string } {
  // The definition keeps the declared name, as older kits recorded it: it is the record's key, not a command that runs.
  const name = pgIdentifier(declaredIndexName(spec))
  const definition = spec.kind === 'unique'
    ? format('ALTER TABLE $1:name ADD CONSTRAINT $2:name UNIQUE ($3:name)', [spec.className, declaredIndexName(spec), spec.fields[0].name])
    : createIndexSql(spec, format)
  return { name, definition, command: createIndexSql(spec, format, { name, concurrently: true }) }
}

/**
 * The CREATE INDEX statement of a planned index. By default the form earlier
 * versions recorded (its definition); the boot builds it CONCURRENTLY, under
 * `name` while a replacement is built beside the old index.
 */
export function createIndexSql (spec: IndexSpec, format: Format, options: { name?: string, concurrently?: boolean, ifNotExists?: boolean } = {}): string {
  const columns = spec.fields.map((field) => format('$1:name', [field.name]))
  const table = format('$1:name', [spec.className])
  const name = format('$1:name', [options.name ?? spec.name])
  const create = (unique: boolean) => `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${options.concurrently ? 'CONCURRENTLY ' : ''}${options.ifNotExists === false ? '' : 'IF NOT EXISTS '}${name} ON ${table}`
  const where = spec.partial ? ` WHERE ${partialSql(spec.partial, format)}` : ''
  switch (spec.kind) {
    case 'geo':
      return `${create(false)} USING GIST (${columns[0]})`
    case 'text':
      // The expression Parse's $text search uses, so its queries can use the index.
      return `${create(false)} USING GIN (${columns.map((column) => `to_tsvector('english', ${column})`).join(', ')})`
    case 'acl':
      // The overlap (&&) branch of the row-ACL filter by GIN; the IS NULL branch by a partial index.
      return spec.partial ? `${create(false)} (${columns[0]})${where}` : `${create(false)} USING GIN (${columns[0]})`
    default: {
      const keys = spec.fields.map((field, i) => `${columns[i]}${field.direction === -1 ? ' DESC' : ''}`).join(', ')
      return `${create(Boolean(spec.unique))} (${keys})${where}`
    }
  }
}

const SQL_OPERATORS: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=', $ne: '<>' }

/** A partial index filter in Parse query form ({ field: value }, $exists, $gt…, $in) as a SQL condition. */
export function partialSql (filter: Record<string, unknown>, format: (query: string, values?: unknown) => string): string {
  const parts: string[] = []
  for (const [field, condition] of Object.entries(filter)) {
    const column = format('$1:name', [field])
    if (condition === null || typeof condition !== 'object' || condition instanceof Date) {
      parts.push(condition === null ? `${column} IS NULL` : format(`${column} = $1`, [condition]))
      continue
    }
    for (const [operator, value] of Object.entries(condition as Record<string, unknown>)) {
      if (operator === '$exists') parts.push(`${column} IS ${value ? 'NOT ' : ''}NULL`)
      else if (operator === '$in') parts.push(format(`${column} IN ($1:csv)`, [value]))
      else if (SQL_OPERATORS[operator]) parts.push(format(`${column} ${SQL_OPERATORS[operator]} $1`, [value]))
      else throw new Error(`partial index on ${field}: ${operator} has no PostgreSQL translation (use =, $exists, $gt, $gte, $lt, $lte, $ne or $in)`)
    }
  }
  return parts.join(' AND ')
}

/** The plain index made over duplicates, under a name PostgreSQL keeps whole. */
export function plainFallbackName (spec: IndexSpec): string {
  return pgIdentifier(fallbackSpecName(spec))
}

export function declaredIndexName (spec: IndexSpec): string {
  return spec.kind === 'unique' ? uniqueName(spec) : spec.name
}

function uniqueName (spec: IndexSpec): string {
  return `${spec.className}_unique_${spec.fields[0].name}` // the name Parse's ensureUniqueness gives it
}

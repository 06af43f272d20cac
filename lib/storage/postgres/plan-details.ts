// `fpk schema plan` on PostgreSQL: what the stored rows say about a change
// (duplicates under a new unique index, rows without a value under a new
// required field, rows a new CHECK rejects), and the statements the boot runs.
// Read-only: every count is a SELECT.
import type { PgQueries } from '../../parse/internals.js'
import type { IndexSpec } from '../indexes/plan.js'
import type { ObjectChange } from '../indexes/reconcile.js'
import type { ParseSchemaField } from '../../model/schema-config.js'
import { createIndexSql, partialSql, postgresIndexCommand } from './index-sql.js'
import { buildingName } from './concurrent-index.js'

type Format = (query: string, values?: unknown) => string

/** Values held by more than one row (and those rows) under the index's columns; undefined when the table is not there yet. */
export async function postgresDuplicates (client: PgQueries, format: Format, spec: IndexSpec): Promise<{ values: number, rows: number } | undefined> {
  const columns = spec.fields.map((field) => format('$1:name', [field.name]))
  const conditions = [...columns.map((column) => `${column} IS NOT NULL`), ...(spec.partial ? [partialSql(spec.partial, format)] : [])]
  const query = `SELECT count(*)::int AS values, coalesce(sum(n), 0)::int AS rows FROM (SELECT count(*) AS n FROM ${format('$1:name', [spec.className])} WHERE ${conditions.join(' AND ')} GROUP BY ${columns.join(', ')} HAVING count(*) > 1) AS duplicated`
  const [row] = await client.any(query).catch(() => [undefined])
  return row ? { values: Number(row.values), rows: Number(row.rows) } : undefined
}

/** Rows without a value in `column` (every row when the column is not there yet). */
export async function postgresRowsWithout (client: PgQueries, format: Format, className: string, column: string): Promise<number | undefined> {
  const table = format('$1:name', [className])
  const [row] = await client.any(format(`SELECT count(*)::int AS n FROM ${table} WHERE $1:name IS NULL`, [column]))
    .catch(() => client.any(`SELECT count(*)::int AS n FROM ${table}`))
    .catch(() => [undefined])
  return row ? Number(row.n) : undefined
}

/** Rows a CHECK expression rejects. */
export async function postgresRowsBreaking (client: PgQueries, format: Format, className: string, check: string): Promise<number | undefined> {
  const [row] = await client.any(`SELECT count(*)::int AS n FROM ${format('$1:name', [className])} WHERE NOT (${check})`).catch(() => [undefined])
  return row ? Number(row.n) : undefined
}

/** Parse's column type for a field (its PostgreSQL adapter's mapping). */
function columnType (field: ParseSchemaField): string | undefined {
  switch (field.type) {
    case 'String': case 'File': case 'Pointer': return 'text'
    case 'Date': return 'timestamp with time zone'
    case 'Number': return 'double precision'
    case 'Boolean': return 'boolean'
    case 'GeoPoint': return 'point'
    case 'Polygon': return 'polygon'
    case 'Relation': return undefined // a join table of its own
    default: return 'jsonb' // Object, Array, Bytes
  }
}

/** What Parse runs for a field added to a stored class. */
export function postgresAddColumn (format: Format, className: string, name: string, field: ParseSchemaField): string {
  const type = columnType(field)
  if (type === undefined) return format('CREATE TABLE IF NOT EXISTS $1:name ("relatedId" varchar(120), "owningId" varchar(120), PRIMARY KEY ("relatedId", "owningId"))', [`_Join:${name}:${className}`])
  return format(`ALTER TABLE $1:name ADD COLUMN IF NOT EXISTS $2:name ${type}`, [className, name])
}

export function postgresDropColumn (format: Format, className: string, name: string): string {
  return format('ALTER TABLE $1:name DROP COLUMN IF EXISTS $2:name', [className, name])
}

/** The statements of an index change, in the order the boot runs them. */
export function postgresIndexStatements (format: Format, change: ObjectChange, spec: IndexSpec | undefined): string[] {
  const drop = format('DROP INDEX CONCURRENTLY IF EXISTS $1:name', [change.name])
  if (change.action === 'drop') return [drop]
  if (!spec) return []
  const { command } = postgresIndexCommand(spec, format)
  if (change.action === 'create') return [command]
  // A replacement is built beside the old index under a temporary name, then swapped in.
  const building = buildingName(change.name)
  return [createIndexSql(spec, format, { name: building, concurrently: true }), drop, format('ALTER INDEX $1:name RENAME TO $2:name', [building, change.name])]
}

/** The statements of a CHECK constraint change. */
export function postgresConstraintStatements (format: Format, change: ObjectChange, check: string | undefined): string[] {
  const drop = format('ALTER TABLE $1:name DROP CONSTRAINT IF EXISTS $2:name', [change.className, change.name])
  const add = check === undefined
    ? []
    : [format(`ALTER TABLE $1:name ADD CONSTRAINT $2:name CHECK (${check}) NOT VALID`, [change.className, change.name]), format('ALTER TABLE $1:name VALIDATE CONSTRAINT $2:name', [change.className, change.name])]
  if (change.action === 'drop') return [drop]
  return change.action === 'replace' ? [drop, ...add] : add
}

// Indexes and CHECK constraints on PostgreSQL. Parse stores a class as a
// table whose columns are named like the fields (pointers hold the target's
// objectId, GeoPoints are `point`, Numbers `double precision`).
import type { FieldDefinition } from '../../model/field-options.js'
import type { ModelDefinition } from '../../model/registry.js'
import type { IndexReport, IndexSpec } from '../indexes/plan.js'
import type { PgQueries, PostgresAdapter } from '../../parse/internals.js'
import { withoutQueryBound } from './bounded.js'

type PgAdapter = Pick<PostgresAdapter, '_client' | '_pgp' | 'ensureUniqueness'>
type PgClient = PgQueries

type Format = (query: string, values?: unknown) => string

/** Index builds may take long on a large table: they run without the request query bound. */
export async function applyPostgresIndexes (adapter: PgAdapter, specs: IndexSpec[]): Promise<IndexReport[]> {
  return withoutQueryBound(adapter, (unbounded) => buildIndexes(unbounded, specs))
}

async function buildIndexes (adapter: PgAdapter, specs: IndexSpec[]): Promise<IndexReport[]> {
  const format: Format = (query, values) => adapter._pgp.as.format(query, values)
  const reports: IndexReport[] = []
  for (const spec of specs) {
    const { name, command } = postgresIndexCommand(spec, format)
    const report = (status: IndexReport['status'], _command: string, detail?: string) =>
      reports.push({ className: spec.className, name, kind: spec.kind, status, command, detail })
    if (spec.kind === 'unique') {
      if (await indexExists(adapter._client, spec.className, name)) { report('exists', command); continue }
      const twin = await uniqueIndexOn(adapter._client, spec.className, spec.fields[0].name)
      if (twin) { report('exists', command, `as ${twin} (a unique index on the same column under another name)`); continue }
      await dropConflictingIndexes(adapter._client, spec.className, spec.fields[0].name)
      await attempt(() => adapter.ensureUniqueness(spec.className, { fields: {} }, [spec.fields[0].name]), command, report)
      continue
    }
    if (await indexExists(adapter._client, spec.className, spec.name)) { report('exists', command, ttlNote(spec)); continue }
    await attempt(() => adapter._client.none(command), command, report, ttlNote(spec))
  }
  return reports
}

/** The name and the exact SQL that makes a planned index (what is run, and what is printed when the database is away). */
export function postgresIndexCommand (spec: IndexSpec, format: Format): { name: string, command: string } {
  if (spec.kind === 'unique') {
    const name = uniqueName(spec)
    return { name, command: format('ALTER TABLE $1:name ADD CONSTRAINT $2:name UNIQUE ($3:name)', [spec.className, name, spec.fields[0].name]) }
  }
  return { name: spec.name, command: createIndexSql(spec, format) }
}

/** The CHECK constraint of each constrained field: its name and the exact SQL. */
export function postgresConstraintCommands (models: ModelDefinition[], format: Format): Array<{ className: string, name: string, command: string }> {
  const commands: Array<{ className: string, name: string, command: string }> = []
  for (const model of models) {
    for (const field of model.fields.values()) {
      const check = checkExpression(field, format)
      if (!check) continue
      const name = `${model.className}_${field.name}_check`
      commands.push({ className: model.className, name, command: format(`ALTER TABLE $1:name ADD CONSTRAINT $2:name CHECK (${check})`, [model.className, name]) })
    }
  }
  return commands
}

/** What would be run, for a database that cannot be reached: nothing is applied. */
export function printPostgresIndexes (adapter: PgAdapter, specs: IndexSpec[]): IndexReport[] {
  const format: Format = (query, values) => adapter._pgp.as.format(query, values)
  return specs.map((spec) => ({ className: spec.className, kind: spec.kind, status: 'printed', ...postgresIndexCommand(spec, format) }))
}

export function printPostgresConstraints (adapter: PgAdapter, models: ModelDefinition[]): IndexReport[] {
  const format: Format = (query, values) => adapter._pgp.as.format(query, values)
  return postgresConstraintCommands(models, format).map(({ className, name, command }) => ({ className, name, kind: 'validator', status: 'printed', command }))
}

/** CHECK constraints for enum, min/max, integer, maxLength/minLength and pattern: the database refuses bad rows itself. */
export async function applyPostgresConstraints (adapter: PgAdapter, models: ModelDefinition[]): Promise<IndexReport[]> {
  // Adding a CHECK reads the whole table: no request query bound either.
  return withoutQueryBound(adapter, (unbounded) => addConstraints(unbounded, models))
}

async function addConstraints (adapter: PgAdapter, models: ModelDefinition[]): Promise<IndexReport[]> {
  const format: Format = (query, values) => adapter._pgp.as.format(query, values)
  const reports: IndexReport[] = []
  for (const { className, name, command } of postgresConstraintCommands(models, format)) {
    const report = (status: IndexReport['status'], _command: string, detail?: string) =>
      reports.push({ className, name, kind: 'validator', status, command, detail })
    const exists = await adapter._client.any('SELECT 1 FROM pg_constraint WHERE conname = $1', [name])
    if (exists.length > 0) { report('exists', command); continue }
    await attempt(() => adapter._client.none(command), command, report)
  }
  return reports
}

export function checkExpression (field: FieldDefinition, format: (query: string, values?: unknown) => string): string | undefined {
  const column = format('$1:name', [field.name])
  const rules: string[] = []
  if (field.type === 'String') {
    if (field.enum) rules.push(format(`${column} IN ($1:csv)`, [field.enum]))
    if (field.maxLength !== undefined) rules.push(`char_length(${column}) <= ${field.maxLength}`)
    if (field.minLength !== undefined) rules.push(`char_length(${column}) >= ${field.minLength}`)
    if (field.pattern !== undefined) {
      const source = typeof field.pattern === 'string' ? field.pattern : field.pattern.source
      rules.push(format(`${column} ~ $1`, [`^(?:${source})$`]))
    }
  }
  if (field.type === 'Number') {
    if (field.min !== undefined) rules.push(`${column} >= ${Number(field.min)}`)
    if (field.max !== undefined) rules.push(`${column} <= ${Number(field.max)}`)
    if (field.integer) rules.push(`${column} = trunc(${column})`)
  }
  return rules.length > 0 ? `${column} IS NULL OR (${rules.join(' AND ')})` : undefined
}

export function createIndexSql (spec: IndexSpec, format: (query: string, values?: unknown) => string): string {
  const columns = spec.fields.map((field) => format('$1:name', [field.name]))
  const table = format('$1:name', [spec.className])
  const name = format('$1:name', [spec.name])
  switch (spec.kind) {
    case 'geo':
      return `CREATE INDEX IF NOT EXISTS ${name} ON ${table} USING GIST (${columns[0]})`
    case 'text':
      // The expression Parse's $text search uses, so its queries can use the index.
      return `CREATE INDEX IF NOT EXISTS ${name} ON ${table} USING GIN (${columns.map((column) => `to_tsvector('english', ${column})`).join(', ')})`
    default: {
      const keys = spec.fields.map((field, i) => `${columns[i]}${field.direction === -1 ? ' DESC' : ''}`).join(', ')
      const where = spec.partial ? ` WHERE ${partialSql(spec.partial, format)}` : ''
      return `CREATE ${spec.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${table} (${keys})${where}`
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

function uniqueName (spec: IndexSpec): string {
  return `${spec.className}_unique_${spec.fields[0].name}` // the name Parse's ensureUniqueness gives it
}

function ttlNote (spec: IndexSpec): string | undefined {
  return spec.kind === 'ttl' ? 'PostgreSQL has no expiring index: an ordinary index was made, and the kit\'s kitExpireRows job deletes expired rows (every minute unless jobs.ttlSweep says otherwise)' : undefined
}

async function indexExists (client: PgClient, table: string, name: string): Promise<boolean> {
  const rows = await client.any('SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname = $2', [table, name])
  return rows.length > 0
}

/** The name of a whole-table unique index on exactly this column, if there is one. */
async function uniqueIndexOn (client: PgClient, table: string, column: string): Promise<string | undefined> {
  const rows = await client.any(`
    SELECT i.relname AS name FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
    WHERE t.relname = $1 AND a.attname = $2 AND x.indnatts = 1 AND x.indisunique AND NOT x.indisprimary AND x.indpred IS NULL AND x.indexprs IS NULL`, [table, column])
  return rows[0]?.name as string | undefined
}

/** A plain index on the column that will become unique is dropped first (it would duplicate the unique one). */
async function dropConflictingIndexes (client: PgClient, table: string, column: string): Promise<void> {
  const rows = await client.any(`
    SELECT i.relname AS name FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
    WHERE t.relname = $1 AND a.attname = $2 AND x.indnatts = 1 AND NOT x.indisunique AND NOT x.indisprimary`, [table, column])
  for (const row of rows) await client.none('DROP INDEX IF EXISTS $1:name', [row.name])
}

async function attempt (run: () => Promise<unknown>, command: string, report: (status: IndexReport['status'], command: string, detail?: string) => void, note?: string): Promise<void> {
  try {
    await run()
    report('created', command, note)
  } catch (error) {
    report('failed', command, (error as Error).message)
  }
}

// `fpk schema plan`: what the next boot would change in the database — the
// stored schema (fields, class-level permissions) and the kit's indexes and
// constraints — read from the database, compared with the loaded declarations
// under the same options as the boot. With each change, what the stored rows
// say about it (duplicates, rows without a value, rows a rule rejects) and
// the statements PostgreSQL will run. Nothing is written.
import { allModels, type ModelDefinition } from '../model/registry.js'
import { schemaConfigFrom } from '../model/schema-boot.js'
import type { SchemaConfigOptions, ParseClassSchema } from '../model/schema-config.js'
import { diffSchema, type MigrationOptions, type PlanChange, type StoredClass } from '../model/schema-diff.js'
import { describeStanding } from '../model/schema-generations.js'
import { getKitConfig } from '../config.js'
import { planIndexes, type IndexSpec } from './indexes/plan.js'
import { sessionIndexes } from './indexes/sessions.js'
import { describeChange, type ObjectChange } from './indexes/reconcile.js'
import { planPostgresIndexes } from './postgres/indexes.js'
import { postgresIndexCommand } from './postgres/index-sql.js'
import { planPostgresConstraints } from './postgres/check-constraints.js'
import { checkExpression } from './postgres/check-sql.js'
import { checkConstraintName } from './postgres/identifiers.js'
import { mongoField, mongoIndexCommand, mongoValidatorCommand, planMongoIndexes, planMongoValidators } from './mongo/indexes.js'
import { postgresAddColumn, postgresConstraintStatements, postgresDropColumn, postgresDuplicates, postgresIndexStatements, postgresRowsBreaking, postgresRowsWithout } from './postgres/plan-details.js'
import { mongoDuplicates, mongoRowsBreaking, mongoRowsWithout } from './mongo/plan-details.js'
import { declaredFingerprint, schemaStanding } from './schema-generation.js'
import { mongoCollectionPrefix, pgDatabase, pgFormatter } from '../parse/adapter-internals.js'
import type { MongoAdapter, PgQueries } from '../parse/internals.js'
import type { MongoDatabase, PostgresDatabase } from './database.js'

export type { PlanChange } from '../model/schema-diff.js'

type PlanDatabase = Pick<PostgresDatabase, 'kind' | 'adapter'> | Pick<MongoDatabase, 'kind' | 'adapter'>
type Format = (query: string, values?: unknown) => string

/** The application's schema options, as the boot gets them. */
export interface PlanOptions extends MigrationOptions {
  /** kitPlugin's adminRole (default: configureKit's). */
  adminRole?: string
  /** schema.version. */
  version?: number
}

export interface SchemaPlan {
  changes: PlanChange[]
  /** The declarations are older than the database's schema generation: the next boot changes nothing (its line). */
  behind?: string
}

export async function planSchemaChanges (database: PlanDatabase, options: PlanOptions = {}): Promise<PlanChange[]> {
  return (await planSchema(database, options)).changes
}

export async function planSchema (database: PlanDatabase, options: PlanOptions = {}): Promise<SchemaPlan> {
  const models = allModels()
  const adminRole = options.adminRole ?? getKitConfig().adminRole
  const schemaOptions: SchemaConfigOptions = { adminRole }
  for (const key of ['strict', 'deleteExtraFields', 'recreateModifiedFields', 'version'] as const) {
    if (options[key] !== undefined) (schemaOptions as Record<string, unknown>)[key] = options[key]
  }
  const declared = schemaConfigFrom(schemaOptions, adminRole)
  // The boot of an older declaration changes nothing (model/schema-generations.ts).
  const generation = await schemaStanding(database, declaredFingerprint(declared), declared.version)
  if (generation.standing.kind === 'behind') return { changes: [], behind: describeStanding(generation.standing, declaredFingerprint(declared)) }

  const adapter = database.adapter as unknown as { getAllClasses (): Promise<StoredClass[]> }
  // A database that never held a Parse schema has no schema table yet: nothing is stored.
  const stored = await adapter.getAllClasses().catch(() => [])
  const changes = diffSchema(declared.definitions, stored, options)
  // The session indexes too: the boot makes them on every database.
  const specs = [...planIndexes(models), ...sessionIndexes()]
  const objects: Array<{ object: ObjectChange, change: PlanChange }> = []
  const add = (list: ObjectChange[], subject: 'index' | 'constraint') => {
    for (const object of list.filter((change) => change.action !== 'keep')) {
      const change: PlanChange = { className: object.className, subject, detail: `${subject} ${describeChange(object)}`, destructive: object.destructive }
      objects.push({ object, change })
      changes.push(change)
    }
  }
  if (database.kind === 'postgres') {
    const indexes = await planPostgresIndexes(database.adapter, specs, models.map((model) => model.className))
    add(indexes.changes, 'index')
    changes.push(...failures(indexes.failures))
    add(await planPostgresConstraints(database.adapter, models), 'constraint')
    await postgresDetails(pgDatabase(database.adapter)!, pgFormatter(database.adapter), { changes, objects, specs, models, definitions: declared.definitions, recreate: options.recreateModifiedFields === true })
  } else {
    const indexes = await planMongoIndexes(database.adapter, specs, models)
    add(indexes.changes, 'index')
    changes.push(...failures(indexes.failures))
    add(await planMongoValidators(database.adapter, models) ?? [], 'constraint')
    await mongoDetails(database.adapter, { changes, objects, specs, models, definitions: declared.definitions })
  }
  return { changes }
}

function failures (reports: Array<{ className: string, name: string, detail?: string }>): PlanChange[] {
  return reports.map((report) => ({ className: report.className, subject: 'index', detail: `index ${report.name} cannot be made: ${report.detail}`, destructive: false }))
}

interface DetailContext {
  changes: PlanChange[]
  objects: Array<{ object: ObjectChange, change: PlanChange }>
  specs: IndexSpec[]
  models: ModelDefinition[]
  definitions: ParseClassSchema[]
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** A field that is (or becomes) required: the stored rows without a value. */
function requiredField (change: PlanChange, definitions: ParseClassSchema[]): boolean {
  if (change.subject !== 'field' || change.field === undefined) return false
  const declared = definitions.find((definition) => definition.className === change.className)?.fields?.[change.field]
  return declared?.required === true && (change.detail.startsWith('field added:') || change.detail.startsWith('field required:'))
}

function withoutValue (count: number | undefined): string | undefined {
  return count ? `${plural(count, 'stored row')} ${count === 1 ? 'holds' : 'hold'} no value: kept; Parse checks required when a row is created, or when a save removes the value` : undefined
}

function duplicates (found: { values: number, rows: number } | undefined, spec: IndexSpec): string | undefined {
  if (!found || found.values === 0) return undefined
  const held = `${plural(found.values, 'value')} ${found.values === 1 ? 'is' : 'are'} held by more than one row (${plural(found.rows, 'row')})`
  return spec.plainIfDuplicates ? `${held}: a plain index is made instead` : `will fail: ${held}; remove the duplicates first`
}

function breaking (count: number | undefined): string | undefined {
  return count ? `will fail on ${plural(count, 'stored row')}: the rule guards new writes only, and ${count === 1 ? 'that row is' : 'those rows are'} refused when next saved` : undefined
}

function specOf (specs: IndexSpec[], object: ObjectChange, name?: (spec: IndexSpec) => string): IndexSpec | undefined {
  return specs.find((spec) => spec.className === object.className && (spec.name === object.name || (name !== undefined && safe(() => name(spec)) === object.name)))
}

function safe<T> (run: () => T): T | undefined {
  try { return run() } catch { return undefined }
}

async function postgresDetails (client: PgQueries, format: Format, context: DetailContext & { recreate: boolean }): Promise<void> {
  const { changes, objects, specs, models, definitions } = context
  const schemaRow = (className: string) => format('UPDATE "_SCHEMA" SET "schema" = … WHERE "className" = $1', [className])
  for (const change of changes) {
    if (change.subject === 'field' && change.field !== undefined) {
      const field = definitions.find((definition) => definition.className === change.className)?.fields?.[change.field]
      if (requiredField(change, definitions)) change.dataCheck = withoutValue(await postgresRowsWithout(client, format, change.className, change.field))
      if (change.detail.startsWith('field added:') && field) change.sql = [postgresAddColumn(format, change.className, change.field, field), schemaRow(change.className)]
      else if (change.detail.startsWith('field dropped:')) change.sql = [postgresDropColumn(format, change.className, change.field), schemaRow(change.className)]
      else if (change.detail.startsWith('field type changed:') && context.recreate && field) change.sql = [postgresDropColumn(format, change.className, change.field), postgresAddColumn(format, change.className, change.field, field), schemaRow(change.className)]
      else if (!change.refused) change.sql = [schemaRow(change.className)]
    } else if (change.subject === 'class') {
      const fields = Object.entries(definitions.find((definition) => definition.className === change.className)?.fields ?? {})
      change.sql = [format('CREATE TABLE IF NOT EXISTS $1:name ("objectId" varchar(50) PRIMARY KEY, "createdAt" timestamp with time zone, "updatedAt" timestamp with time zone, "_rperm" text[], "_wperm" text[])', [change.className]),
        ...fields.map(([name, field]) => postgresAddColumn(format, change.className, name, field)), format('INSERT INTO "_SCHEMA" ("className", "schema", "isParseClass") VALUES ($1, …, true)', [change.className])]
    } else if (change.subject === 'permission') {
      change.sql = [schemaRow(change.className)]
    }
  }
  for (const { object, change } of objects) {
    if (change.subject === 'index') {
      const spec = specOf(specs, object, (candidate) => postgresIndexCommand(candidate, format).name)
      change.sql = postgresIndexStatements(format, object, spec)
      if (spec && object.action !== 'drop' && (spec.unique || spec.kind === 'unique')) change.dataCheck = duplicates(await postgresDuplicates(client, format, spec), spec)
    } else {
      const model = models.find((candidate) => candidate.className === object.className)
      const field = [...(model?.fields.values() ?? [])].find((candidate) => checkConstraintName(object.className, candidate.name) === object.name)
      const check = field ? checkExpression(field, format) : undefined
      change.sql = postgresConstraintStatements(format, object, check)
      if (check !== undefined && object.action !== 'drop') change.dataCheck = breaking(await postgresRowsBreaking(client, format, object.className, check))
    }
  }
}

async function mongoDetails (adapter: MongoAdapter, context: DetailContext): Promise<void> {
  const { changes, objects, specs, models, definitions } = context
  await adapter.connect()
  const db = adapter.database
  const prefix = mongoCollectionPrefix(adapter)
  for (const change of changes) {
    if (!requiredField(change, definitions)) continue
    const field = definitions.find((definition) => definition.className === change.className)!.fields![change.field!]
    change.dataCheck = withoutValue(await mongoRowsWithout(db, prefix + change.className, mongoField(change.field!, field.type)))
  }
  for (const { object, change } of objects) {
    if (object.action === 'drop') continue
    if (change.subject === 'index') {
      const spec = specOf(specs, object)
      if (!spec || !(spec.unique || spec.kind === 'unique')) continue
      const planned = safe(() => mongoIndexCommand(spec, models, prefix))
      if (!planned) continue
      const partial = planned.options.partialFilterExpression as Record<string, unknown> | undefined
      change.dataCheck = duplicates(await mongoDuplicates(db, planned.collection, Object.keys(planned.key), partial), spec)
    } else {
      const model = models.find((candidate) => candidate.className === object.className)
      if (!model) continue
      const { collection, validator } = mongoValidatorCommand(model, prefix)
      change.dataCheck = breaking(await mongoRowsBreaking(db, collection, validator))
    }
  }
}

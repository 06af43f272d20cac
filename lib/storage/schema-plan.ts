// `fpk schema plan`: what the next boot would change in the database — the
// stored schema (fields, class-level permissions) and the kit's indexes and
// constraints — read from the database, compared with the loaded declarations.
// Nothing is written.
import { allModels } from '../model/registry.js'
import { schemaConfigFrom } from '../model/schema-boot.js'
import { diffSchema, type MigrationOptions, type PlanChange, type StoredClass } from '../model/schema-diff.js'
import { getKitConfig } from '../config.js'
import { planIndexes } from './indexes/plan.js'
import { sessionIndexes } from './indexes/sessions.js'
import { describeChange, type ObjectChange } from './indexes/reconcile.js'
import { planPostgresConstraints, planPostgresIndexes } from './postgres/indexes.js'
import { planMongoIndexes, planMongoValidators } from './mongo/indexes.js'
import type { MongoDatabase, PostgresDatabase } from './database.js'

export type { PlanChange } from '../model/schema-diff.js'

export async function planSchemaChanges (database: Pick<PostgresDatabase, 'kind' | 'adapter'> | Pick<MongoDatabase, 'kind' | 'adapter'>, options: MigrationOptions = {}): Promise<PlanChange[]> {
  const models = allModels()
  const adapter = database.adapter as unknown as { getAllClasses (): Promise<StoredClass[]> }
  // A database that never held a Parse schema has no schema table yet: nothing is stored.
  const stored = await adapter.getAllClasses().catch(() => [])
  const definitions = schemaConfigFrom(undefined, getKitConfig().adminRole).definitions
  const changes = diffSchema(definitions, stored, options)
  // The session indexes too: the boot makes them on every database.
  const specs = [...planIndexes(models), ...sessionIndexes()]
  if (database.kind === 'postgres') {
    const indexes = await planPostgresIndexes(database.adapter, specs, models.map((model) => model.className))
    changes.push(...objectChanges(indexes.changes, 'index'), ...failures(indexes.failures))
    changes.push(...objectChanges(await planPostgresConstraints(database.adapter, models), 'constraint'))
  } else {
    const indexes = await planMongoIndexes(database.adapter, specs, models)
    changes.push(...objectChanges(indexes.changes, 'index'), ...failures(indexes.failures))
    changes.push(...objectChanges(await planMongoValidators(database.adapter, models) ?? [], 'constraint'))
  }
  return changes
}

function objectChanges (changes: ObjectChange[], subject: 'index' | 'constraint'): PlanChange[] {
  return changes.filter((change) => change.action !== 'keep')
    .map((change) => ({ className: change.className, subject, detail: `${subject} ${describeChange(change)}`, destructive: change.destructive }))
}

function failures (reports: Array<{ className: string, name: string, detail?: string }>): PlanChange[] {
  return reports.map((report) => ({ className: report.className, subject: 'index', detail: `index ${report.name} cannot be made: ${report.detail}`, destructive: false }))
}

// Parse's Defined Schemas migration writes every class at every boot: for each
// declared class (and each stored class not declared) it sends the class-level
// permissions and the stored indexes again, through a write that reloads the
// whole schema three times. With nothing changed that is two UPDATEs and three
// full `_SCHEMA` reads per class, and the reads grow with the number of
// classes: boot cost grows with its square.
//
// The migration builds each class's write from the schemas it read at the start
// of its run (`allCloudSchemas`). A write that adds or drops no field and no
// index, and carries the permissions already stored, would change nothing Parse
// reads back, so it is skipped. What Parse would have stored for the indexes in
// such a write is the stored list again (or its `_id_` placeholder when the list
// is empty, which Parse reads as the same thing), so an empty index list does
// not count as a change either. Several instances booting at once still
// converge: each compares with what it read, and one that read before another's
// write sends the same write itself.
//
// On MongoDB, Parse's startup also stores every class's index list again
// (updateSchemaWithIndexes: the collection's indexes into `_metadata.indexes`);
// a list equal to the stored one is not written either.
import { parseInternals, type ParseInternals, whenMongoStorageAdapterLoads, type MigrationCloudSchema, type MigrationSchemaOps, type MongoIndexListRefresh, type MongoSchemaCollection } from './internals.js'
import { fastPathsOn } from './fast-path-switch.js'

const WRAPPED = Symbol.for('fastify-parse-kit.unchanged-schema')

/** The operations both of Parse's adapters read back as `{}` when the stored permissions lack them (their emptyCLPS). */
export const READ_AS_EMPTY: ReadonlySet<string> = new Set(['find', 'count', 'get', 'create', 'update', 'delete', 'addField', 'protectedFields'])

/** Installs the skip on Parse's migration (once per process: DefinedSchemas is Parse's class). */
export function skipUnchangedSchemaWrites (): void {
  const migration = parseInternals().DefinedSchemas.prototype as ParseInternals['DefinedSchemas']['prototype'] & { [WRAPPED]?: true }
  if (migration[WRAPPED]) return
  migration[WRAPPED] = true
  const updateSchemaToDB = migration.updateSchemaToDB
  migration.updateSchemaToDB = async function (schema) {
    const stored = this.allCloudSchemas?.find((cloud) => cloud.className === schema.className)
    // fastPaths: false: every write Parse's migration makes, as Parse makes it.
    if (stored && fastPathsOn() && changesNothing(schema, stored)) {
      this.resetSchemaOps(schema)
      return
    }
    return updateSchemaToDB.call(this, schema)
  }
  skipUnchangedIndexLists()
}

/**
 * Parse's refresh runs on a view of the adapter (the adapter itself is
 * unchanged) whose schema collection skips an index list equal to the one the
 * refresh read at its start.
 */
function skipUnchangedIndexLists (): void {
  // On MongoDB only: the adapter's module is loaded when a kit uses MongoDB (lazy-subsystems.ts).
  whenMongoStorageAdapterLoads((MongoStorageAdapter) => skipUnchangedIndexListsOf(MongoStorageAdapter.prototype as unknown as MongoIndexListRefresh))
}

function skipUnchangedIndexListsOf (adapter: MongoIndexListRefresh): void {
  const updateSchemaWithIndexes = adapter.updateSchemaWithIndexes
  adapter.updateSchemaWithIndexes = function (this: MongoIndexListRefresh) {
    if (!fastPathsOn()) return updateSchemaWithIndexes.call(this)
    const base = this
    const stored = new Map<string, unknown>()
    const view = Object.create(base) as MongoIndexListRefresh
    view.getAllClasses = async () => {
      const classes = await base.getAllClasses()
      for (const schema of classes) stored.set(schema.className, schema.indexes ?? {})
      return classes
    }
    view._schemaCollection = async () => {
      const collection = await base._schemaCollection()
      const skipping = Object.create(collection) as MongoSchemaCollection
      skipping.updateSchema = (name, update) => {
        const indexes = onlyIndexList(update)
        if (indexes !== undefined && stored.has(name) && sameIndexes(indexes, stored.get(name) as Record<string, unknown>)) return Promise.resolve()
        return collection.updateSchema(name, update)
      }
      return skipping
    }
    return updateSchemaWithIndexes.call(view)
  }
}

/** The index list of an update that sets `_metadata.indexes` and nothing else. */
function onlyIndexList (update: Record<string, unknown>): Record<string, unknown> | undefined {
  const set = update.$set as Record<string, unknown> | undefined
  if (Object.keys(update).length !== 1 || !set || Object.keys(set).length !== 1) return undefined
  return set['_metadata.indexes'] as Record<string, unknown> | undefined
}

/** Same index names with the same keys, in the same key order (an index on (a, b) is not one on (b, a)). */
function sameIndexes (a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const names = Object.keys(a)
  return names.length === Object.keys(b).length && names.every((name) => name in b && JSON.stringify(a[name]) === JSON.stringify(b[name]))
}

/** Whether the migration's write of `schema` would leave `stored` as Parse reads it. */
export function changesNothing (schema: MigrationSchemaOps, stored: MigrationCloudSchema): boolean {
  if (Object.keys(schema._fields ?? {}).length > 0 || Object.keys(schema._indexes ?? {}).length > 0) return false
  return schema._clp === undefined || samePermissions(schema._clp, stored.classLevelPermissions ?? {})
}

function samePermissions (wanted: Record<string, unknown>, stored: Record<string, unknown>): boolean {
  const operations = new Set([...Object.keys(wanted), ...Object.keys(stored)])
  for (const operation of operations) {
    const readBack = (clp: Record<string, unknown>) => clp[operation] ?? (READ_AS_EMPTY.has(operation) ? {} : undefined)
    if (canonical(readBack(wanted)) !== canonical(readBack(stored))) return false
  }
  return true
}

/** JSON with object keys sorted (the order Parse stored them in does not count; list order does). */
function canonical (value: unknown): string | undefined {
  const sorted = (v: unknown): unknown => v === null || typeof v !== 'object'
    ? v
    : Array.isArray(v)
      ? v.map(sorted)
      : Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, inner]) => [k, sorted(inner)]))
  return JSON.stringify(sorted(value))
}

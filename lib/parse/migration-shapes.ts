// What the kit uses of Parse Server's Defined Schemas migration
// (SchemaMigrations/DefinedSchemas.js): the per-class write and the stored
// schemas it read at the start of the run. test/parse-contract.test.ts checks
// the names against Parse.

/** A stored class as the migration read it (SchemaController#getAllClasses: permissions filled in by the adapter). */
export interface MigrationCloudSchema {
  className: string
  fields: Record<string, unknown>
  classLevelPermissions?: Record<string, unknown>
  indexes?: Record<string, unknown>
}

/** The SDK's Parse.Schema the migration fills with one class's pending operations. */
export interface MigrationSchemaOps {
  className: string
  /** Fields to add, or `{ __op: 'Delete' }` to drop. */
  _fields: Record<string, unknown>
  /** Indexes to add, or `{ __op: 'Delete' }` to drop. */
  _indexes: Record<string, unknown>
  /** The class-level permissions to store whole; unset when the write carries none. */
  _clp?: Record<string, unknown>
}

export interface DefinedSchemasInstance {
  /** Every stored class, read once at the start of a migration run (again on a retry). */
  allCloudSchemas?: MigrationCloudSchema[]
  /** One `internalUpdateSchema` (a full schema reload, the writes, two more reloads), then resetSchemaOps. */
  updateSchemaToDB (schema: MigrationSchemaOps): Promise<void>
  /** Empties the pending fields and indexes, as after a write. */
  resetSchemaOps (schema: MigrationSchemaOps): void
  /** Sets the class-level permissions of `schema` from `local`'s, with `addField` always `{}`. */
  handleCLP (local: { classLevelPermissions?: Record<string, unknown> }, schema: MigrationSchemaOps, cloud?: unknown): void
}

export interface DefinedSchemasModuleExports {
  DefinedSchemas: { prototype: DefinedSchemasInstance }
}

/** Parse's wrapper of the `_SCHEMA` collection on MongoDB (MongoSchemaCollection). */
export interface MongoSchemaCollection {
  updateSchema (name: string, update: Record<string, unknown>): Promise<unknown>
}

/** What Parse's MongoDB adapter does at startup that the kit makes skip its no-op writes. */
export interface MongoIndexListRefresh {
  /** Startup (DatabaseController#performInitialization): for every stored class, setIndexesFromMongo. */
  updateSchemaWithIndexes (): Promise<unknown>
  /** Reads the collection's indexes and stores them as the class's `_metadata.indexes`, through _schemaCollection().updateSchema. */
  setIndexesFromMongo (className: string): Promise<unknown>
  getAllClasses (): Promise<MigrationCloudSchema[]>
  _schemaCollection (): Promise<MongoSchemaCollection>
}

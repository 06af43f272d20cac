// The declared schema on its way through Parse Server's Defined Schemas at
// boot: checked before Parse sees it, trimmed for `strict: false`, and
// verified afterwards. Parse logs a failed migration and carries on (it even
// calls afterMigration); boot must fail instead, whichever path the schema
// configuration came from.
import { parseLogger } from '../parse/internals.js'
import { parseAcceptsClassName, parseAcceptsFieldName } from '../parse/name-rules.js'
import { isParseDefaultColumn } from '../parse/schema-enforcement.js'
import { skipUnchangedSchemaWrites } from '../parse/unchanged-schema.js'
import { keepGivenAddField } from '../parse/add-field-permission.js'
import { createSchemaConfig, type ParseClassSchema, type SchemaConfigOptions } from './schema-config.js'
import { FIELD_TYPES } from './field-options.js'
import { allModels } from './registry.js'
import { OptionInvalidError, SchemaMigrationError } from '../errors.js'

export interface SchemaConfig extends SchemaConfigOptions {
  definitions: ParseClassSchema[]
}

/** What the storage adapter answers for the stored schema (Parse's `_SCHEMA`). */
interface SchemaSource {
  getAllClasses (): Promise<Array<{ className: string, fields: Record<string, { type: string, targetClass?: string }>, classLevelPermissions?: Record<string, unknown> }>>
}

export interface PreparedSchema {
  /** The value for Parse Server's `schema` option. */
  config: SchemaConfig
  /** After Parse Server has started: throws, saying what went wrong, unless every definition is in the database. */
  verify (): Promise<void>
}

/**
 * From the kit's `schema` option (options for createSchemaConfig, or a whole
 * configuration) or `parseServerOptions.schema` (a whole configuration).
 */
export function schemaConfigFrom (input: SchemaConfigOptions | SchemaConfig | undefined, adminRole: string): SchemaConfig {
  if (input !== undefined && 'definitions' in input && input.definitions !== undefined) return input as SchemaConfig
  return createSchemaConfig({ adminRole, ...input }) as SchemaConfig
}

export interface PrepareOptions {
  /**
   * The declarations are older than the generation the database records
   * (model/schema-generations.ts): Parse migrates the stored schema onto
   * itself, so that this boot adds, drops, retypes and re-permissions nothing.
   */
  behind?: boolean
}

export async function prepareSchema (input: SchemaConfig, database: SchemaSource, options: PrepareOptions = {}): Promise<PreparedSchema> {
  checkDefinitions(input.definitions)
  // A configuration made before the model files were imported lacks their classes (and Parse would never create them).
  const missing = allModels().map((model) => model.className).filter((name) => !input.definitions.some((definition) => definition.className === name))
  if (missing.length > 0) {
    throw new OptionInvalidError(`schema: the definitions lack the declared ${missing.length === 1 ? 'class' : 'classes'} ${missing.join(', ')}. ` +
      'createSchemaConfig() was probably called before the model files were imported: pass its options instead (schema: { lockSchemas: true, … }), or call it after the models are loaded.')
  }
  // A database that never held a Parse schema has no schema table yet: nothing is stored.
  const stored = await database.getAllClasses().catch(() => [])
  let config = input
  if (options.behind) {
    config = { ...input, deleteExtraFields: false, recreateModifiedFields: false, keepUnknownIndexes: true, definitions: asStored(input.definitions, stored) }
  } else {
    // Plan first: a change Parse would refuse halfway (after adding the other fields) stops the boot before anything is applied.
    const refused = refusedChanges(input.definitions, stored, input)
    if (refused.length > 0) {
      throw new SchemaMigrationError(`the declared schema was not applied, nothing was changed: ${refused.length === 1 ? 'one change is' : `${refused.length} changes are`} refused: ${refused.join('; ')}. ` +
        'Rename the field (add the new one beside the old), or set schema.recreateModifiedFields: true to drop and recreate it with its values lost; then restart.')
    }
    // strict: false creates nothing at boot: definitions shrink to the classes and fields the database has.
    if (input.strict === false) config = { ...input, definitions: onlyStored(input.definitions, stored) }
  }
  // A warm boot with unchanged declarations then writes nothing to the stored schema (parse/unchanged-schema.ts).
  skipUnchangedSchemaWrites()
  // Classes the definitions do not list keep their stored addField (Parse would close it on every one).
  keepGivenAddField()
  const watch = watchMigration(config)
  return {
    config: watch.schema,
    async verify () {
      const failures = watch.finish()
      if (failures.length > 0) throw schemaError(failures)
      const problems = compare(config.definitions, await database.getAllClasses())
      if (problems.length > 0) throw schemaError(problems)
    }
  }
}

/** Type changes Parse cannot make without recreateModifiedFields: each named. */
function refusedChanges (definitions: ParseClassSchema[], stored: Awaited<ReturnType<SchemaSource['getAllClasses']>>, options: { recreateModifiedFields?: boolean }): string[] {
  if (options.recreateModifiedFields === true) return []
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  const refused: string[] = []
  for (const definition of definitions) {
    const actual = byName.get(definition.className)
    if (!actual) continue
    for (const [name, field] of Object.entries(definition.fields ?? {})) {
      const found = actual.fields[name]
      if (isParseColumn(definition.className, name) || !found) continue
      if (found.type !== field.type || (found.targetClass ?? undefined) !== (field.targetClass ?? undefined)) {
        refused.push(`field ${definition.className}.${name} is ${describe(found)} in the database but declared ${describe(field)}`)
      }
    }
  }
  return refused
}

/** The declared classes as the database holds them: Parse's migration then has nothing to change. */
function asStored (definitions: ParseClassSchema[], stored: Awaited<ReturnType<SchemaSource['getAllClasses']>>): ParseClassSchema[] {
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  return definitions.filter((definition) => byName.has(definition.className)).map((definition) => {
    const found = byName.get(definition.className)!
    const fields = Object.fromEntries(Object.entries(found.fields).filter(([name]) => !isParseColumn(definition.className, name)))
    return { className: definition.className, fields, classLevelPermissions: found.classLevelPermissions ?? definition.classLevelPermissions }
  })
}

function schemaError (problems: string[]): Error {
  return new SchemaMigrationError(`Parse Server could not apply the declared schema: ${problems.join('; ')}. Fix the model declarations (or the schema option) or the database, then restart.`)
}

/** Parse's own name rules, before Parse retries a doomed migration for several seconds. */
export function checkDefinitions (definitions: ParseClassSchema[]): void {
  if (!Array.isArray(definitions)) throw new OptionInvalidError('schema.definitions must be a list of class schemas')
  const seen = new Set<string>()
  for (const definition of definitions) {
    const { className } = definition
    if (typeof className !== 'string' || !parseAcceptsClassName(className)) {
      throw new OptionInvalidError(`schema: Parse refuses the class name ${JSON.stringify(className)} (a class name starts with a letter and holds only letters, digits and _)`)
    }
    if (seen.has(className)) throw new OptionInvalidError(`schema: class ${className} is defined twice`)
    seen.add(className)
    for (const [field, { type, targetClass }] of Object.entries(definition.fields ?? {})) {
      if (isParseColumn(className, field)) continue
      if (!parseAcceptsFieldName(field, className)) {
        throw new OptionInvalidError(`schema: Parse refuses the field name ${className}.${field} (a field name starts with a letter and holds only letters, digits and _)`)
      }
      if (!FIELD_TYPES.includes(type as never)) throw new OptionInvalidError(`schema: ${className}.${field} has the type ${JSON.stringify(type)}; Parse knows ${FIELD_TYPES.join(', ')}`)
      if ((type === 'Pointer' || type === 'Relation') && typeof targetClass !== 'string') throw new OptionInvalidError(`schema: ${className}.${field} is a ${type} without targetClass`)
    }
  }
}

function isParseColumn (className: string, field: string): boolean {
  return isParseDefaultColumn(className, field)
}

function onlyStored (definitions: ParseClassSchema[], stored: Awaited<ReturnType<SchemaSource['getAllClasses']>>): ParseClassSchema[] {
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  return definitions.filter((definition) => byName.has(definition.className)).map((definition) => {
    const fields = byName.get(definition.className)!.fields
    return { ...definition, fields: Object.fromEntries(Object.entries(definition.fields ?? {}).filter(([name]) => name in fields)) }
  })
}

/** What differs between the definitions and the stored schema, one line per difference. */
function compare (definitions: ParseClassSchema[], stored: Awaited<ReturnType<SchemaSource['getAllClasses']>>): string[] {
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  const problems: string[] = []
  for (const definition of definitions) {
    const actual = byName.get(definition.className)
    if (!actual) {
      if (Object.keys(definition.fields ?? {}).length > 0 || !definition.className.startsWith('_')) problems.push(`class ${definition.className} was not created`)
      continue
    }
    for (const [name, field] of Object.entries(definition.fields ?? {})) {
      if (isParseColumn(definition.className, name)) continue
      const found = actual.fields[name]
      if (!found) problems.push(`field ${definition.className}.${name} was not created`)
      else if (found.type !== field.type || (found.targetClass ?? undefined) !== (field.targetClass ?? undefined)) {
        problems.push(`field ${definition.className}.${name} is ${describe(found)} in the database but declared ${describe(field)} (recreateModifiedFields: true would recreate it, dropping its data)`)
      }
    }
    for (const [operation, expected] of Object.entries(definition.classLevelPermissions ?? {})) {
      if (operation === 'addField' || operation === 'protectedFields') continue
      const got = actual.classLevelPermissions?.[operation]
      if (JSON.stringify(sorted(got)) !== JSON.stringify(sorted(expected))) {
        problems.push(`class-level permission ${definition.className}.${operation} is ${JSON.stringify(got)}, declared ${JSON.stringify(expected)}`)
      }
    }
  }
  return problems
}

function describe (field: { type: string, targetClass?: string }): string {
  return field.targetClass ? `${field.type}<${field.targetClass}>` : field.type
}

function sorted (value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sorted(v)]))
}

/**
 * Wraps the migration hooks: an error thrown by either is kept (Parse would
 * only log it), and while the migration runs, Parse's "Failed to run
 * migrations" log lines are kept too.
 */
export function watchMigration<T extends SchemaConfigOptions> (schema: T): { schema: T, finish: () => string[] } {
  const failures: string[] = []
  let restoreLogger: (() => void) | undefined
  const listen = () => {
    const logger = parseLogger()
    const error = logger.error
    logger.error = function (...args: unknown[]) {
      if (typeof args[0] === 'string' && args[0].startsWith('Failed to run migrations')) failures.push(args[0])
      return error.apply(this, args)
    }
    restoreLogger = () => { logger.error = error }
  }
  const hook = (name: 'beforeMigration' | 'afterMigration', run: (() => void | Promise<void>) | undefined) => async () => {
    try {
      await run?.()
    } catch (error) {
      failures.push(`${name} threw: ${(error as Error)?.message ?? String(error)}`)
      throw error
    }
  }
  const before = hook('beforeMigration', schema.beforeMigration)
  return {
    schema: {
      ...schema,
      beforeMigration: async () => { listen(); await before() },
      afterMigration: hook('afterMigration', schema.afterMigration)
    },
    finish: () => {
      restoreLogger?.()
      restoreLogger = undefined
      return [...new Set(failures)]
    }
  }
}

// createSchemaConfig: the value for Parse Server's `schema` option (its Defined
// Schemas feature), built from the declared models.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { getKitConfig } from '../config.js'
import { typed } from '../option-schema.js'
import { roleKey } from '../access/acl.js'
import { allModels, type ModelDefinition } from './registry.js'

const flag = Type.Boolean({ problem: 'must be true or false' })
const hook = typed<() => void | Promise<void>>(Type.Function([], Type.Unknown(), { problem: 'must be a function' }))

/** createSchemaConfig's options: their type (SchemaConfigOptions) and their shape check (model/schema-option.ts) come from here. */
export const SchemaConfigOptionsSchema = Type.Object({
  /** Role permitted to manage _Role. Default: configureKit's adminRole ('SuperAdmin'). */
  adminRole: Type.Optional(Type.String({ minLength: 1, problem: 'must be a role name' })),
  /** No save (REST, batch, in-process SDK, master key included) may create a class or a field. Default false. */
  lockSchemas: Type.Optional(flag),
  /** Create missing classes and fields at boot (false: create none; Parse then creates them at the first save unless lockSchemas). Default true. */
  strict: Type.Optional(flag),
  /** Destructive: drop and recreate a field whose type changed. Default false. */
  recreateModifiedFields: Type.Optional(flag),
  /** Destructive: remove fields that are not declared. Default false. */
  deleteExtraFields: Type.Optional(flag),
  /**
   * The most fields a stored class may reach through saves without the master key (Parse's addField,
   * public on `_User`): a save past it is refused as Parse refuses an addField (400, code 119). Default 100; false: no bound.
   */
  maxClientFields: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal(false)], { problem: 'must be a whole number of 1 or more, or false' })),
  /** Keep indexes the declarations do not describe. Default true. */
  keepUnknownIndexes: Type.Optional(flag),
  /**
   * The declarations' schema generation, when the application numbers them: a boot with a lower
   * version than the database records changes nothing. Default: the order in which declarations first booted.
   */
  version: Type.Optional(Type.Integer({ minimum: 1, problem: 'must be a whole number of 1 or more' })),
  beforeMigration: Type.Optional(hook),
  afterMigration: Type.Optional(hook)
})

export type SchemaConfigOptions = Static<typeof SchemaConfigOptionsSchema>

export interface ParseSchemaField { type: string, required?: boolean, defaultValue?: unknown, targetClass?: string }
export interface ParseClassSchema {
  className: string
  fields?: Record<string, ParseSchemaField>
  classLevelPermissions?: Record<string, unknown>
}

const PUBLIC = { '*': true }
const OPERATIONS = ['find', 'get', 'count', 'create', 'update', 'delete'] as const

export function createSchemaConfig (options: SchemaConfigOptions = {}) {
  const { adminRole = getKitConfig().adminRole, ...rest } = options
  const definitions = allModels().map(classSchema)
  if (!definitions.some((definition) => definition.className === '_Role')) definitions.push(roleSchema(adminRole))
  return {
    definitions,
    lockSchemas: false,
    strict: true,
    recreateModifiedFields: false,
    deleteExtraFields: false,
    keepUnknownIndexes: true,
    ...rest
  }
}

export function classSchema (model: ModelDefinition): ParseClassSchema {
  const fields: Record<string, ParseSchemaField> = {}
  for (const [name, field] of model.fields) {
    const parseField: ParseSchemaField = { type: field.type }
    if (field.required) parseField.required = true
    if (field.default !== undefined) parseField.defaultValue = field.default
    if (field.type === 'Pointer' || field.type === 'Relation') parseField.targetClass = field.targetClass
    fields[name] = parseField
  }
  const clp: Record<string, unknown> = Object.fromEntries(OPERATIONS.map((operation) => [operation, PUBLIC]))
  Object.assign(clp, model.options.clp ?? {})
  if (model.options.protectedFields) clp.protectedFields = model.options.protectedFields
  return { className: model.className, fields, classLevelPermissions: clp }
}

function roleSchema (adminRole: string): ParseClassSchema {
  const admin = { [roleKey(adminRole)]: true }
  return {
    className: '_Role',
    // addField as Parse gives it: only those who may write a role reach it.
    classLevelPermissions: { find: PUBLIC, get: PUBLIC, count: PUBLIC, create: admin, update: admin, delete: admin, addField: PUBLIC }
  }
}

// kitPlugin's `schema` option: the options of createSchemaConfig, or a whole
// configuration it returned (with `definitions`), checked at registration.
import { Type } from '../typebox.js'
import { SchemaConfigOptionsSchema, type ParseClassSchema, type SchemaConfigOptions } from './schema-config.js'
import type { SchemaConfig } from './schema-boot.js'
import { optionChecker, typed, type OptionProblem } from '../option-schema.js'

export type SchemaOption = SchemaConfigOptions | SchemaConfig

/** createSchemaConfig's options plus the `definitions` a whole configuration carries. */
const SchemaOptionSchema = Type.Object({
  ...SchemaConfigOptionsSchema.properties,
  definitions: Type.Optional(typed<ParseClassSchema[]>(Type.Array(Type.Unknown(), { problem: 'must be a list of class schemas (as createSchemaConfig() returns)' })))
}, { additionalProperties: false, unknownKey: 'is not a schema option', problem: 'must be an object such as { lockSchemas: true } or createSchemaConfig({ … })' })

const checkShape = optionChecker(SchemaOptionSchema)

/** What is wrong with the option, or undefined. */
export function checkSchemaOption (value: unknown): OptionProblem | undefined {
  const shape = checkShape(value)
  if (!shape) return undefined
  // Worded as before: "lockSchema" is not a schema option (known: …), strict must be true or false (got …).
  const key = shape.path[0]?.key
  const problem = key === undefined ? shape.problem : shape.kind === 'unknown' ? `"${key}" ${shape.problem}` : `${key} ${shape.problem}`
  return { ...shape, problem }
}

/**
 * The schema option, given as the kit's `schema` or as parseServerOptions.schema
 * (not both), checked; undefined when neither is given.
 */
export function resolveSchemaOption (own: unknown, fromParse: unknown, fail: (option: string, problem: string, kind?: OptionProblem['kind']) => Error): SchemaOption | undefined {
  if (own !== undefined && fromParse !== undefined) {
    throw fail('schema', 'is given twice: pass it as the kit\'s schema option only, not also as parseServerOptions.schema')
  }
  const value = own ?? fromParse
  if (value === undefined) return undefined
  const shape = checkSchemaOption(value)
  if (shape) throw fail(own !== undefined ? 'schema' : 'parseServerOptions.schema', shape.problem, shape.kind)
  return value as SchemaOption
}

// The TypeBox schema of a function's input, from validation.fields. Fastify
// validates it (ajv) and @fastify/swagger documents it: one source for both.
import { KindGuard, Type, type TObject, type TSchema } from '@sinclair/typebox'
import { fieldTypeName, type CloudFunctionOptions, type FieldTypeName, type ValidationField } from './options.js'

export function inputSchema (options: CloudFunctionOptions): TObject | undefined {
  const fields = options.validation?.fields
  if (!fields || Object.keys(fields).length === 0) return undefined
  const properties: Record<string, TSchema> = {}
  for (const [name, field] of Object.entries(fields)) {
    const schema = fieldSchema(field)
    properties[name] = field.required ? schema : Type.Optional(schema)
  }
  // Undeclared params pass through untouched: the handler reads them itself.
  return Type.Object(properties, { additionalProperties: true })
}

/** The schema of a function's answer, from `returns` (a TypeBox schema, or fields in the validation shorthand). */
export function outputSchema (options: CloudFunctionOptions): TSchema | undefined {
  const returns = options.returns
  if (returns === undefined) return undefined
  if (KindGuard.IsSchema(returns)) return returns
  const properties: Record<string, TSchema> = {}
  for (const [name, field] of Object.entries(returns)) {
    const schema = fieldSchema(field)
    properties[name] = field.required ? schema : Type.Optional(schema)
  }
  return Type.Object(properties)
}

function fieldSchema (field: ValidationField): TSchema {
  const extra: Record<string, unknown> = {}
  if (field.description) extra.description = field.description
  if (field.default !== undefined) extra.default = field.default
  if (field.options) return Type.Unsafe({ enum: [...field.options], ...extra })
  return typeSchema(fieldTypeName(field.type), field, extra)
}

function typeSchema (type: FieldTypeName, field: ValidationField, extra: Record<string, unknown>): TSchema {
  switch (type) {
    case 'String': return Type.String({ ...limits(field, { maxLength: 'maxLength', minLength: 'minLength', pattern: 'pattern' }), ...extra })
    case 'Number': return field.integer
      ? Type.Integer({ ...limits(field, { min: 'minimum', max: 'maximum' }), ...extra })
      : Type.Number({ ...limits(field, { min: 'minimum', max: 'maximum' }), ...extra })
    case 'Boolean': return Type.Boolean(extra)
    case 'Date': return Type.String({ format: 'date-time', ...extra })
    case 'Object': return Type.Object({}, { additionalProperties: true, ...extra })
    case 'Array': return Type.Array(field.items === undefined ? Type.Any() : typeSchema(fieldTypeName(field.items), {}, {}), extra)
    default: return Type.Any(extra)
  }
}

/** The field's declared bounds under their JSON Schema names. */
function limits (field: ValidationField, names: Partial<Record<keyof ValidationField, string>>): Record<string, unknown> {
  const schema: Record<string, unknown> = {}
  for (const [option, keyword] of Object.entries(names)) {
    const value = field[option as keyof ValidationField]
    if (value !== undefined) schema[keyword!] = value
  }
  return schema
}

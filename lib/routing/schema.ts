// The JSON Schema of a function's input, from validation.fields. Fastify
// validates it (ajv) and @fastify/swagger documents it: one source for both.
// Written as plain objects, in the shape and key order TypeBox gives them:
// TypeBox deep-clones every schema it builds, which with a thousand declared
// functions was a visible share of the kit's own boot work.
import { KindGuard, type TSchema } from '@sinclair/typebox'
import { fieldTypeName, isItemObject, type CloudFunctionOptions, type FieldTypeName, type ValidationField } from './options.js'

type Schema = Record<string, unknown>

/** An object schema with the properties and `required` list a declared field map gives. */
export interface ObjectSchema extends Schema {
  type: 'object'
  properties: Record<string, Schema>
  required?: string[]
}

export function inputSchema (options: CloudFunctionOptions): ObjectSchema | undefined {
  const fields = options.validation?.fields
  if (!fields || Object.keys(fields).length === 0) return undefined
  // Undeclared params pass through untouched: the handler reads them itself.
  return objectSchema(fields, { additionalProperties: true })
}

/** The schema of a function's answer, from `returns` (a TypeBox schema, or fields in the validation shorthand). */
export function outputSchema (options: CloudFunctionOptions): TSchema | ObjectSchema | undefined {
  const returns = options.returns
  if (returns === undefined) return undefined
  if (KindGuard.IsSchema(returns)) return returns
  return objectSchema(returns, {})
}

function objectSchema (fields: Record<string, ValidationField>, options: Schema): ObjectSchema {
  const properties: Record<string, Schema> = {}
  const required: string[] = []
  for (const [name, field] of Object.entries(fields)) {
    properties[name] = fieldSchema(field)
    if (field.required) required.push(name)
  }
  return { ...options, type: 'object', ...(required.length > 0 ? { required } : {}), properties }
}

function fieldSchema (field: ValidationField): Schema {
  const extra: Schema = {}
  if (field.description) extra.description = field.description
  // A copy: the declaration's own value is never handed to a validator that may fill bodies with it.
  if (field.default !== undefined) extra.default = typeof field.default === 'object' && field.default !== null ? structuredClone(field.default) : field.default
  if (field.options) return { enum: [...field.options], ...extra }
  return typeSchema(fieldTypeName(field.type), field, extra)
}

function typeSchema (type: FieldTypeName, field: ValidationField, extra: Schema): Schema {
  switch (type) {
    case 'String': return { ...limits(field, { maxLength: 'maxLength', minLength: 'minLength', pattern: 'pattern' }), ...extra, type: 'string' }
    case 'Number': return { ...limits(field, { min: 'minimum', max: 'maximum' }), ...extra, type: field.integer ? 'integer' : 'number' }
    case 'Boolean': return { ...extra, type: 'boolean' }
    case 'Date': return { format: 'date-time', ...extra, type: 'string' }
    // Declared properties are checked; others pass through, as undeclared params do.
    case 'Object': return field.properties ? { ...objectSchema(field.properties, { additionalProperties: true }), ...extra } : { additionalProperties: true, ...extra, type: 'object', properties: {} }
    case 'Array': return { ...extra, type: 'array', items: itemsSchema(field.items) }
    default: return { ...extra }
  }
}

function itemsSchema (items: ValidationField['items']): Schema {
  if (items === undefined) return {}
  if (isItemObject(items)) return { ...objectSchema(items.properties, { additionalProperties: true }), ...(items.description ? { description: items.description } : {}) }
  return typeSchema(fieldTypeName(items), {}, {})
}

/** The field's declared bounds under their JSON Schema names. */
function limits (field: ValidationField, names: Partial<Record<keyof ValidationField, string>>): Schema {
  const schema: Schema = {}
  for (const [option, keyword] of Object.entries(names)) {
    const value = field[option as keyof ValidationField]
    if (value !== undefined) schema[keyword!] = value
  }
  return schema
}

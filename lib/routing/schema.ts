// The JSON Schema of a function's input, from validation.fields. Fastify
// validates it (ajv) and @fastify/swagger documents it: one source for both.
// Written as plain objects, in the shape and key order TypeBox gives them:
// TypeBox deep-clones every schema it builds, which with a thousand declared
// functions was a visible share of the kit's own boot work.
import type { TSchema } from '@sinclair/typebox'
import { KindGuard } from '../typebox.js'
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
  return objectSchema(fields, true)
}

/** The schema of a function's answer, from `returns` (a TypeBox schema, or fields in the validation shorthand). */
export function outputSchema (options: CloudFunctionOptions): TSchema | ObjectSchema | undefined {
  const returns = options.returns
  if (returns === undefined) return undefined
  if (KindGuard.IsSchema(returns)) return returns
  return objectSchema(returns, false)
}

/** `open`: undeclared properties pass (additionalProperties: true, the first key, as TypeBox places it). */
function objectSchema (fields: Record<string, ValidationField>, open: boolean): ObjectSchema {
  const properties: Record<string, Schema> = {}
  let required: string[] | undefined
  for (const name of Object.keys(fields)) {
    const field = fields[name]
    properties[name] = fieldSchema(field)
    if (field.required) (required ??= []).push(name)
  }
  // Keys added one by one to a literal, not spread: a spread followed by more keys makes a
  // dictionary object several times the size, once per declared function at boot.
  const schema = (open ? { additionalProperties: true } : {}) as ObjectSchema
  schema.type = 'object'
  if (required) schema.required = required
  schema.properties = properties
  return schema
}

function fieldSchema (field: ValidationField): Schema {
  if (field.options) return described({ enum: [...field.options] }, field)
  return typeSchema(fieldTypeName(field.type), field, field)
}

/** Adds the field's description and default (`field` undefined: neither). Keys are set in TypeBox's order: bounds, then these, then the type. */
function described (schema: Schema, field: ValidationField | undefined): Schema {
  if (field === undefined) return schema
  if (field.description) schema.description = field.description
  // A copy: the declaration's own value is never handed to a validator that may fill bodies with it.
  if (field.default !== undefined) schema.default = typeof field.default === 'object' && field.default !== null ? structuredClone(field.default) : field.default
  return schema
}

/** `about`: the field whose description and default the schema carries (none for an array's items). */
function typeSchema (type: FieldTypeName, field: ValidationField, about: ValidationField | undefined): Schema {
  switch (type) {
    case 'String': {
      const schema: Schema = {}
      if (field.maxLength !== undefined) schema.maxLength = field.maxLength
      if (field.minLength !== undefined) schema.minLength = field.minLength
      if (field.pattern !== undefined) schema.pattern = field.pattern
      described(schema, about).type = 'string'
      return schema
    }
    case 'Number': {
      const schema: Schema = {}
      if (field.min !== undefined) schema.minimum = field.min
      if (field.max !== undefined) schema.maximum = field.max
      described(schema, about).type = field.integer ? 'integer' : 'number'
      return schema
    }
    case 'Boolean': return typed(described({}, about), 'boolean')
    case 'Date': return typed(described({ format: 'date-time' }, about), 'string')
    // Declared properties are checked; others pass through, as undeclared params do.
    case 'Object': return field.properties
      ? described(objectSchema(field.properties, true), about)
      : withKeys(described({ additionalProperties: true }, about), 'object', 'properties', {})
    case 'Array': return withKeys(described({}, about), 'array', 'items', itemsSchema(field.items))
    default: return described({}, about)
  }
}

function typed (schema: Schema, type: string): Schema {
  schema.type = type
  return schema
}

/** The type, then one more key, set on the schema itself (no spread: see objectSchema). */
function withKeys (schema: Schema, type: string, key: string, value: unknown): Schema {
  schema.type = type
  schema[key] = value
  return schema
}

function itemsSchema (items: ValidationField['items']): Schema {
  if (items === undefined) return {}
  if (isItemObject(items)) {
    const schema: Schema = objectSchema(items.properties, true)
    if (items.description) schema.description = items.description
    return schema
  }
  return typeSchema(fieldTypeName(items), {}, undefined)
}

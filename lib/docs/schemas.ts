// One OpenAPI 3.0 schema per @ParseClass model, from its @ParseField
// declarations: type, required, description and the declared constraints.
// Values are described as Parse's REST API writes them.
import { allModels, type ModelDefinition } from '../model/registry.js'
import type { FieldDefinition } from '../model/field-options.js'

export type OpenApiSchema = Record<string, unknown>

/** Component schemas keyed by Parse class name. Only @ParseClass models are registered, so only they appear. */
export function modelSchemas (): Record<string, OpenApiSchema> {
  const schemas: Record<string, OpenApiSchema> = {}
  for (const model of allModels()) schemas[model.className] = modelSchema(model)
  return schemas
}

export function modelSchema (model: ModelDefinition): OpenApiSchema {
  const properties: Record<string, OpenApiSchema> = {
    objectId: { type: 'string', readOnly: true, description: 'Set by the server' },
    createdAt: { type: 'string', format: 'date-time', readOnly: true },
    updatedAt: { type: 'string', format: 'date-time', readOnly: true },
    ACL: {
      type: 'object',
      description: 'Access control list: "*", a user id or "role:<name>" → { read, write }',
      additionalProperties: { type: 'object', properties: { read: { type: 'boolean' }, write: { type: 'boolean' } } }
    }
  }
  const required: string[] = []
  for (const field of model.fields.values()) {
    properties[field.name] = fieldSchema(field)
    if (field.required) required.push(field.name)
  }
  const schema: OpenApiSchema = { type: 'object' }
  if (model.options.description) schema.description = model.options.description
  if (required.length > 0) schema.required = required
  schema.properties = properties
  return schema
}

export function fieldSchema (field: FieldDefinition): OpenApiSchema {
  const schema = typeSchema(field)
  if (field.description) schema.description = field.description
  if (field.default !== undefined) schema.default = field.default
  if (field.version) schema.readOnly = true
  return schema
}

function typeSchema (field: FieldDefinition): OpenApiSchema {
  switch (field.type) {
    case 'String': return stringSchema(field)
    case 'Number': {
      const schema: OpenApiSchema = { type: field.integer ? 'integer' : 'number' }
      if (field.min !== undefined) schema.minimum = field.min
      if (field.max !== undefined) schema.maximum = field.max
      return schema
    }
    case 'Boolean': return { type: 'boolean' }
    case 'Date': return { type: 'string', format: 'date-time' }
    case 'Object': return { type: 'object', additionalProperties: true }
    case 'Array': return { type: 'array', items: field.targetClass ? pointerSchema(field.targetClass) : {} }
    case 'GeoPoint': return geoPointSchema()
    case 'Pointer': return pointerSchema(field.targetClass!)
    case 'Relation': return typed('Relation', { className: { type: 'string', enum: [field.targetClass] } }, [], `Relation to ${field.targetClass}`)
    case 'File': return typed('File', { name: { type: 'string' }, url: { type: 'string' } }, ['name'], 'A file stored by Parse')
    case 'Bytes': return typed('Bytes', { base64: { type: 'string', format: 'byte' } }, ['base64'], 'Binary data')
    case 'Polygon': return typed('Polygon', {
      coordinates: { type: 'array', minItems: 3, items: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'number' } } }
    }, ['coordinates'], 'Closed polygon of [latitude, longitude] points')
    default: return {}
  }
}

function stringSchema (field: FieldDefinition): OpenApiSchema {
  const schema: OpenApiSchema = { type: 'string' }
  if (field.enum) schema.enum = [...field.enum]
  if (field.minLength !== undefined) schema.minLength = field.minLength
  if (field.maxLength !== undefined) schema.maxLength = field.maxLength
  if (field.pattern !== undefined) {
    // Declared patterns must match the whole value (see validateOrThrow); say so in the document.
    const source = typeof field.pattern === 'string' ? field.pattern : field.pattern.source
    schema.pattern = `^(?:${source})$`
  }
  return schema
}

function geoPointSchema (): OpenApiSchema {
  return typed('GeoPoint', {
    latitude: { type: 'number', minimum: -90, maximum: 90 },
    longitude: { type: 'number', minimum: -180, maximum: 180 }
  }, ['latitude', 'longitude'], 'A geographic point')
}

function pointerSchema (targetClass: string): OpenApiSchema {
  return typed('Pointer', {
    className: { type: 'string', enum: [targetClass] },
    objectId: { type: 'string' }
  }, ['className', 'objectId'], `Pointer to ${targetClass}`)
}

/** Parse's encoding of a special value: an object tagged with __type. */
function typed (type: string, properties: Record<string, OpenApiSchema>, required: string[], description: string): OpenApiSchema {
  return {
    type: 'object',
    description,
    required: ['__type', ...required],
    properties: { __type: { type: 'string', enum: [type] }, ...properties }
  }
}

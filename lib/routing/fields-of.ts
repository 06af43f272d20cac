// fieldsOf(Model, names): validation fields taken from a model's own
// @ParseField declarations, so a handler never restates a limit the model
// already declares (and the request schema, the API document and the stored
// data agree on it).
import type Parse from 'parse/node'
import { RouteOptionInvalidError } from '../errors.js'
import { modelByClass, type ModelClass } from '../model/registry.js'
import type { FieldDefinition } from '../model/field-options.js'
import type { ValidationField } from './options.js'

export interface FieldsOfOptions {
  /** Every field optional, whatever the model says (an update sends only what changes). */
  optional?: boolean
}

/** The validation field a model property's type implies (ids for pointers, text for dates). */
export type FieldFor<T> =
  T extends string ? (string extends T ? { type: 'String' } : { type: 'String', options: readonly T[] })
    : T extends number ? { type: 'Number' }
      : T extends boolean ? { type: 'Boolean' }
        : T extends Date ? { type: 'Date' }
          : T extends readonly unknown[] ? { type: 'Array' }
            : T extends Parse.Object ? { type: 'String' }
              : { type: 'Object' }

export function fieldsOf<M, K extends keyof M & string> (
  model: abstract new (...args: never[]) => M, names: readonly K[], options: FieldsOfOptions = {}
): { [P in NoInfer<K>]: FieldFor<M[P]> } {
  const definition = modelByClass(model as unknown as ModelClass)
  if (!definition) throw new RouteOptionInvalidError(`fieldsOf: ${(model as { name?: string }).name ?? 'this class'} is not a @ParseClass model (declare it with @ParseClass, and import its file first)`)
  const fields: Record<string, ValidationField> = {}
  for (const name of names) {
    const field = definition.fields.get(name)
    if (!field) {
      throw new RouteOptionInvalidError(`fieldsOf(${definition.className}): no @ParseField "${name}"; its fields are ${[...definition.fields.keys()].join(', ')}`)
    }
    fields[name] = validationField(field, options.optional === true)
  }
  return fields as { [P in NoInfer<K>]: FieldFor<M[P]> }
}

function validationField (field: FieldDefinition, optional: boolean): ValidationField {
  const result: ValidationField = { ...shape(field) }
  if (field.required && !optional) result.required = true
  if (field.description) result.description = result.description ? `${field.description} (${result.description})` : field.description
  return result
}

/** The request shape of a stored field: what fromParams accepts for it, with the model's limits. */
function shape (field: FieldDefinition): ValidationField {
  switch (field.type) {
    case 'String': {
      if (field.enum) return { type: 'String', options: [...field.enum] }
      const limits: ValidationField = { type: 'String' }
      if (field.maxLength !== undefined) limits.maxLength = field.maxLength
      if (field.minLength !== undefined) limits.minLength = field.minLength
      // Declared patterns match the whole value (validateOrThrow); JSON Schema's match anywhere unless anchored.
      if (field.pattern !== undefined) limits.pattern = `^(?:${typeof field.pattern === 'string' ? field.pattern : field.pattern.source})$`
      return limits
    }
    case 'Number': {
      const limits: ValidationField = { type: 'Number' }
      if (field.min !== undefined) limits.min = field.min
      if (field.max !== undefined) limits.max = field.max
      if (field.integer) limits.integer = true
      return limits
    }
    case 'Boolean': return { type: 'Boolean' }
    case 'Date': return { type: 'Date' }
    case 'Array': return field.targetClass ? { type: 'Array', items: 'String', description: `${field.targetClass} ids` } : { type: 'Array' }
    case 'Pointer': return { type: 'String', description: `${field.targetClass} id` }
    case 'GeoPoint': return {
      type: 'Object',
      description: 'A point: { latitude, longitude }',
      properties: {
        latitude: { type: 'Number', required: true, min: -90, max: 90, description: 'Degrees north (negative: south)' },
        longitude: { type: 'Number', required: true, min: -180, max: 180, description: 'Degrees east (negative: west)' }
      }
    }
    case 'Object': return { type: 'Object' }
    default: return { type: 'Any' }
  }
}

// BaseModel: the base of model classes, and fromParams, which builds a model
// from a flat request object using the declared fields only.
import Parse from 'parse/node'
import { getKitConfig } from '../config.js'
import type { FieldDefinition } from './field-options.js'
import { modelByClass } from './registry.js'
import { extendSaveJSON } from '../parse/save-json.js'
import { ModelDeclarationError } from '../errors.js'

type Params = Record<string, unknown>

export class BaseModel extends Parse.Object {
  /** The class name may be left out (@ParseClass knows it): new Note(), new Note({ title }), new Note('Note', { title }). */
  constructor (className?: string | Params, attributes?: Params, options?: unknown) {
    if (typeof className === 'object' && className !== null) {
      super(registeredClassName(new.target), className as Parse.Attributes, attributes as never)
    } else {
      super(className ?? registeredClassName(new.target), attributes as Parse.Attributes, options as never)
    }
  }

  /**
   * A new instance holding the params that name declared fields, decoded by
   * type (pointers from ids, dates from ISO strings, geopoints from
   * {latitude, longitude}). Other keys are ignored: the handler reads them itself.
   * Takes any object, so a handler's typed params (an interface too) pass as they are.
   */
  static fromParams<T extends BaseModel> (this: new () => T, params: object): T {
    const object = new this()
    object.set(BaseModel.fieldsFromParams.call(this, params) as Parse.Attributes)
    return object
  }

  /** What fromParams would set, as plain values (for createRow, which needs no instance). */
  static fieldsFromParams (this: abstract new () => BaseModel, params: object): Record<string, unknown> {
    const definition = modelByClass(this)
    if (!definition) throw new ModelDeclarationError(`${this.name}.fromParams: ${this.name} has no @ParseClass, so it has no declared fields to take; add @ParseClass('<ClassName>') to it`)
    const excluded = new Set(getKitConfig().excludedPointerClasses)
    const fields: Record<string, unknown> = {}
    for (const [name, field] of definition.fields) {
      if (field.version || !Object.prototype.hasOwnProperty.call(params ?? {}, name)) continue
      const decoded = decodeField(field, (params as Params)[name], excluded)
      if (decoded !== SKIP) fields[name] = decoded
    }
    return fields
  }
}

// What a save sends. A versioned model always sends the version it was read
// at, changed or not, so the server can refuse a stale save (CONFLICT).
extendSaveJSON(BaseModel, (object, json) => {
  const field = object.id ? modelByClass(object.constructor)?.versionField : undefined
  if (field && !(field in json) && object.get(field) !== undefined) json[field] = object.get(field)
})

function registeredClassName (target: unknown): string {
  const definition = modelByClass(target)
  if (!definition) throw new ModelDeclarationError(`new ${(target as { name?: string }).name || 'BaseModel'}(): ${(target as { name?: string }).name || 'BaseModel'} has no @ParseClass; add @ParseClass('<ClassName>') to it, or pass the class name (new BaseModel('Note'))`)
  return definition.className
}

const SKIP = Symbol('skip')

function decodeField (field: FieldDefinition, value: unknown, excluded: Set<string>): unknown {
  refuseOperations(field, value)
  switch (field.type) {
    case 'Pointer':
      if (excluded.has(field.targetClass!)) return SKIP
      return toPointer(field, value)
    case 'Array':
      if (!field.targetClass) return value
      if (excluded.has(field.targetClass)) return SKIP
      if (value === null) return null
      if (!Array.isArray(value)) invalid(field, `a list of ids of ${field.targetClass} objects`)
      return value.map((item) => toPointer(field, item))
    case 'Date':
      return toDate(field, value)
    case 'GeoPoint':
      return toGeoPoint(field, value)
    default:
      return value
  }
}

function toPointer (field: FieldDefinition, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (value instanceof Parse.Object) return value
  if (typeof value === 'object' && Object.keys(value).length === 0) return null
  const id = typeof value === 'string' ? value : (value as { objectId?: unknown }).objectId
  if (typeof id !== 'string' || id === '') invalid(field, `an id of a ${field.targetClass} object`)
  return Parse.Object.fromJSON({ className: field.targetClass!, objectId: id, __type: 'Pointer' })
}

/** The typed values a field of each type takes ({ __type: 'Date', iso }…); anything else with __type, and every __op, is refused. */
const TYPED_VALUES: Partial<Record<string, string>> = { Date: 'Date', Pointer: 'Pointer', GeoPoint: 'GeoPoint', File: 'File', Bytes: 'Bytes', Polygon: 'Polygon' }

/**
 * A request body holding { "__op": "Increment" } or { "__type": … } would reach
 * the save as a Parse operation or typed value: an edit the handler never asked for.
 */
function refuseOperations (field: FieldDefinition, value: unknown): void {
  const items = field.type === 'Array' && Array.isArray(value) ? value : [value]
  for (const item of items) {
    if (item === null || typeof item !== 'object' || Array.isArray(item) || item instanceof Parse.Object) continue
    if ('__op' in item) invalid(field, 'a value, not a Parse operation (__op)')
    const type = (item as { __type?: unknown }).__type
    const allowed = field.type === 'Array' ? (field.targetClass ? 'Pointer' : undefined) : TYPED_VALUES[field.type]
    if (type !== undefined && type !== allowed) invalid(field, `a value, not a typed Parse value (__type ${JSON.stringify(type)})`)
  }
}

/** Calendar date, optionally with a time and a zone: 2026-11-25, 2026-11-25T10:00:00.000Z, 2026-11-25T10:00+01:00. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/

function toDate (field: FieldDefinition, value: unknown): unknown {
  if (value === null || value instanceof Date) return value
  const text = typeof value === 'string' ? value : (value as { __type?: string, iso?: string })?.iso
  const date = typeof text === 'string' && ISO_8601.test(text) ? new Date(text) : undefined
  if (!date || Number.isNaN(date.getTime())) invalid(field, 'an ISO 8601 date')
  return date
}

function toGeoPoint (field: FieldDefinition, value: unknown): unknown {
  if (value === null || value instanceof Parse.GeoPoint) return value
  const { latitude, longitude } = (value ?? {}) as { latitude?: unknown, longitude?: unknown }
  if (typeof latitude !== 'number' || typeof longitude !== 'number' ||
      Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
    invalid(field, '{ latitude, longitude } with latitude in -90…90 and longitude in -180…180')
  }
  return new Parse.GeoPoint(latitude as number, longitude as number)
}

function invalid (field: FieldDefinition, expected: string): never {
  throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${field.name} must be ${expected}`)
}

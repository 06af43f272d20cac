// BaseModel: the base of model classes, and fromParams, which builds a model
// from a flat request object using the declared fields only.
import Parse from 'parse/node'
import { getKitConfig } from '../config.js'
import type { FieldDefinition } from './field-options.js'
import { modelByClass } from './registry.js'

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
   * What a save sends. A versioned model always sends the version it was read
   * at, changed or not, so the server can refuse a stale save (CONFLICT).
   */
  override _getSaveJSON (): Parse.Attributes {
    const json = super._getSaveJSON()
    const field = this.id ? modelByClass(this.constructor)?.versionField : undefined
    if (field && !(field in json) && this.get(field) !== undefined) json[field] = this.get(field)
    return json
  }

  /**
   * A new instance holding the params that name declared fields, decoded by
   * type (pointers from ids, dates from ISO strings, geopoints from
   * {latitude, longitude}). Other keys are ignored: the handler reads them itself.
   * Takes any object, so a handler's typed params (an interface too) pass as they are.
   */
  static fromParams<T extends BaseModel> (this: new () => T, params: object): T {
    const object = new this()
    const definition = modelByClass(this)
    if (!definition) throw new Error(`${this.name}.fromParams: ${this.name} has no @ParseClass`)
    const excluded = new Set(getKitConfig().excludedPointerClasses)
    for (const [name, field] of definition.fields) {
      if (field.version || !Object.prototype.hasOwnProperty.call(params ?? {}, name)) continue
      const decoded = decodeField(field, (params as Params)[name], excluded)
      if (decoded !== SKIP) object.set(name, decoded)
    }
    return object
  }
}

function registeredClassName (target: unknown): string {
  const definition = modelByClass(target)
  if (!definition) throw new Error('new BaseModel() needs a class name, or a subclass decorated with @ParseClass')
  return definition.className
}

const SKIP = Symbol('skip')

function decodeField (field: FieldDefinition, value: unknown, excluded: Set<string>): unknown {
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

function toDate (field: FieldDefinition, value: unknown): unknown {
  if (value === null || value instanceof Date) return value
  const text = typeof value === 'string' ? value : (value as { __type?: string, iso?: string })?.iso
  const date = typeof text === 'string' ? new Date(text) : undefined
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

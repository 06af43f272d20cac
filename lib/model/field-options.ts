// @ParseField options: their types, and the checks that run when a model file
// is imported, so a mistake fails at boot with the class, field and option named.
import { SchemaRules } from '../parse/internals.js'

export const FIELD_TYPES = [
  'String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'GeoPoint',
  'Pointer', 'Relation', 'File', 'Bytes', 'Polygon'
] as const

export type FieldType = typeof FIELD_TYPES[number]

export interface FieldOptions {
  type: FieldType
  required?: boolean
  /** Value Parse stores when a new object leaves the field unset. */
  default?: unknown
  description?: string
  /** Unique index; a conflicting non-unique index is dropped first. */
  unique?: boolean
  /** Ordered index: true or 1 ascending, -1 descending. */
  index?: true | 1 | -1
  /** Geospatial (2dsphere) index; GeoPoint only. */
  geo?: boolean
  /** Expiry index; Date only. */
  ttlSeconds?: number
  /** String only. */
  maxLength?: number
  minLength?: number
  /** Regular expression the whole value must match; String only. */
  pattern?: string | RegExp
  /** List of allowed values; String only. */
  enum?: readonly string[]
  /** Number only. */
  min?: number
  max?: number
  /** Number only: whole numbers. */
  integer?: boolean
  /** Pointer and Relation: required. Array: elements are pointers to this class. */
  targetClass?: string
}

export interface FieldDefinition extends FieldOptions {
  name: string
  /** Set for the field declared by @ParseVersionField(). */
  version?: boolean
}

const OPTION_KEYS = new Set([
  'type', 'required', 'default', 'description', 'unique', 'index', 'geo', 'ttlSeconds', 'maxLength',
  'minLength', 'pattern', 'enum', 'min', 'max', 'integer', 'targetClass'
])

/** Attribute names Parse owns, or that would shadow a Parse.Object member. */
const RESERVED = new Set(['objectId', 'id', 'createdAt', 'updatedAt', 'ACL', 'className', 'attributes', 'sessionToken', 'authData'])

export class ModelDeclarationError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ModelDeclarationError'
  }
}

export function checkFieldOptions (className: string, name: string, options: FieldOptions, parseMembers: Set<string>): void {
  const where = `@ParseField ${className}.${name}`
  const fail = (option: string, problem: string): never => {
    throw new ModelDeclarationError(`${where}: option "${option}" ${problem}`)
  }
  if (typeof options !== 'object' || options === null) throw new ModelDeclarationError(`${where}: options must be an object such as { type: 'String' }`)
  if (RESERVED.has(name) || parseMembers.has(name)) {
    throw new ModelDeclarationError(`${where}: "${name}" is reserved by Parse (it would clash with Parse.Object); choose another field name`)
  }
  // Parse's own rule (SchemaController.fieldNameIsValid): its migration would refuse anything else at boot.
  if (!SchemaRules.fieldNameIsValid(name)) {
    throw new ModelDeclarationError(`${where}: Parse refuses the field name "${name}": a field name starts with a letter and holds only letters, digits and _ (and is not "length")`)
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) fail(key, `is not a field option (known: ${[...OPTION_KEYS].join(', ')})`)
  }
  const { type } = options
  if (!FIELD_TYPES.includes(type)) fail('type', `must be one of ${FIELD_TYPES.join(', ')} (got ${JSON.stringify(type)})`)
  const only = (option: keyof FieldOptions, types: FieldType[]) => {
    if (options[option] !== undefined && !types.includes(type)) fail(option, `is only for ${types.join('/')} fields (this field is ${type})`)
  }
  const bool = (option: keyof FieldOptions) => {
    if (options[option] !== undefined && typeof options[option] !== 'boolean') fail(option, 'must be true or false')
  }
  const count = (option: keyof FieldOptions) => {
    const value = options[option]
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) fail(option, `must be a whole number ≥ 0 (got ${JSON.stringify(value)})`)
  }
  bool('required'); bool('unique'); bool('geo'); bool('integer')
  count('maxLength'); count('minLength'); count('ttlSeconds')
  only('maxLength', ['String']); only('minLength', ['String']); only('pattern', ['String']); only('enum', ['String'])
  only('min', ['Number']); only('max', ['Number']); only('integer', ['Number'])
  only('geo', ['GeoPoint']); only('ttlSeconds', ['Date'])
  only('targetClass', ['Pointer', 'Relation', 'Array'])
  if ((type === 'Pointer' || type === 'Relation') && !options.targetClass) fail('targetClass', `is required for type ${type}`)
  if (options.targetClass !== undefined && (typeof options.targetClass !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.targetClass))) {
    fail('targetClass', `must be a Parse class name (got ${JSON.stringify(options.targetClass)})`)
  }
  for (const bound of ['min', 'max'] as const) {
    if (options[bound] !== undefined && !Number.isFinite(options[bound])) fail(bound, 'must be a finite number')
  }
  if (options.min !== undefined && options.max !== undefined && options.min > options.max) fail('min', `is greater than max (${options.min} > ${options.max})`)
  if (options.minLength !== undefined && options.maxLength !== undefined && options.minLength > options.maxLength) fail('minLength', 'is greater than maxLength')
  if (options.index !== undefined && options.index !== true && options.index !== 1 && options.index !== -1) fail('index', 'must be true, 1 or -1')
  if (options.pattern !== undefined) {
    if (typeof options.pattern === 'string') {
      try { new RegExp(options.pattern) } catch (error) { fail('pattern', `is not a valid regular expression: ${(error as Error).message}`) } // eslint-disable-line no-new -- compiling it is the check
    } else if (!(options.pattern instanceof RegExp)) fail('pattern', 'must be a string or a RegExp')
  }
  if (options.enum !== undefined && (!Array.isArray(options.enum) || options.enum.length === 0 || !options.enum.every((v) => typeof v === 'string'))) {
    fail('enum', 'must be a non-empty list of strings')
  }
  if (options.description !== undefined && typeof options.description !== 'string') fail('description', 'must be text')
  if (options.default !== undefined) {
    const problems = valueProblems(name, options.default, { ...options, required: false })
    if (problems.length > 0) fail('default', `does not satisfy the field itself: ${problems.join('; ')}`)
  }
}

/** What is wrong with a value for a field; empty when it is acceptable. Used by validateOrThrow too. */
export function valueProblems (name: string, value: unknown, field: FieldOptions): string[] {
  if (value === undefined || value === null) return field.required ? [`${name} is required`] : []
  const problems: string[] = []
  const expect = (ok: boolean, what: string) => { if (!ok) problems.push(`${name} must be ${what}`) }
  switch (field.type) {
    case 'String': {
      if (typeof value !== 'string') { expect(false, 'text'); break }
      if (field.maxLength !== undefined && value.length > field.maxLength) problems.push(`${name} must be at most ${field.maxLength} characters`)
      if (field.minLength !== undefined && value.length < field.minLength) problems.push(`${name} must be at least ${field.minLength} characters`)
      if (field.enum && !field.enum.includes(value)) problems.push(`${name} must be one of ${field.enum.join(', ')}`)
      if (field.pattern !== undefined && !anchored(field.pattern).test(value)) problems.push(`${name} must match ${String(field.pattern)}`)
      break
    }
    case 'Number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) { expect(false, 'a number'); break }
      if (field.integer && !Number.isInteger(value)) problems.push(`${name} must be a whole number`)
      if (field.min !== undefined && value < field.min) problems.push(`${name} must be at least ${field.min}`)
      if (field.max !== undefined && value > field.max) problems.push(`${name} must be at most ${field.max}`)
      break
    }
    case 'Boolean': expect(typeof value === 'boolean', 'true or false'); break
    case 'Date': expect(value instanceof Date && !Number.isNaN(value.getTime()), 'a date'); break
    case 'Array': expect(Array.isArray(value), 'a list'); break
    case 'Object': expect(typeof value === 'object' && !Array.isArray(value), 'an object'); break
    default: break // Parse itself checks pointers, relations, files, geo values and bytes
  }
  return problems
}

function anchored (pattern: string | RegExp): RegExp {
  const source = typeof pattern === 'string' ? pattern : pattern.source
  return new RegExp(`^(?:${source})$`, typeof pattern === 'string' ? '' : pattern.flags.replace('g', ''))
}

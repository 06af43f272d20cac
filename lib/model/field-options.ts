// @ParseField options: their types, and the checks that run when a model file
// is imported, so a mistake fails at boot with the class, field and option named.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { parseAcceptsClassName, parseAcceptsFieldName, parseSystemClasses } from '../parse/name-rules.js'
import { FieldOptionInvalidError, FieldOptionUnknownError, FieldPatternUnsupportedError, ModelDeclarationError } from '../errors.js'
import { postgresRegex, UnsupportedPatternError } from './postgres-regex.js'
import { dottedName, optionChecker, typed, type OptionProblem } from '../option-schema.js'
import { nameTooLong } from './name-length.js'

export { ModelDeclarationError }

export const FIELD_TYPES = [
  'String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'GeoPoint',
  'Pointer', 'Relation', 'File', 'Bytes', 'Polygon'
] as const

export type FieldType = typeof FIELD_TYPES[number]

const flag = Type.Boolean({ problem: 'must be true or false' })
const count = Type.Integer({ minimum: 0, problem: 'must be a whole number ≥ 0' })
const bound = Type.Number({ problem: 'must be a finite number' })

/** @ParseField's options: their type (FieldOptions) and their shape check come from here; the rules between them are below. */
export const FieldOptionsSchema = Type.Object({
  type: Type.Union(FIELD_TYPES.map((type) => Type.Literal(type)), { problem: `must be one of ${FIELD_TYPES.join(', ')}` }),
  required: Type.Optional(flag),
  /** Value Parse stores when a new object leaves the field unset. */
  default: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.String({ problem: 'must be text' })),
  /** Unique index; a conflicting non-unique index is dropped first. */
  unique: Type.Optional(flag),
  /** Ordered index: true or 1 ascending, -1 descending. */
  index: Type.Optional(Type.Union([Type.Literal(true), Type.Literal(1), Type.Literal(-1)], { problem: 'must be true, 1 or -1' })),
  /** Geospatial (2dsphere) index; GeoPoint only. */
  geo: Type.Optional(flag),
  /** Expiry index; Date only. */
  ttlSeconds: Type.Optional(count),
  /** String only. */
  maxLength: Type.Optional(count),
  minLength: Type.Optional(count),
  /** Regular expression the whole value must match; String only. (Any object passes the shape; it must be a RegExp, checked below.) */
  pattern: Type.Optional(typed<string | RegExp>(Type.Union([Type.String(), Type.Object({})], { problem: 'must be a string or a RegExp' }))),
  /** List of allowed values; String only. */
  enum: Type.Optional(typed<readonly string[]>(Type.Array(Type.String(), { minItems: 1, problem: 'must be a non-empty list of strings' }))),
  /** Number only. */
  min: Type.Optional(bound),
  max: Type.Optional(bound),
  /** Number only: whole numbers. */
  integer: Type.Optional(flag),
  /** Pointer and Relation: required. Array: elements are pointers to this class. */
  targetClass: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', problem: 'must be a Parse class name' }))
}, { additionalProperties: false, unknownKey: 'is not a field option', problem: "must be an object such as { type: 'String' }" })

export type FieldOptions = Static<typeof FieldOptionsSchema>

const checkShape = optionChecker(FieldOptionsSchema)

export interface FieldDefinition extends FieldOptions {
  name: string
  /** Set for the field declared by @ParseVersionField(). */
  version?: boolean
}

/** hasOwnProperty, toString, valueOf, constructor…: every object has them. */
const OBJECT_MEMBERS = new Set(Object.getOwnPropertyNames(Object.prototype))

/** Attribute names Parse owns, or that would shadow a Parse.Object member. */
const RESERVED = new Set(['objectId', 'id', 'createdAt', 'updatedAt', 'ACL', 'className', 'attributes', 'sessionToken', 'authData'])

export function checkFieldOptions (className: string, name: string, options: FieldOptions, parseMembers: Set<string>): void {
  const where = `@ParseField ${className}.${name}`
  const fail = (option: string, problem: string, kind: OptionProblem['kind'] = 'invalid'): never => {
    const message = option === '' ? `${where}: options ${problem}` : `${where}: option "${option}" ${problem}`
    throw kind === 'unknown' ? new FieldOptionUnknownError(message) : new FieldOptionInvalidError(message)
  }
  if (OBJECT_MEMBERS.has(name)) {
    throw new ModelDeclarationError(`${where}: "${name}" is a member of every JavaScript object (Object.prototype); a field of that name would replace it on each instance. Choose another field name`)
  }
  if (RESERVED.has(name) || parseMembers.has(name)) {
    throw new ModelDeclarationError(`${where}: "${name}" is reserved by Parse (it would clash with Parse.Object); choose another field name`)
  }
  // Parse's own rule (SchemaController.fieldNameIsValid): its migration would refuse anything else at boot.
  if (!parseAcceptsFieldName(name)) {
    throw new ModelDeclarationError(`${where}: Parse refuses the field name "${name}": a field name starts with a letter and holds only letters, digits and _ (and is not "length")`)
  }
  const tooLong = nameTooLong('field', name)
  if (tooLong) throw new ModelDeclarationError(`${where}: ${tooLong}`)
  const shape = checkShape(options)
  if (shape) fail(dottedName(shape.path), shape.problem, shape.kind)
  // Rules between options, and what the shape cannot say.
  const { type } = options
  const only = (option: keyof FieldOptions, types: FieldType[]) => {
    if (options[option] !== undefined && !types.includes(type)) fail(option, `is only for ${types.join('/')} fields (this field is ${type})`)
  }
  only('maxLength', ['String']); only('minLength', ['String']); only('pattern', ['String']); only('enum', ['String'])
  only('min', ['Number']); only('max', ['Number']); only('integer', ['Number'])
  only('geo', ['GeoPoint']); only('ttlSeconds', ['Date'])
  only('targetClass', ['Pointer', 'Relation', 'Array'])
  if ((type === 'Pointer' || type === 'Relation') && !options.targetClass) fail('targetClass', `is required for type ${type}`)
  // Parse's own rule: a class of the application, or one of its system classes (_User, _Role…).
  if (options.targetClass !== undefined && !parseAcceptsClassName(options.targetClass)) {
    fail('targetClass', `names "${options.targetClass}", which is not a class Parse can point to (an application class name, or one of ${parseSystemClasses().join(', ')})`)
  }
  if (options.min !== undefined && options.max !== undefined && options.min > options.max) fail('min', `is greater than max (${options.min} > ${options.max})`)
  if (options.minLength !== undefined && options.maxLength !== undefined && options.minLength > options.maxLength) fail('minLength', 'is greater than maxLength')
  if (typeof options.pattern === 'string') {
    try { new RegExp(options.pattern) } catch (error) { fail('pattern', `is not a valid regular expression: ${(error as Error).message}`) } // eslint-disable-line no-new -- compiling it is the check
  } else if (options.pattern !== undefined && !(options.pattern instanceof RegExp)) fail('pattern', 'must be a string or a RegExp')
  if (options.pattern !== undefined) refuseUntranslatablePattern(where, options.pattern)
  if (options.default !== undefined) {
    const problems = valueProblems(name, options.default, { ...options, required: false })
    if (problems.length > 0) fail('default', `does not satisfy the field itself: ${problems.join('; ')}`)
  }
}

/** The database checks the pattern too (a PostgreSQL CHECK): one it cannot read the same way is refused now, not at the first write. */
function refuseUntranslatablePattern (where: string, pattern: string | RegExp): void {
  try {
    postgresRegex(pattern)
  } catch (error) {
    if (!(error instanceof UnsupportedPatternError)) throw error
    throw new FieldPatternUnsupportedError(`${where}: option "pattern" ${String(pattern)} uses ${error.message}, which the database's check cannot express; rewrite the pattern without it, or check the value in a @BeforeSave hook`)
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

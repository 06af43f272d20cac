// @ParseClass options, checked when the model file is imported.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import type { FieldDefinition } from './field-options.js'
import { parseAcceptsClassName, parseSystemClasses } from '../parse/name-rules.js'
import { ClassOptionInvalidError, ClassOptionUnknownError, ModelDeclarationError } from '../errors.js'
import { optionChecker, typed, type OptionProblem, type OptionStep } from '../option-schema.js'
import { nameTooLong } from './name-length.js'

const CLP_OPERATIONS = ['find', 'get', 'count', 'create', 'update', 'delete', 'addField'] as const
export type ClpOperation = typeof CLP_OPERATIONS[number]
/** Subject → true, e.g. { '*': true } or { 'role:Admin': true, requiresAuthentication: true }. */
export type ClpSubjects = Record<string, boolean>

const subjects = typed<ClpSubjects>(Type.Record(Type.String(), Type.Literal(true, { problem: 'must be true (leave a subject out to deny it)' }), {
  problem: "must map subjects to true, e.g. { '*': true } or { [roleKey('Admin')]: true }; {} denies everyone"
}))

export const CompoundIndexSchema = Type.Object({
  fields: Type.Array(Type.String(), { minItems: 1, problem: 'must be a non-empty list of field names' }),
  unique: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  sparse: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  /** Only rows matching this filter are indexed (MongoDB partialFilterExpression; PostgreSQL WHERE). */
  partial: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { problem: 'must be a filter object' })),
  /** A text index over these String fields (one per class). */
  text: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  name: Type.Optional(Type.String({ problem: 'must be text' }))
}, { problem: 'must be { fields: [...] }' })

export type CompoundIndex = Static<typeof CompoundIndexSchema>

/** @ParseClass's options: their type (ClassOptions) and their shape check come from here; the rules against the declared fields are below. */
export const ClassOptionsSchema = Type.Object({
  description: Type.Optional(Type.String({ problem: 'must be text' })),
  clp: Type.Optional(typed<Partial<Record<ClpOperation, ClpSubjects>>>(Type.Object(
    Object.fromEntries(CLP_OPERATIONS.map((operation) => [operation, Type.Optional(subjects)])),
    { additionalProperties: false, unknownKey: 'is not an operation', problem: 'must map operations to subjects' }
  ))),
  compoundIndexes: Type.Optional(Type.Array(CompoundIndexSchema, { problem: 'must be a list of { fields: [...] }' })),
  /** Parse protectedFields: subject → field names hidden from that subject. */
  protectedFields: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String(), { problem: 'must be a list of field names' }), {
    problem: 'must map subjects to lists of field names'
  })),
  /** PostgreSQL: indexes that serve the row-ACL read filter when a user can read few of the rows (nothing on MongoDB). */
  aclIndex: Type.Optional(Type.Boolean({ problem: 'must be true or false' }))
}, { additionalProperties: false, unknownKey: 'is not a class option', problem: 'must be an object' })

export type ClassOptions = Static<typeof ClassOptionsSchema>

const checkShape = optionChecker(ClassOptionsSchema)
const BUILT_IN_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt'])
/** Parse's own rule (SchemaController.classNameIsValid), without its internal join tables. */
const validClassName = (name: string) => parseAcceptsClassName(name) && !name.startsWith('_Join:')

/** How @ParseClass messages name a nested option: clp.find['*'], compoundIndexes[0].fields. */
function bracketedName (path: OptionStep[]): string {
  return path.map((step, i) => step.via === 'item' ? `[${step.key}]` : step.via === 'entry' ? `['${step.key}']` : i === 0 ? step.key : `.${step.key}`).join('')
}

/** The shape problem as @ParseClass words it: "shards" is not a class option, clp: "read" is not an operation, clp.find['*'] must be true. */
function classProblem ({ kind, path, problem }: OptionProblem): string {
  if (kind === 'unknown') {
    const key = `"${path[path.length - 1].key}" ${problem}`
    return path.length === 1 ? key : `${bracketedName(path.slice(0, -1))}: ${key}`
  }
  if (path.length === 0) return `options ${problem}`
  return path.length === 1 ? `"${path[0].key}" ${problem}` : `${bracketedName(path)} ${problem}`
}

export function checkClassOptions (className: string, jsName: string, options: ClassOptions, fields: Map<string, FieldDefinition>): void {
  const where = `@ParseClass('${className}') on ${jsName}`
  const fail = (problem: string, kind: OptionProblem['kind'] = 'invalid'): never => {
    throw kind === 'unknown' ? new ClassOptionUnknownError(`${where}: ${problem}`) : new ClassOptionInvalidError(`${where}: ${problem}`)
  }
  if (typeof className !== 'string' || !validClassName(className)) {
    throw new ModelDeclarationError(`${where}: Parse refuses the class name: a class name starts with a letter and holds only letters, digits and _ (or is a Parse system class: ${parseSystemClasses().join(', ')})`)
  }
  const tooLong = nameTooLong('class', className)
  if (tooLong) throw new ModelDeclarationError(`${where}: ${tooLong}`)
  const shape = checkShape(options)
  if (shape) fail(classProblem(shape), shape.kind)
  // Rules against the declared fields.
  const known = (field: string) => fields.has(field) || BUILT_IN_FIELDS.has(field)
  if (options.compoundIndexes !== undefined) {
    let textIndexes = 0
    for (const [i, index] of options.compoundIndexes.entries()) {
      for (const field of index.fields) {
        if (!known(field)) fail(`compoundIndexes[${i}] names "${field}", which is not a declared field`)
      }
      if (index.text) {
        textIndexes++
        for (const field of index.fields) {
          if (fields.get(field)?.type !== 'String') fail(`compoundIndexes[${i}] is a text index, but "${field}" is not a String field`)
        }
      }
    }
    if (textIndexes > 1) fail('only one text index per class is possible')
    checkIndexNames(options.compoundIndexes, fail)
    for (const [i, index] of options.compoundIndexes.entries()) {
      for (const [field, condition] of Object.entries(index.partial ?? {})) {
        if (!known(field)) fail(`compoundIndexes[${i}].partial names "${field}", which is not a declared field`)
        const problem = partialProblem(condition)
        if (problem) fail(`compoundIndexes[${i}].partial.${field}: ${problem}`)
      }
    }
  }
}

/** Two compound indexes under one name: the second would never be made. */
function checkIndexNames (indexes: CompoundIndex[], fail: (problem: string) => never): void {
  const seen = new Map<string, number>()
  for (const [i, index] of indexes.entries()) {
    // Unnamed indexes are named after their fields and kind: two alike collide too.
    const name = index.name ?? `${index.text ? 'text ' : ''}(${index.fields.join(', ')})`
    const earlier = seen.get(name)
    if (earlier !== undefined) fail(`compoundIndexes[${i}] ${index.name ? `has the name "${name}" of` : 'is the same index as'} compoundIndexes[${earlier}]; give each index its own name`)
    seen.set(name, i)
  }
}

/** Operators a partial filter may use: what both databases can index by. */
const PARTIAL_OPERATORS = new Set(['$exists', '$gt', '$gte', '$lt', '$lte', '$ne', '$in'])

function partialProblem (condition: unknown): string | undefined {
  if (condition === null || typeof condition !== 'object' || condition instanceof Date) return undefined
  if (Array.isArray(condition)) return 'must be a value or { $operator: value }, not a list'
  for (const operator of Object.keys(condition)) {
    if (!PARTIAL_OPERATORS.has(operator)) return `${operator} cannot filter a partial index (use a value, $exists, $gt, $gte, $lt, $lte, $ne or $in)`
    if (operator === '$in' && !Array.isArray((condition as Record<string, unknown>)[operator])) return '$in must be a list'
  }
  return undefined
}

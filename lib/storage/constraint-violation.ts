// A write the database refused because it breaks a declared field rule (a
// PostgreSQL CHECK constraint, SQLSTATE 23514; a MongoDB $jsonSchema
// validator, code 121) is a validation failure: Parse error 142, worded as
// validateOrThrow words it. Recognised here, on the raw error, before Parse
// turns it into an opaque code 1.
import Parse from 'parse/node'
import { valueProblems, type FieldDefinition } from '../model/field-options.js'
import { modelByName } from '../model/registry.js'
import { checkConstraintName } from './postgres/identifiers.js'

const CHECK_VIOLATION = '23514'
const DOCUMENT_VALIDATION_FAILURE = 121

interface DatabaseError {
  code?: unknown
  /** node-postgres: the constraint and table the row broke. */
  constraint?: unknown
  table?: unknown
  /** MongoDB 5+: which $jsonSchema rules the document broke. */
  errInfo?: { details?: unknown }
}

/**
 * The 142 for a refused write, or undefined when the error is something else.
 * `values` is what the write sets (the object created, or the update), to name
 * the broken rule from the value; without it, the field's rules are named.
 */
export function constraintViolation (error: unknown, className: string, values: unknown): InstanceType<typeof Parse.Error> | undefined {
  const raw = error as DatabaseError | null
  if (raw === null || typeof raw !== 'object') return undefined
  let fields: string[]
  if (raw.code === CHECK_VIOLATION) {
    const table = typeof raw.table === 'string' ? raw.table : className
    const constraint = typeof raw.constraint === 'string' ? raw.constraint : undefined
    const field = constraint === undefined ? undefined : fieldOfConstraint(table, constraint)
    // A CHECK the kit did not make (a DBA's, or one of a class no model declares any more) is still the row's fault.
    if (!field) return new Parse.Error(Parse.Error.VALIDATION_ERROR, `${table} is invalid: the row breaks the database's CHECK constraint ${constraint ?? '(unnamed)'}`)
    fields = [field]
    className = table
  } else if (raw.code === DOCUMENT_VALIDATION_FAILURE) {
    fields = fieldsOfValidation(raw.errInfo?.details)
  } else {
    return undefined
  }
  const model = modelByName(className)
  const declared = (fields.length > 0 ? fields : [...model?.fields.keys() ?? []]).map((name) => model?.fields.get(name)).filter((field): field is FieldDefinition => field !== undefined)
  const problems = declared.flatMap((field) => problemsOf(field, values))
  // The database still holds a rule the declarations no longer have (a removed field's: the next boot drops it; a removed class's: kept).
  if (problems.length === 0) problems.push(...fields.map((field) => `${field} breaks a rule the database still holds${typeof raw.constraint === 'string' ? ` (${raw.constraint})` : ''}`))
  if (problems.length === 0) problems.push('the document breaks the collection\'s validator')
  return new Parse.Error(Parse.Error.VALIDATION_ERROR, `${className} is invalid: ${problems.join('; ')}`)
}

/** The field whose CHECK constraint this is, by the name the kit gives it (shortened past 63 bytes). */
function fieldOfConstraint (table: string, constraint: string): string | undefined {
  for (const name of modelByName(table)?.fields.keys() ?? []) {
    if (checkConstraintName(table, name) === constraint) return name
  }
  // A field no longer declared whose rule the next boot drops: `<Class>_<field>_check`.
  const prefix = `${table}_`
  if (!constraint.startsWith(prefix) || !constraint.endsWith('_check')) return undefined
  return constraint.slice(prefix.length, -'_check'.length)
}

/** Field names from MongoDB's errInfo.details (schemaRulesNotSatisfied → propertiesNotSatisfied). */
function fieldsOfValidation (details: unknown): string[] {
  const names: string[] = []
  const rules = (details as { schemaRulesNotSatisfied?: unknown } | undefined)?.schemaRulesNotSatisfied
  for (const rule of Array.isArray(rules) ? rules : []) {
    const properties = (rule as { propertiesNotSatisfied?: unknown }).propertiesNotSatisfied
    for (const property of Array.isArray(properties) ? properties : []) {
      const name = (property as { propertyName?: unknown }).propertyName
      if (typeof name === 'string') names.push(name.startsWith('_p_') ? name.slice(3) : name)
    }
  }
  return names
}

/** What the written value breaks; when the value is not known (an increment), every rule of the field. */
function problemsOf (field: FieldDefinition, values: unknown): string[] {
  const value = (values as Record<string, unknown> | null)?.[field.name]
  if (value !== undefined && value !== null && typeof value !== 'object') {
    const problems = valueProblems(field.name, value, { ...field, required: false })
    if (problems.length > 0) return problems
  }
  return ruleWords(field)
}

/** Every rule of a field, in validateOrThrow's words. */
export function ruleWords (field: FieldDefinition): string[] {
  const name = field.name
  const words: string[] = []
  if (field.maxLength !== undefined) words.push(`${name} must be at most ${field.maxLength} characters`)
  if (field.minLength !== undefined) words.push(`${name} must be at least ${field.minLength} characters`)
  if (field.enum) words.push(`${name} must be one of ${field.enum.join(', ')}`)
  if (field.pattern !== undefined) words.push(`${name} must match ${String(field.pattern)}`)
  if (field.integer) words.push(`${name} must be a whole number`)
  if (field.min !== undefined) words.push(`${name} must be at least ${field.min}`)
  if (field.max !== undefined) words.push(`${name} must be at most ${field.max}`)
  return words
}

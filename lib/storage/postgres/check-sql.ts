// The SQL text of a field's CHECK constraint (enum, min/max, integer,
// maxLength/minLength, pattern), its name, and its rules in words. Text only:
// nothing here talks to the database.
import type { FieldDefinition } from '../../model/field-options.js'
import type { ModelDefinition } from '../../model/registry.js'
import { postgresRegex, type PostgresRegex } from '../../model/postgres-regex.js'
import { checkConstraintName } from './identifiers.js'

type Format = (query: string, values?: unknown) => string

/** The CHECK constraint of each constrained field: its name and the exact SQL. */
export function postgresConstraintCommands (models: ModelDefinition[], format: Format): Array<{ className: string, name: string, command: string }> {
  const commands: Array<{ className: string, name: string, command: string }> = []
  for (const model of models) {
    for (const field of model.fields.values()) {
      const check = checkExpression(field, format)
      if (!check) continue
      const name = checkConstraintName(model.className, field.name)
      commands.push({ className: model.className, name, command: format(`ALTER TABLE $1:name ADD CONSTRAINT $2:name CHECK (${check})`, [model.className, name]) })
    }
  }
  return commands
}

/** The field's database rules in words: "enum a,b; maxLength 10; min 0". */
export function constraintRule (field: FieldDefinition): string {
  const rules: string[] = []
  if (field.type === 'String') {
    if (field.enum) rules.push(`enum ${field.enum.join(',')}`)
    if (field.maxLength !== undefined) rules.push(`maxLength ${field.maxLength}`)
    if (field.minLength !== undefined) rules.push(`minLength ${field.minLength}`)
    if (field.pattern !== undefined) rules.push(`pattern ${String(field.pattern)}`)
  }
  if (field.type === 'Number') {
    if (field.min !== undefined) rules.push(`min ${field.min}`)
    if (field.max !== undefined) rules.push(`max ${field.max}`)
    if (field.integer) rules.push('integer')
  }
  return rules.join('; ')
}

/** A String field's `pattern` as the whole-value regular expression PostgreSQL checks, in its dialect. */
export function postgresPattern (field: FieldDefinition): PostgresRegex | undefined {
  if (field.type !== 'String' || field.pattern === undefined) return undefined
  return postgresRegex(field.pattern)
}

export function checkExpression (field: FieldDefinition, format: (query: string, values?: unknown) => string): string | undefined {
  const column = format('$1:name', [field.name])
  const rules: string[] = []
  if (field.type === 'String') {
    if (field.enum) rules.push(format(`${column} IN ($1:csv)`, [field.enum]))
    if (field.maxLength !== undefined) rules.push(`char_length(${column}) <= ${field.maxLength}`)
    if (field.minLength !== undefined) rules.push(`char_length(${column}) >= ${field.minLength}`)
    const pattern = postgresPattern(field)
    if (pattern !== undefined) rules.push(format(`${column} ${pattern.caseInsensitive ? '~*' : '~'} $1`, [pattern.source]))
  }
  if (field.type === 'Number') {
    if (field.min !== undefined) rules.push(`${column} >= ${Number(field.min)}`)
    if (field.max !== undefined) rules.push(`${column} <= ${Number(field.max)}`)
    if (field.integer) rules.push(`${column} = trunc(${column})`)
  }
  return rules.length > 0 ? `${column} IS NULL OR (${rules.join(' AND ')})` : undefined
}

// What the next boot's schema migration (Parse's Defined Schemas) would change
// in the stored schema: classes and fields added, fields dropped or retyped,
// class-level permissions replaced. Pure: the stored schema is passed in.
import { isParseDefaultColumn } from '../parse/schema-enforcement.js'
import type { ParseClassSchema, ParseSchemaField } from './schema-config.js'

export interface StoredClass {
  className: string
  fields: Record<string, StoredField>
  classLevelPermissions?: Record<string, unknown>
}

export type PlanSubject = 'class' | 'field' | 'permission' | 'index' | 'constraint'

export interface PlanChange {
  className: string
  subject: PlanSubject
  /** What is added, dropped or changed, e.g. "due (Date)", "find", "Mig_unique_sku created: unique (sku)". */
  detail: string
  /** The field a field change is about. */
  field?: string
  /** Data or a guarantee is lost (a dropped field or unique index, a type change). */
  destructive: boolean
  /** The boot refuses this change, and then applies none of the others (a type change without recreateModifiedFields). */
  refused?: boolean
  /** What the stored rows say about the change: "will fail: 1 value is held by 2 rows". */
  dataCheck?: string
  /** What PostgreSQL will run for it (`fpk schema plan --sql`). */
  sql?: string[]
}

export interface StoredField { type: string, targetClass?: string, required?: boolean, defaultValue?: unknown }

export interface MigrationOptions {
  /** Parse drops stored fields that are not declared. */
  deleteExtraFields?: boolean
  /** Parse drops and recreates a field whose type changed (its data is lost); otherwise the boot fails. */
  recreateModifiedFields?: boolean
  /** false: the boot creates no class and no field (schema.strict: false). */
  strict?: boolean
}

export function diffSchema (definitions: ParseClassSchema[], stored: StoredClass[], options: MigrationOptions = {}): PlanChange[] {
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  const changes: PlanChange[] = []
  for (const definition of definitions) {
    const { className } = definition
    const found = byName.get(className)
    const fields = Object.entries(definition.fields ?? {}).filter(([name]) => !isParseColumn(className, name))
    // strict: false creates nothing at boot (model/schema-boot.ts): only what is stored is reconciled.
    const creates = options.strict !== false
    if (!found) {
      if (!creates || (fields.length === 0 && className.startsWith('_'))) continue
      changes.push({ className, subject: 'class', detail: `class created${fields.length > 0 ? ` with ${fields.map(([name, field]) => `${name} (${describeDeclared(field)})`).join(', ')}` : ''}`, destructive: false })
      continue
    }
    for (const [name, field] of fields) {
      const actual = found.fields[name]
      if (!actual) {
        if (creates) changes.push({ className, subject: 'field', field: name, detail: `field added: ${name} (${describeDeclared(field)})`, destructive: false })
      } else if (describe(actual) !== describe(field)) {
        const how = options.recreateModifiedFields ? 'dropped and recreated, its values lost' : 'the boot fails until recreateModifiedFields: true or the field is renamed'
        changes.push({ className, subject: 'field', field: name, detail: `field type changed: ${name} ${describe(actual)} → ${describe(field)} (${how})`, destructive: true, refused: !options.recreateModifiedFields })
      } else {
        changes.push(...paramChanges(className, name, actual, field))
      }
    }
    if (options.deleteExtraFields) {
      for (const [name, field] of Object.entries(found.fields)) {
        if (isParseColumn(className, name) || definition.fields?.[name] !== undefined) continue
        changes.push({ className, subject: 'field', field: name, detail: `field dropped: ${name} (${describe(field)}), its values lost`, destructive: true })
      }
    }
    for (const [operation, expected] of Object.entries(definition.classLevelPermissions ?? {})) {
      const actual = found.classLevelPermissions?.[operation]
      if (canonical(actual ?? {}) !== canonical(expected)) {
        changes.push({ className, subject: 'permission', detail: `class-level permission ${operation}: ${canonical(actual ?? null)} → ${canonical(expected)}`, destructive: false })
      }
    }
  }
  return changes
}

/** required and defaultValue: Parse rewrites the field when either differs from what is stored. */
function paramChanges (className: string, name: string, actual: StoredField, field: ParseSchemaField): PlanChange[] {
  const changes: PlanChange[] = []
  if (Boolean(actual.required) !== Boolean(field.required)) {
    changes.push({ className, subject: 'field', field: name, detail: field.required ? `field required: ${name} (was optional)` : `field no longer required: ${name}`, destructive: false })
  }
  if (canonical(actual.defaultValue ?? null) !== canonical(field.defaultValue ?? null)) {
    changes.push({ className, subject: 'field', field: name, detail: `field default changed: ${name} ${canonical(actual.defaultValue ?? null)} → ${canonical(field.defaultValue ?? null)}`, destructive: false })
  }
  return changes
}

function describeDeclared (field: ParseSchemaField): string {
  return `${describe(field)}${field.required ? ', required' : ''}`
}

function isParseColumn (className: string, field: string): boolean {
  return isParseDefaultColumn(className, field)
}

function describe (field: { type: string, targetClass?: string }): string {
  return field.targetClass ? `${field.type}<${field.targetClass}>` : field.type
}

/** JSON with keys sorted, so that the order Parse stored them in does not count. */
function canonical (value: unknown): string {
  const sorted = (v: unknown): unknown => v === null || typeof v !== 'object' || Array.isArray(v)
    ? v
    : Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, inner]) => [k, sorted(inner)]))
  return JSON.stringify(sorted(value))
}

/** The plan as lines a person reads in CI: one per change, destructive ones marked, then a summary; with `sql`, the statements under each change. */
export function formatPlan (changes: PlanChange[], options: { sql?: boolean } = {}): string {
  if (changes.length === 0) return 'No changes: the database matches the declarations.\n'
  const lines: string[] = []
  for (const change of changes) {
    lines.push(`${change.destructive ? '! ' : '  '}${change.className}: ${change.detail}${change.dataCheck ? ` (${change.dataCheck})` : ''}${change.destructive ? '  [destructive]' : ''}`)
    if (options.sql) for (const statement of change.sql ?? []) lines.push(`      ${statement}`)
  }
  const destructive = changes.filter((change) => change.destructive).length
  lines.push('', `${changes.length} change${changes.length === 1 ? '' : 's'} at the next boot${destructive > 0 ? `, ${destructive} destructive (marked !)` : ''}.`)
  const refused = changes.filter((change) => change.refused)
  if (refused.length > 0) lines.push(`The boot will refuse ${refused.length === 1 ? 'the type change' : `${refused.length} type changes`} and then apply none of the changes above.`)
  const failing = changes.filter((change) => change.dataCheck?.startsWith('will fail')).length
  if (failing > 0) lines.push(`${failing} of them will fail on the stored rows (see "will fail").`)
  return lines.join('\n') + '\n'
}

/** 0 nothing changes, 1 something changes, 2 something destructive: a pipeline can stop before the deploy. */
export function planExitCode (changes: PlanChange[]): 0 | 1 | 2 {
  if (changes.some((change) => change.destructive)) return 2
  return changes.length > 0 ? 1 : 0
}

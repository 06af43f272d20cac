// What the next boot's schema migration (Parse's Defined Schemas) would change
// in the stored schema: classes and fields added, fields dropped or retyped,
// class-level permissions replaced. Pure: the stored schema is passed in.
import { isParseDefaultColumn } from '../parse/schema-enforcement.js'
import type { ParseClassSchema } from './schema-config.js'

export interface StoredClass {
  className: string
  fields: Record<string, { type: string, targetClass?: string }>
  classLevelPermissions?: Record<string, unknown>
}

export type PlanSubject = 'class' | 'field' | 'permission' | 'index' | 'constraint'

export interface PlanChange {
  className: string
  subject: PlanSubject
  /** What is added, dropped or changed, e.g. "due (Date)", "find", "Mig_unique_sku created: unique (sku)". */
  detail: string
  /** Data or a guarantee is lost (a dropped field or unique index, a type change). */
  destructive: boolean
}

export interface MigrationOptions {
  /** Parse drops stored fields that are not declared. */
  deleteExtraFields?: boolean
  /** Parse drops and recreates a field whose type changed (its data is lost); otherwise the boot fails. */
  recreateModifiedFields?: boolean
}

export function diffSchema (definitions: ParseClassSchema[], stored: StoredClass[], options: MigrationOptions = {}): PlanChange[] {
  const byName = new Map(stored.map((schema) => [schema.className, schema]))
  const changes: PlanChange[] = []
  for (const definition of definitions) {
    const { className } = definition
    const found = byName.get(className)
    const fields = Object.entries(definition.fields ?? {}).filter(([name]) => !isParseColumn(className, name))
    if (!found) {
      if (fields.length === 0 && className.startsWith('_')) continue
      changes.push({ className, subject: 'class', detail: `class created${fields.length > 0 ? ` with ${fields.map(([name, field]) => `${name} (${describe(field)})`).join(', ')}` : ''}`, destructive: false })
      continue
    }
    for (const [name, field] of fields) {
      const actual = found.fields[name]
      if (!actual) {
        changes.push({ className, subject: 'field', detail: `field added: ${name} (${describe(field)})`, destructive: false })
      } else if (describe(actual) !== describe(field)) {
        const how = options.recreateModifiedFields ? 'dropped and recreated, its values lost' : 'the boot fails until recreateModifiedFields: true or the field is renamed'
        changes.push({ className, subject: 'field', detail: `field type changed: ${name} ${describe(actual)} → ${describe(field)} (${how})`, destructive: true })
      }
    }
    if (options.deleteExtraFields) {
      for (const [name, field] of Object.entries(found.fields)) {
        if (isParseColumn(className, name) || definition.fields?.[name] !== undefined) continue
        changes.push({ className, subject: 'field', detail: `field dropped: ${name} (${describe(field)}), its values lost`, destructive: true })
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

/** The plan as lines a person reads in CI: one per change, destructive ones marked, then a summary. */
export function formatPlan (changes: PlanChange[]): string {
  if (changes.length === 0) return 'No changes: the database matches the declarations.\n'
  const lines = changes.map((change) => `${change.destructive ? '! ' : '  '}${change.className}: ${change.detail}${change.destructive ? '  [destructive]' : ''}`)
  const destructive = changes.filter((change) => change.destructive).length
  lines.push('', `${changes.length} change${changes.length === 1 ? '' : 's'} at the next boot${destructive > 0 ? `, ${destructive} destructive (marked !)` : ''}.`)
  return lines.join('\n') + '\n'
}

/** 0 nothing changes, 1 something changes, 2 something destructive: a pipeline can stop before the deploy. */
export function planExitCode (changes: PlanChange[]): 0 | 1 | 2 {
  if (changes.some((change) => change.destructive)) return 2
  return changes.length > 0 ? 1 : 0
}

// The indexes and constraints the declarations ask for, before any database
// is involved: one plan that the PostgreSQL and MongoDB appliers both follow.
import { allModels, type ModelDefinition } from '../../model/registry.js'
import type { FieldDefinition } from '../../model/field-options.js'

export type IndexKind = 'unique' | 'ordered' | 'geo' | 'ttl' | 'compound' | 'text' | 'acl'

export interface IndexField {
  name: string
  /** Declared type ('createdAt'/'updatedAt'/'objectId' are built in). */
  type: string
  direction: 1 | -1
}

export interface IndexSpec {
  className: string
  /** Stable name, the same on both databases, e.g. Order_customer_1_createdAt_1. */
  name: string
  kind: IndexKind
  fields: IndexField[]
  unique?: boolean
  sparse?: boolean
  partial?: Record<string, unknown>
  ttlSeconds?: number
  /** Unique where the stored rows allow it; over duplicate values a plain index is made instead, with a warning. */
  plainIfDuplicates?: boolean
}

export interface IndexReport {
  className: string
  name: string
  kind: IndexKind | 'validator'
  /** replaced: it differed from the declaration; dropped: the kit made it and nothing declares it any more. */
  status: 'created' | 'replaced' | 'dropped' | 'exists' | 'failed' | 'unsupported' | 'printed'
  /** The equivalent command (SQL or mongosh), for people who apply it by hand. */
  command?: string
  detail?: string
  /** Done, but not as declared (a unique index made plain over duplicates): logged as a warning. */
  warn?: boolean
}

const BUILT_IN: Record<string, string> = { createdAt: 'Date', updatedAt: 'Date', objectId: 'String' }

export function planIndexes (models: ModelDefinition[] = allModels()): IndexSpec[] {
  const specs: IndexSpec[] = []
  for (const model of models) {
    const typeOf = (name: string) => model.fields.get(name)?.type ?? BUILT_IN[name] ?? 'String'
    for (const field of model.fields.values()) specs.push(...fieldIndexes(model.className, field))
    for (const index of model.options.compoundIndexes ?? []) {
      const fields = index.fields.map((name): IndexField => ({ name, type: typeOf(name), direction: 1 }))
      const kind: IndexKind = index.text ? 'text' : 'compound'
      specs.push({
        className: model.className,
        name: index.name ?? indexName(model.className, fields, kind),
        kind,
        fields,
        unique: index.unique,
        sparse: index.sparse,
        partial: index.partial
      })
    }
    if (model.options.aclIndex) specs.push(...aclIndexes(model.className))
  }
  return specs
}

/**
 * The row-ACL read filter ("_rperm" IS NULL OR "_rperm" && ARRAY[…]) as two
 * indexes PostgreSQL combines (BitmapOr): a GIN index for the overlap and a
 * partial one for the rows without an ACL.
 */
function aclIndexes (className: string): IndexSpec[] {
  return [
    { className, name: `${className}__rperm_gin`, kind: 'acl', fields: [{ name: '_rperm', type: 'Array', direction: 1 }] },
    { className, name: `${className}__rperm_null`, kind: 'acl', fields: [{ name: 'objectId', type: 'String', direction: 1 }], partial: { _rperm: null } }
  ]
}

function fieldIndexes (className: string, field: FieldDefinition): IndexSpec[] {
  const specs: IndexSpec[] = []
  const one = (kind: IndexKind, direction: 1 | -1 = 1, extra: Partial<IndexSpec> = {}): IndexSpec => {
    const fields = [{ name: field.name, type: field.type, direction }]
    return { className, name: indexName(className, fields, kind), kind, fields, ...extra }
  }
  if (field.unique) specs.push(one('unique', 1, { unique: true }))
  if (field.index !== undefined && !field.unique) specs.push(one('ordered', field.index === -1 ? -1 : 1))
  if (field.geo) specs.push(one('geo'))
  if (field.ttlSeconds !== undefined) specs.push(one('ttl', 1, { ttlSeconds: field.ttlSeconds }))
  return specs
}

export function indexName (className: string, fields: IndexField[], kind: IndexKind): string {
  const suffix = kind === 'geo' ? '_2dsphere' : kind === 'text' ? '_text' : kind === 'ttl' ? '_ttl' : kind === 'unique' ? '_unique' : ''
  return `${className}_${fields.map((field) => `${field.name}_${field.direction}`).join('_')}${suffix}`
}

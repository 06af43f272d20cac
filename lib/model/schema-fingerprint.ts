// A fingerprint of everything the declarations ask of the database: the
// classes, fields and permissions Parse migrates, and the field rules and
// indexes the kit makes. Two processes with the same model files get the same
// fingerprint; any change to what the database would hold gives a new one.
import { createHash } from 'node:crypto'
import type { ParseClassSchema } from './schema-config.js'
import type { ModelDefinition } from './registry.js'

export interface FingerprintInput {
  definitions: ParseClassSchema[]
  models: ModelDefinition[]
  /** Migration options that change what a boot does to the stored schema. */
  deleteExtraFields?: boolean
  recreateModifiedFields?: boolean
}

export function fingerprintDeclarations (input: FingerprintInput): string {
  const models = input.models.map((model) => ({ className: model.className, options: model.options, fields: [...model.fields.values()], versionField: model.versionField }))
  const value = {
    definitions: [...input.definitions].sort((a, b) => a.className.localeCompare(b.className)),
    models: models.sort((a, b) => a.className.localeCompare(b.className)),
    deleteExtraFields: input.deleteExtraFields === true,
    recreateModifiedFields: input.recreateModifiedFields === true
  }
  return createHash('sha256').update(canonical(value)).digest('hex')
}

/** JSON with sorted keys; a RegExp by its source and flags, a function (a validator in code) by nothing the database holds. */
function canonical (value: unknown): string {
  const plain = (v: unknown): unknown => {
    if (v instanceof RegExp) return `/${v.source}/${v.flags}`
    if (typeof v === 'function') return 'function'
    if (typeof v === 'bigint') return `${v}n`
    if (v instanceof Map) return [...v.entries()].map(([k, inner]) => [String(k), plain(inner)])
    if (v instanceof Set) return [...v].map(plain)
    if (Array.isArray(v)) return v.map(plain)
    if (v === null || typeof v !== 'object') return v
    return Object.fromEntries(Object.entries(v).filter(([, inner]) => inner !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, inner]) => [k, plain(inner)]))
  }
  return JSON.stringify(plain(value))
}

// Everything the decorators declared, kept per process. Other parts (schema,
// triggers, indexes, docs) read it; none of them re-inspect classes.
import type { FieldDefinition } from './field-options.js'

import type { ClassOptions } from './class-options.js'

export type { ClassOptions, ClpOperation, ClpSubjects, CompoundIndex } from './class-options.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ModelClass = abstract new (...args: any[]) => unknown

export interface ModelDefinition {
  className: string
  /** The registered class (what `new` and Parse's decoding create). */
  model: ModelClass
  options: ClassOptions
  fields: Map<string, FieldDefinition>
  /** Name of the @ParseVersionField field, if any. */
  versionField?: string
  /** The source file whose @ParseClass declared it, when the call stack tells. */
  file?: string
}

// Class metadata, filled when @ParseClass and @ParseField run at import; it
// outlives any one kit, unlike the runtime state in lib/kit-state.ts.
const pending = new Map<unknown, Map<string, FieldDefinition>>()
const byClass = new Map<unknown, ModelDefinition>()
const byName = new Map<string, ModelDefinition>()
let revision = 0

/** Property decorators run before the class decorator: fields wait here for their class. */
export function addPendingField (target: unknown, field: FieldDefinition): Map<string, FieldDefinition> {
  const fields = pending.get(target) ?? new Map<string, FieldDefinition>()
  pending.set(target, fields)
  fields.set(field.name, field)
  return fields
}

export function pendingFields (target: unknown): ReadonlyMap<string, FieldDefinition> {
  return pending.get(target) ?? new Map()
}

export function takePendingFields (target: unknown): Map<string, FieldDefinition> {
  const fields = pending.get(target) ?? new Map<string, FieldDefinition>()
  pending.delete(target)
  return fields
}

export function registerModel (definition: ModelDefinition, ...aliases: unknown[]): void {
  const existing = byName.get(definition.className)
  if (existing && existing.model !== definition.model) {
    // The same file imported twice (e.g. by two paths) re-declares; the newest wins.
    for (const [key, value] of byClass) if (value === existing) byClass.delete(key)
  }
  byName.set(definition.className, definition)
  byClass.set(definition.model, definition)
  for (const alias of aliases) byClass.set(alias, definition)
  revision++
}

export function modelByClass (model: unknown): ModelDefinition | undefined {
  return byClass.get(model)
}

export function modelByName (className: string): ModelDefinition | undefined {
  return byName.get(className)
}

export function allModels (): ModelDefinition[] {
  return [...byName.values()]
}

/** Drops every declared model (see lib/forget-declarations.ts); answers each with the keys it was found by. */
export function forgetModels (): Array<{ definition: ModelDefinition, aliases: unknown[] }> {
  const forgotten = allModels().map((definition) => ({
    definition,
    aliases: [...byClass].filter(([key, value]) => value === definition && key !== definition.model).map(([key]) => key)
  }))
  pending.clear()
  byClass.clear()
  byName.clear()
  revision++
  return forgotten
}

/** Changes whenever a model is declared; caches built from the registry compare it. */
export function modelRevision (): number {
  return revision
}

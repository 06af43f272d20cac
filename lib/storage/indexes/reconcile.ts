// What it takes to bring the database's indexes and constraints to the
// declarations: a pure comparison of what is wanted with what the kit finds,
// shared by both databases, by the boot and by `fpk schema plan`.

export type ObjectKind = 'unique' | 'ordered' | 'geo' | 'ttl' | 'compound' | 'text' | 'acl' | 'validator'

/** A database object the declarations ask for. */
export interface WantedObject {
  className: string
  name: string
  kind: ObjectKind
  /** What decides whether the stored object is the same one (the exact command, or a canonical key). */
  definition: string
  /** The declared rule in words, for log lines: "enum a,b", "unique (sku)". */
  rule: string
  unique?: boolean
}

/** A database object found in the catalogue. */
export interface FoundObject {
  className: string
  name: string
  /** The kit made it (it carries the kit's mark, or a name only the kit gives). */
  madeByKit: boolean
  /** The definition it was made from, when the kit recorded one. */
  definition?: string
  rule?: string
  unique?: boolean
}

export type ChangeAction = 'create' | 'replace' | 'drop' | 'keep'

export interface ObjectChange {
  className: string
  name: string
  kind: ObjectKind
  action: ChangeAction
  /** The rule before (replace, drop) and after (create, replace). */
  from?: string
  to?: string
  /** Data or guarantees are lost: a unique index dropped, or one that stops being unique. */
  destructive: boolean
  /** keep: the object is ours but carries no record yet (made by an older kit): record it. */
  record?: boolean
  wanted?: WantedObject
}

const key = (object: { className: string, name: string }) => `${object.className}\u0000${object.name}`

/**
 * One change per wanted object (create, replace or keep), then one drop per
 * object the kit made on a declared class that nothing asks for any more.
 * Objects the kit did not make, and the objects of classes no model declares
 * (another application may share the database), are never touched.
 */
export function reconcileObjects (wanted: WantedObject[], found: FoundObject[], declaredClasses?: Iterable<string>): ObjectChange[] {
  const declared = declaredClasses === undefined ? undefined : new Set(declaredClasses)
  const stored = new Map(found.map((object) => [key(object), object]))
  const changes: ObjectChange[] = []
  const seen = new Set<string>()
  for (const object of wanted) {
    seen.add(key(object))
    const existing = stored.get(key(object))
    const base = { className: object.className, name: object.name, kind: object.kind, wanted: object }
    if (!existing) {
      changes.push({ ...base, action: 'create', to: object.rule, destructive: false })
    } else if (existing.definition === undefined) {
      // Same name, no record of how it was made: taken as it is, and recorded.
      changes.push({ ...base, action: 'keep', destructive: false, record: true })
    } else if (existing.definition !== object.definition) {
      changes.push({ ...base, action: 'replace', from: existing.rule, to: object.rule, destructive: Boolean(existing.unique) && !object.unique })
    } else {
      changes.push({ ...base, action: 'keep', destructive: false })
    }
  }
  for (const object of found) {
    if (!object.madeByKit || seen.has(key(object)) || (declared && !declared.has(object.className))) continue
    changes.push({ className: object.className, name: object.name, kind: object.unique ? 'unique' : 'ordered', action: 'drop', from: object.rule, destructive: Boolean(object.unique) })
  }
  return changes
}

/** The one log line of a change: "Mig_kind_check replaced: enum a,b → a,b,c". */
export function describeChange (change: ObjectChange): string {
  switch (change.action) {
    case 'create': return `${change.name} created: ${change.to}`
    case 'replace': return `${change.name} replaced: ${change.kind === 'validator' ? arrow(change.from, change.to) : `${change.from ?? '(made by an earlier version)'} → ${change.to}`}`
    case 'drop': return `${change.name} dropped${change.from ? `: ${change.from}` : ''} (no longer declared)`
    default: return `${change.name} unchanged`
  }
}

/** "enum a,b → a,b,c" when only the values of one rule changed; the whole rules otherwise. */
function arrow (from: string | undefined, to: string | undefined): string {
  if (from === undefined) return `(made by an earlier version) → ${to}`
  const before = splitRules(from)
  const after = splitRules(to ?? '')
  const changed = new Set([...before.keys(), ...after.keys()].filter((rule) => before.get(rule) !== after.get(rule)))
  if (changed.size === 0) return `${from} → ${to}`
  return [...changed].map((rule) => `${rule} ${before.get(rule) ?? 'none'} → ${after.get(rule) ?? 'none'}`).join('; ')
}

/** "enum a,b; maxLength 10" → enum: a,b, maxLength: 10. */
function splitRules (rules: string): Map<string, string> {
  const map = new Map<string, string>()
  for (const part of rules.split('; ').filter(Boolean)) {
    const space = part.indexOf(' ')
    if (space < 0) map.set(part, 'yes')
    else map.set(part.slice(0, space), part.slice(space + 1))
  }
  return map
}

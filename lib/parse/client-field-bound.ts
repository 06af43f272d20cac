// Parse lets a client save add a field wherever the class's `addField`
// permission is public, as it is on `_User` (a sign-up with any new key adds a
// column). Without a bound an anonymous client can add columns until the table
// is full (PostgreSQL: 1,600), and then nobody can sign up. Here a client save
// (never the master key: Parse checks addField only without it) that would
// take a stored class past a number of fields is refused, with Parse's own
// error for a refused addField. The bound is the running kit's.
import Parse from 'parse/node'
import { parseInternals, type ParseInternals, type CanAddField } from './internals.js'

const WRAPPED = Symbol.for('fastify-parse-kit.client-field-bound')

/** Wraps DatabaseController#canAddField (once per process); `boundOf()` answers the running kit's bound, undefined for none. */
export function boundClientFieldAdds (boundOf: () => number | undefined): void {
  const prototype = parseInternals().DatabaseController.prototype as ParseInternals['DatabaseController']['prototype'] & { [WRAPPED]?: true }
  if (prototype[WRAPPED]) return
  prototype[WRAPPED] = true
  const canAddField = prototype.canAddField
  const bounded: CanAddField = async function (this: unknown, schema, className, object, ...rest) {
    await canAddField.call(this, schema, className, object, ...rest)
    const bound = boundOf()
    const stored = schema.schemaData[className]?.fields
    if (bound === undefined || !stored) return
    const added = newFieldsOf(object, stored)
    if (added > 0 && Object.keys(stored).length + added > bound) {
      throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN,
        `Permission denied for action addField on class ${className}: it has ${Object.keys(stored).length} fields, and saves without the master key may not take a class past ${bound} (schema.maxClientFields). Declare the field, or save it with the master key.`)
    }
  }
  prototype.canAddField = bounded
}

/** The fields a save adds, as Parse counts them: top-level names the class lacks, not counting deletions. */
function newFieldsOf (object: Record<string, unknown>, stored: Record<string, unknown>): number {
  const added = new Set<string>()
  for (const [key, value] of Object.entries(object)) {
    if ((value as { __op?: unknown } | null)?.__op === 'Delete') continue
    const root = key.split('.')[0]
    if (!Object.hasOwn(stored, root)) added.add(root)
  }
  return added.size
}

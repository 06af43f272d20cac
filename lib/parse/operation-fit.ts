// Before a beforeSave trigger runs, Parse applies the save's field operations
// to the stored object through the SDK (RestWrite#buildParseObjects), before
// its schema check: an Increment of a String or an Array, an Add, AddUnique or
// Remove on a Number throws the SDK's plain Error ("Cannot add elements to a
// non-array value"), which Parse answers 500 (and, inside /batch, as an error
// with no code). Without a trigger the same save is Parse's 111 "schema
// mismatch". Every versioned class has a beforeSave, so any client could make
// one. The throw is answered here as that 111, naming the field.
import Parse from 'parse/node'
import { parseInternals, type RestWriteInstance } from './internals.js'

const WRAPPED = Symbol.for('fastify-parse-kit.operation-fit')

interface Write { className: string, data?: Record<string, unknown>, originalData?: Record<string, unknown> | null }
type Build = (this: Write) => unknown

/** Wraps RestWrite#buildParseObjects (once per process). */
export function answerMisfitOperations (): void {
  const prototype = parseInternals().RestWrite.prototype as RestWriteInstance & { buildParseObjects: Build, [WRAPPED]?: true }
  if (prototype[WRAPPED]) return
  prototype[WRAPPED] = true
  const build = prototype.buildParseObjects
  prototype.buildParseObjects = function (this: Write) {
    try {
      return build.call(this)
    } catch (error) {
      if (error instanceof Parse.Error) throw error
      throw misfit(this) ?? error
    }
  }
}

/** Parse's schema-mismatch error for the first operation the stored value cannot take, if any. */
function misfit ({ className, data, originalData }: Write): InstanceType<typeof Parse.Error> | undefined {
  for (const [field, value] of Object.entries(data ?? {})) {
    const op = (value as { __op?: unknown } | null)?.__op
    const stored = originalData?.[field]
    if (stored === undefined || stored === null) continue
    const takes = op === 'Increment' ? 'Number' : op === 'Add' || op === 'AddUnique' || op === 'Remove' ? 'Array' : undefined
    if (takes === undefined || kindOf(stored) === takes) continue
    return new Parse.Error(Parse.Error.INCORRECT_TYPE, `schema mismatch for ${className}.${field}; expected ${kindOf(stored)} but got ${takes} (${String(op)} does not apply to the stored value)`)
  }
  return undefined
}

function kindOf (value: unknown): string {
  if (Array.isArray(value)) return 'Array'
  if (typeof value === 'number') return 'Number'
  if (typeof value === 'string') return 'String'
  if (typeof value === 'boolean') return 'Boolean'
  const type = (value as { __type?: unknown }).__type
  return typeof type === 'string' ? type : 'Object'
}

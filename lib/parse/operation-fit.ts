// Before a beforeSave trigger runs, Parse builds the saved object from the
// stored row and the body through the SDK (RestWrite#buildParseObjects), ahead
// of its schema check, and the trigger's answer is encoded again through the
// SDK. Two kinds of body broke that:
// - one the SDK cannot build: an Increment of a String, an Add, AddUnique or
//   Remove on a Number, `"a.b": null`, a GeoPoint out of range. The SDK's
//   plain Error was answered 500 (inside /batch, an error with no code);
// - one it builds but cannot encode: a Date whose iso is no date, a Pointer
//   or Object without objectId, a File without url. The encoding throws inside
//   Parse's trigger runner, where nothing catches it: the request never
//   answered and the rejection, unhandled, ended the process.
// Both are answered here, before the trigger runs, as 400 (111), naming the
// field where one is to blame. For an afterSave or LiveQuery the check runs
// before the write too (name-only-files.ts, which also gives a File saved by its
// name alone its url first): a 400 with nothing stored, never a stored row
// answered 400. Classes without a trigger or LiveQuery never get here.
import Parse from 'parse/node'
import { parseInternals, type RestWriteInstance } from './internals.js'
import { fillFileUrls } from './name-only-files.js'
import { unfitSave } from './unfit-save.js'

const WRAPPED = Symbol.for('fastify-parse-kit.operation-fit')

interface Write { className: string, data?: Record<string, unknown>, originalData?: Record<string, unknown> | null, response?: unknown }
interface Built { updatedObject?: Parse.Object }
type Build = (this: Write) => Built

/** Wraps RestWrite#buildParseObjects (once per process). */
export function answerMisfitOperations (): void {
  fillFileUrls()
  const prototype = parseInternals().RestWrite.prototype as RestWriteInstance & { buildParseObjects: Build, [WRAPPED]?: true }
  if (prototype[WRAPPED]) return
  prototype[WRAPPED] = true
  const build = prototype.buildParseObjects
  prototype.buildParseObjects = function (this: Write) {
    let built: Built
    try {
      built = build.call(this)
    } catch (error) {
      if (error instanceof Parse.Error) throw error
      throw misfit(this) ?? unreadable(this.className, undefined, error)
    }
    // What the trigger runner will encode must encode: for a beforeSave, and before the write for an afterSave or
    // LiveQuery (name-only-files.ts); after the write it holds by then, and a throw would answer 400 for a stored row.
    if (built.updatedObject) checkEncodable(this.className, built.updatedObject)
    return built
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
    return unfitSave(new Parse.Error(Parse.Error.INCORRECT_TYPE, `schema mismatch for ${className}.${field}; expected ${kindOf(stored)} but got ${takes} (${String(op)} does not apply to the stored value)`))
  }
  return undefined
}

/**
 * The trigger runner calls toJSON() and _getSaveJSON() on the object; either throwing there is fatal, so
 * throw here first. toJSON() encodes every value a pending operation leads to (about 6 µs of CPU for a
 * ten-field object); the operations are walked only to name the field once it failed.
 */
function checkEncodable (className: string, object: Parse.Object): void {
  try {
    object.toJSON()
  } catch (error) {
    for (const field of object.dirtyKeys()) {
      try {
        (object.op(field) as { toJSON?: () => unknown } | undefined)?.toJSON?.()
      } catch {
        throw unreadable(className, field, error)
      }
    }
    throw unreadable(className, undefined, error)
  }
}

function unreadable (className: string, field: string | undefined, cause: unknown): InstanceType<typeof Parse.Error> {
  const why = cause instanceof Error ? cause.message : String(cause)
  // The SDK's own words ("Tried to encode an invalid date.") help the client; a JavaScript TypeError's do not.
  const said = /^Cannot read propert/.test(why) ? '' : ` (${why})`
  return unfitSave(new Parse.Error(Parse.Error.INCORRECT_TYPE, `${field ? `${className}.${field}` : className}: a value of this save cannot be read as a Parse type${said}`))
}

function kindOf (value: unknown): string {
  if (Array.isArray(value)) return 'Array'
  if (typeof value === 'number') return 'Number'
  if (typeof value === 'string') return 'String'
  if (typeof value === 'boolean') return 'Boolean'
  const type = (value as { __type?: unknown }).__type
  return typeof type === 'string' ? type : 'Object'
}

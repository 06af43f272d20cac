// What PostgreSQL refuses in a write that is the save's fault: a data
// exception (SQLSTATE class 22) such as an Increment past the largest Number
// (22003 "value out of range: overflow") or an Increment of an Object's key
// that holds text or a fraction (Parse casts the key to integer: 22P02).
// Parse passed the driver's error on and the client got a 500; the same save
// on MongoDB stores or answers a 4xx. Answered as Parse's 111, the code of a
// field operation the stored value cannot take.
import Parse from 'parse/node'

const DATA_EXCEPTION_CLASS = '22'

/** The 111 for a write PostgreSQL refused as bad data, or undefined when the error is something else. */
export function writeDataError (error: unknown, className: string): InstanceType<typeof Parse.Error> | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  if (typeof code !== 'string' || !code.startsWith(DATA_EXCEPTION_CLASS) || code.length !== 5) return undefined
  const text = typeof message === 'string' ? message.slice(0, 200) : 'PostgreSQL refused a value'
  return new Parse.Error(Parse.Error.INCORRECT_TYPE, `${className}: PostgreSQL cannot store this save (${text}); a Number must stay within ±1.7976931348623157e308, and an Increment of an Object's key needs a whole number stored there.`)
}

/** Update methods of the adapter and where their update is. */
const UPDATES = new Set(['updateObjectsByQuery', 'findOneAndUpdate', 'upsertOneObject'])

/**
 * Parse's PostgreSQL update applies two operations to a key inside an Object, Increment and Delete,
 * one level down ("meta.n"). Any other (Add, AddUnique, Remove, Batch; either one deeper, "meta.a.b")
 * it stored as the value itself, {"__op": "Add", …} inside the Object, where MongoDB applies it; an
 * AddRelation there was a 500. Refused before the write.
 */
export function keyOperationProblem (method: string, className: string, update: unknown): InstanceType<typeof Parse.Error> | undefined {
  if (!UPDATES.has(method) || update === null || typeof update !== 'object') return undefined
  for (const [key, value] of Object.entries(update)) {
    const dot = key.indexOf('.')
    if (dot < 0 || value === null || typeof value !== 'object') continue
    const op = (value as { __op?: unknown }).__op
    if (typeof op !== 'string') continue
    if ((op === 'Increment' || op === 'Delete') && key.indexOf('.', dot + 1) < 0) continue
    return new Parse.Error(Parse.Error.INCORRECT_TYPE, `${className}.${key}: PostgreSQL applies only Increment and Delete to a key inside an Object, one level down ("${key.slice(0, dot)}.<key>"), not ${op}${op === 'Increment' || op === 'Delete' ? ' deeper' : ''}; send the whole Object instead.`)
  }
  return undefined
}

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

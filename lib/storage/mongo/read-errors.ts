// What MongoDB refuses in a read that is the query's fault, not the server's
// (an index hint it cannot use, a value of the wrong kind for an operator):
// answered as Parse's 400 INVALID_QUERY, where Parse's MongoDB adapter would
// rethrow it and the client would get a 500.
import Parse from 'parse/node'

/** MongoDB's codes for a command's bad input: BadValue, FailedToParse, TypeMismatch. */
const BAD_INPUT = new Set([2, 9, 14])

/** Rethrows a read's error as a clear Parse error when the query caused it; other errors unchanged. */
export function explainMongoReadError (error: unknown): never {
  const { name, code, message } = (error ?? {}) as { name?: unknown, code?: unknown, message?: unknown }
  if (name === 'MongoServerError' && typeof code === 'number' && BAD_INPUT.has(code)) {
    throw new Parse.Error(Parse.Error.INVALID_QUERY, `MongoDB cannot run this query: ${typeof message === 'string' ? message : 'it refused a value'}.`)
  }
  throw error
}

// What PostgreSQL refuses in a read that is the query's fault, not the
// server's: answered as Parse's 400 INVALID_QUERY with what to change, where
// Parse's PostgreSQL adapter would rethrow it and the client would get a 500.
import Parse from 'parse/node'
import { explainMissingPostgis } from './geo.js'

/** 2201B invalid_regular_expression: a $regex (a search box's "[" or "(") PostgreSQL cannot compile. */
const INVALID_REGULAR_EXPRESSION = '2201B'

/** Rethrows a read's error as a clear Parse error when the query caused it; other errors unchanged. */
export function explainReadError (error: unknown): never {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  if (code === INVALID_REGULAR_EXPRESSION) {
    throw new Parse.Error(Parse.Error.INVALID_QUERY, `$regex is not a valid regular expression (${typeof message === 'string' ? message : 'PostgreSQL refused it'}); escape the characters meant literally.`)
  }
  return explainMissingPostgis(error)
}

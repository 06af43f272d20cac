// What PostgreSQL refuses in a read that is the query's fault, not the
// server's: answered as Parse's 400 INVALID_QUERY with what to change, where
// Parse's PostgreSQL adapter would rethrow it and the client would get a 500.
import Parse from 'parse/node'
import { explainMissingPostgis } from './geo.js'

/** 2201B invalid_regular_expression: a $regex (a search box's "[" or "(") PostgreSQL cannot compile. */
const INVALID_REGULAR_EXPRESSION = '2201B'
/** Class 22, data exception: a value the query compares that its column's type cannot hold ("abc" for a Number, "garbage" for a Date, 1e20 for a count). */
const DATA_EXCEPTION_CLASS = '22'
/** 42883 undefined_function: Parse reads a subfield ("label.sub") with ->> whatever the field's type; text has no such operator. */
const UNDEFINED_FUNCTION = '42883'
/** 42704 undefined_object: $text's $language names a text search configuration PostgreSQL does not have. */
const UNDEFINED_OBJECT = '42704'
/** 42601 syntax_error: Parse writes `IN ()` for a list it emptied (a null in $in or $nin, a $select key the inner class lacks). */
const SYNTAX_ERROR = '42601'

/** Rethrows a read's error as a clear Parse error when the query caused it; other errors unchanged. */
export function explainReadError (error: unknown): never {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  const text = typeof message === 'string' ? message : 'PostgreSQL refused it'
  if (code === INVALID_REGULAR_EXPRESSION) {
    throw new Parse.Error(Parse.Error.INVALID_QUERY, `$regex is not a valid regular expression (${text}); escape the characters meant literally.`)
  }
  if (typeof code === 'string' && code.startsWith(DATA_EXCEPTION_CLASS)) {
    throw refused(`a value does not fit its field's type (${text}); compare a Number with numbers and a Date with {"__type": "Date", "iso": "<ISO 8601>"}`)
  }
  if (code === UNDEFINED_FUNCTION && /operator does not exist: \w+ ->>? /.test(text)) {
    throw refused(`a subfield ("field.sub") is read from a field that is not an Object (${text})`)
  }
  // A comparison of a field with a value of another type that Parse passed on as it was
  // ({"$ne": [1]} on a String, {"$gt": {"__type": "Date", "iso": 5}} on a Date). PostGIS's own are geo.ts's.
  if (code === UNDEFINED_FUNCTION && /^operator does not exist: /.test(text) && !/geometry|geography/i.test(text)) {
    throw refused(`a value is compared with a field of another type (${text}); compare each field with values of its own type`)
  }
  // An order on a GeoPoint or Polygon field: PostgreSQL's point and polygon types have no order.
  if (code === UNDEFINED_FUNCTION && /^could not identify an ordering operator for type /.test(text)) {
    throw refused(`a GeoPoint or Polygon field cannot order a list (${text}); order by a String, Number, Date or Boolean field`)
  }
  // $text on a field that is not text: Parse writes to_tsvector(<language>, "<field>") whatever the field's type.
  if (code === UNDEFINED_FUNCTION && /^function to_tsvector\(/.test(text)) {
    throw refused(`$text searches a String field (${text})`)
  }
  if (code === UNDEFINED_OBJECT && /^text search configuration /.test(text)) {
    throw refused(`$text's $language is not a text search configuration PostgreSQL has (${text}); use one such as "english", "simple" or "german"`)
  }
  if (code === SYNTAX_ERROR) {
    throw refused(`${text}; a null inside $in, $nin or $all, or a $select or $dontSelect key the inner query's class does not have, cannot be compared`)
  }
  return explainMissingPostgis(error)
}

function refused (why: string): InstanceType<typeof Parse.Error> {
  return new Parse.Error(Parse.Error.INVALID_QUERY, `PostgreSQL cannot run this query: ${why}.`)
}

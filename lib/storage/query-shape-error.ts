// Parse's storage adapters translate a query's operators into SQL or a MongoDB
// filter assuming each value has the operator's shape: `{"$text": {"$search": null}}`,
// `{"$nearSphere": null}`, a Pointer whose className is null, `{"__type": "Bytes"}`
// without its base64 throw a TypeError there, which Parse answers as a 500. A read
// that fails so was sent a query of the wrong shape: answered 400 INVALID_QUERY.
import Parse from 'parse/node'

/** Rethrows a TypeError from a read's query translation as a clear Parse error; other errors unchanged. */
export function explainQueryShape (error: unknown): void {
  if (error instanceof TypeError) {
    throw new Parse.Error(Parse.Error.INVALID_QUERY, `The query has an operator or a typed value ({"__type": …}) whose value is not of the shape it takes (${error.message}).`)
  }
}

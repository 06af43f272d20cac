// A Relation is a field of its own: AddRelation/RemoveRelation on a key inside
// an Object ("meta.r") wrote to a join table named after "meta.r", which
// PostgreSQL does not have (a 500 after the row's own write) and MongoDB made
// for nothing to read. The gate refuses it on requests; this refuses it where
// every save passes (the schema check before the write), so in-process cloud
// code is answered the same on both lanes, before anything is written.
import Parse from 'parse/node'

/** The refusal of a Relation type at a dotted key, or undefined. */
export function relationInsideObject (fieldName: string, type: unknown): Parse.Error | undefined {
  if (!fieldName.includes('.')) return undefined
  const name = typeof type === 'string' ? type : (type as { type?: unknown } | null | undefined)?.type
  if (name !== 'Relation') return undefined
  return new Parse.Error(Parse.Error.INVALID_JSON, `${fieldName}: a Relation is a field of its own, not a key inside an Object (AddRelation/RemoveRelation on "${fieldName.split('.')[0]}" itself, declared as a Relation)`)
}

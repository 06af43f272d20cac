// `fpk schema plan` on MongoDB: what the stored documents say about a change
// (duplicates under a new unique index, documents without a value under a new
// required field, documents a new validator rejects). Read-only.
import type { Db, Document } from 'mongodb'

/** Values held by more than one document under the index's keys; undefined when the database cannot say. */
export async function mongoDuplicates (db: Db, collection: string, keys: string[], partial?: Document): Promise<{ values: number, rows: number } | undefined> {
  const present = Object.fromEntries(keys.map((key) => [key, { $exists: true, $ne: null }]))
  try {
    const groups = await db.collection(collection).aggregate([
      { $match: partial ? { $and: [present, partial] } : present },
      { $group: { _id: keys.length === 1 ? `$${keys[0]}` : Object.fromEntries(keys.map((key, i) => [`k${i}`, `$${key}`])), n: { $sum: 1 } } },
      { $match: { n: { $gt: 1 } } }
    ]).toArray()
    return { values: groups.length, rows: groups.reduce((sum, group) => sum + Number(group.n), 0) }
  } catch {
    return undefined
  }
}

/** Documents without a value in `field` (missing or null). */
export async function mongoRowsWithout (db: Db, collection: string, field: string): Promise<number | undefined> {
  return db.collection(collection).countDocuments({ [field]: null }).catch(() => undefined)
}

/** Documents a validator rejects; undefined when the database cannot evaluate it in a query. */
export async function mongoRowsBreaking (db: Db, collection: string, validator: Document): Promise<number | undefined> {
  return db.collection(collection).countDocuments({ $nor: [validator] }).catch(() => undefined)
}

// Deletes a class's expired rows on PostgreSQL, which has no expiring index:
// in batches, each a short statement, skipping rows another sweep has locked.
// Straight SQL, as MongoDB's TTL monitor deletes: no Parse trigger runs.
import type { PgQueries } from '../../parse/internals.js'

export async function deleteExpiredPostgresRows (client: PgQueries, className: string, field: string, ttlSeconds: number, batchSize: number): Promise<number> {
  let total = 0
  for (;;) {
    let deleted: number
    try {
      const row = await client.one(
        `WITH doomed AS (SELECT "objectId" FROM $1:name WHERE $2:name < now() - $3 * interval '1 second' LIMIT $4 FOR UPDATE SKIP LOCKED),
              gone AS (DELETE FROM $1:name AS target USING doomed WHERE target."objectId" = doomed."objectId" RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [className, field, ttlSeconds, batchSize])
      deleted = row.deleted as number
    } catch (error) {
      // A class nobody has saved to yet has no table (or no such column): nothing to expire.
      if (['42P01', '42703'].includes((error as { code?: string }).code ?? '')) return total
      throw error
    }
    total += deleted
    if (deleted < batchSize) return total
  }
}

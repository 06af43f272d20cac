// One batch of the expired-session sweep on PostgreSQL: a single short
// statement (its own transaction) that deletes at most `batchSize` rows whose
// expiresAt has passed, skipping rows a concurrent sweep or logout has locked.
// Rows with no expiresAt (expireInactiveSessions: false) never match.
import type { PgQueries } from '../../parse/internals.js'

export async function deleteExpiredPostgresSessions (client: PgQueries, batchSize: number): Promise<number> {
  try {
    const row = await client.one(
      `WITH doomed AS (SELECT "objectId" FROM "_Session" WHERE "expiresAt" < now() LIMIT $1 FOR UPDATE SKIP LOCKED),
            gone AS (DELETE FROM "_Session" AS target USING doomed WHERE target."objectId" = doomed."objectId" RETURNING 1)
       SELECT count(*)::int AS deleted FROM gone`,
      [batchSize])
    return row.deleted as number
  } catch (error) {
    // No login yet: Parse has not made the table.
    if ((error as { code?: string }).code === '42P01') return 0
    throw error
  }
}

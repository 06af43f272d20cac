// The schema generations on PostgreSQL: one row per declaration the database
// was reconciled to, numbered in the order they first booted. The number is
// the primary key, so two instances appending at once cannot both take it.
import type { PgQueries } from '../../parse/internals.js'
import type { GenerationRecord } from '../../model/schema-generations.js'

const TABLE = 'fpk_schema_generations'
const UNIQUE_VIOLATION = '23505'

async function ensureTable (client: PgQueries): Promise<void> {
  // Two instances booting at once may both create it: the loser's error is the same table.
  await client.none(`CREATE TABLE IF NOT EXISTS ${TABLE} (generation integer PRIMARY KEY, fingerprint text NOT NULL, version integer, declared_at timestamptz NOT NULL DEFAULT now())`)
    .catch((error: { code?: string }) => { if (error.code !== UNIQUE_VIOLATION && error.code !== '42P07') throw error })
}

/** The recorded generations; none when no boot has made the table yet (read-only: the plan reads this too). */
export async function postgresGenerations (client: PgQueries): Promise<GenerationRecord[]> {
  const [{ exists }] = await client.any('SELECT to_regclass($1) IS NOT NULL AS exists', [TABLE])
  if (!exists) return []
  const rows = await client.any(`SELECT generation, fingerprint, version, declared_at FROM ${TABLE} ORDER BY generation`)
  return rows.map((row) => ({
    generation: Number(row.generation),
    fingerprint: String(row.fingerprint),
    ...(row.version === null ? {} : { version: Number(row.version) }),
    declaredAt: row.declared_at as Date
  }))
}

/** false when another instance took that generation first. */
export async function appendPostgresGeneration (client: PgQueries, record: Omit<GenerationRecord, 'declaredAt'>): Promise<boolean> {
  await ensureTable(client)
  try {
    await client.none(`INSERT INTO ${TABLE} (generation, fingerprint, version) VALUES ($1, $2, $3)`, [record.generation, record.fingerprint, record.version ?? null])
    return true
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return false
    throw error
  }
}

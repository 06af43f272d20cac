// Instances on one PostgreSQL start Parse one at a time. Parse's own
// initialization (performInitialization: `_User`, `_Role`, `_Session`… and
// their unique indexes) and the kit's schema step create tables and indexes
// with no guard against another process doing the same at that moment: two
// instances booting together on an empty database crashed one of them
// (`json_object_set_key`, duplicate `_User_unique_email`). A session advisory
// lock, held on one pooled connection from the schema step until Parse's
// migration is verified, makes the second instance wait and then find
// everything in place. A process that dies holding it loses its connection,
// and the lock with it.
import type { PgDatabase } from '../../parse/internals.js'

/** The lock's key (hashed to PostgreSQL's bigint key space); other kit locks use other names. */
const SCHEMA_LOCK = 'fpk:schema-boot'
/**
 * Tried rather than waited for: every query on the pool is bounded
 * (query_timeout), and another instance's first boot may take longer.
 */
const RETRY_MS = 100

/**
 * Takes the schema lock (waiting for another instance's boot, with `onWait`
 * called once when it must: a boot that seems stuck says what it waits for),
 * and answers how to release it.
 */
export async function holdPostgresSchemaLock (client: PgDatabase, onWait?: () => void): Promise<() => Promise<void>> {
  const connection = await client.connect()
  try {
    for (let tries = 0; ; tries++) {
      const [{ locked }] = await connection.any('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [SCHEMA_LOCK])
      if (locked === true) break
      if (tries === 0) onWait?.()
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
    }
  } catch (error) {
    connection.done()
    throw error
  }
  let released: Promise<void> | undefined
  return () => {
    released ??= connection.any('SELECT pg_advisory_unlock(hashtext($1))', [SCHEMA_LOCK])
      .then(() => {}, () => {}) // a broken connection has lost the lock already
      .finally(() => connection.done())
    return released
  }
}

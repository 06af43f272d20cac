// Index builds next to live traffic. CREATE INDEX CONCURRENTLY takes a lock
// that lets reads and writes go on (SHARE UPDATE EXCLUSIVE, where a plain build
// holds SHARE and stops every write for the whole build); it cannot run in a
// transaction, and a build that fails or is interrupted leaves an INVALID index
// behind, which is useless for reads but still costs every write: it is found
// (pg_index.indisvalid), dropped and built again.
import type { PgQueries } from '../../parse/internals.js'
import { runConcurrently } from './schema-work.js'
import { PG_NAME_BYTES, pgIdentifier } from './identifiers.js'

const DUPLICATE_RELATION = '42P07'

/** Appended to a name while its replacement is built beside it. */
const BUILDING_SUFFIX = '__fpk_new'
export function buildingName (name: string): string {
  return pgIdentifier(name, PG_NAME_BYTES - BUILDING_SUFFIX.length) + BUILDING_SUFFIX
}

export function isBuildingName (name: string): boolean {
  return name.endsWith(BUILDING_SUFFIX)
}

/** The name already exists (another instance made it meanwhile). */
export function isDuplicateName (error: unknown): boolean {
  return (error as { code?: unknown }).code === DUPLICATE_RELATION
}

export function quoted (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * Builds an index with `CREATE … INDEX CONCURRENTLY` (`command` names `name`).
 * When the build fails, the invalid index it left is dropped, so that the next
 * attempt starts clean; the error is passed on.
 */
export async function buildConcurrently (client: PgQueries, name: string, command: string): Promise<void> {
  try {
    await runConcurrently(client, command)
  } catch (error) {
    if (!isDuplicateName(error)) await dropIfLeftInvalid(client, name).catch(() => {})
    throw error
  }
}

export function dropConcurrentlyCommand (name: string): string {
  return `DROP INDEX CONCURRENTLY IF EXISTS ${quoted(name)}`
}

export async function dropConcurrently (client: PgQueries, name: string): Promise<void> {
  await runConcurrently(client, dropConcurrentlyCommand(name))
}

/** Drops the index if it is invalid and no other session is building it right now. */
export async function dropIfLeftInvalid (client: PgQueries, name: string): Promise<boolean> {
  const rows = await client.any(`
    SELECT x.indisvalid AS valid, ${BUILDING_ELSEWHERE} AS building
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE i.relname = $1 AND i.relnamespace = current_schema()::regnamespace`, [name])
  if (rows.length === 0 || rows[0].valid || rows[0].building) return false
  await dropConcurrently(client, name)
  return true
}

/** SQL: true while another session builds the index `x.indexrelid` (CONCURRENTLY: it is invalid until done). */
export const BUILDING_ELSEWHERE = 'EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = x.indexrelid AND p.pid <> pg_backend_pid())'

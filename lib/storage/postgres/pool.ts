import { pgDatabase, pgPool } from '../../parse/adapter-internals.js'

/**
 * Parse's handleShutdown() ends the pg pool without awaiting it. Stopping the
 * server before the pool's connections close kills the process with
 * "terminating connection due to administrator command", so wait here.
 */
export async function waitForPostgresPool (adapter: object, timeoutMs = 10_000): Promise<void> {
  const pool = pgPool(adapter)
  if (!pool) return
  // Clients still closing may hear the server stop; that is expected now, not a crash.
  pool.on('error', () => {})
  if (!pool.ending) await pool.end().catch(() => {})
  const deadline = Date.now() + timeoutMs
  while (!pool.ended && pool.totalCount > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** One trivial query on Parse's own pool: answers only when the server does. */
export async function pingPostgres (adapter: object): Promise<void> {
  await pgDatabase(adapter)!.one('SELECT 1')
}

/** Parse's pool size when the kit's option does not set it: the URI's `max` or `poolSize`, as Parse reads them, else pg's 10. */
export const POSTGRES_DEFAULT_POOL_SIZE = 10

/** The size of Parse's pg pool: the kit's option, else the URI's own setting, else 10. */
export function postgresPoolSize (uri: string, option: number | undefined): number {
  if (option !== undefined) return option
  let params: URLSearchParams | undefined
  try { params = new URL(uri).searchParams } catch {}
  for (const name of ['max', 'poolSize']) {
    const given = Number.parseInt(params?.get(name) ?? '', 10)
    if (given > 0) return given
  }
  return POSTGRES_DEFAULT_POOL_SIZE
}

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

/** How long a probe may take on its own connection (the availability watch's own bound). */
const PROBE_MS = 2_000

interface ProbePool {
  query (text: string): Promise<unknown>
  end (): Promise<void>
  on (event: 'error', listener: (error: Error) => void): unknown
}
interface PoolInternals { options: Record<string, unknown>, constructor: new (options: Record<string, unknown>) => ProbePool }

/**
 * The availability probe's own connection, beside Parse's pool (one more server connection per
 * instance). Probing through Parse's pool would wait behind the very calls that filled it: under
 * overload the probe would time out and a database that answers would be marked down. Opened on
 * the first probe and kept, so a server at max_connections still answers it; a probe that fails
 * drops the connection and the next one opens a new one.
 */
export function postgresProbe (adapter: object): { ping (): Promise<void>, close (): Promise<void> } {
  let pool: ProbePool | undefined
  let closed = false
  const open = (): ProbePool => {
    const parse = pgPool(adapter) as unknown as PoolInternals
    // pg-pool keeps the password as a property that a spread does not copy.
    const own = new parse.constructor({ ...parse.options, password: parse.options.password, max: 1, idleTimeoutMillis: 0, connectionTimeoutMillis: PROBE_MS, query_timeout: PROBE_MS })
    own.on('error', () => {}) // the idle connection lost: the next probe opens another
    return own
  }
  return {
    async ping () {
      if (closed) throw new Error('the kit is closing')
      pool ??= open()
      await pool.query('SELECT 1')
    },
    async close () {
      closed = true
      const own = pool
      pool = undefined
      await own?.end().catch(() => {})
    }
  }
}

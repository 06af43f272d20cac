// Scenario 5pg: the physical limit of a database endpoint. The SQL that one
// listNotes call sends (caught on the wire of Parse's own pool, so it is
// exactly the same statements, not a guess), replayed through `pg` in a bare
// Fastify route: no Parse, no kit, no checks.
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { parseConfig } from '../../lib/access/parse-config.js'

interface Statements { find: string, count: string }

/** Parse's own pg-promise database (the storage adapter's client): the bench's SQL runs on the pool Parse uses. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function parseDatabase (appId: string): any {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (parseConfig(appId) as any).database.adapter._client
}

/** The count a count statement's rows give: count(*), the planner's estimate, or as many rows as a capped read found. */
function countOf (rows: Array<{ count?: string, approximate_row_count?: number }>): number {
  const row = rows[0]
  if (row && (row.count !== undefined || row.approximate_row_count !== undefined)) return Number(row.count ?? row.approximate_row_count)
  return rows.length
}

export function physicalLimitRoute (app: FastifyInstance, appId: string): { arm: (listNotes: () => Promise<unknown>) => Promise<Statements>, close: () => Promise<void> } {
  let statements: Statements | undefined
  let pool: pg.Pool | undefined
  app.get('/bench/pg-baseline', async (_request, reply) => {
    if (!statements || !pool) return reply.code(503).send({ error: 'not armed yet' })
    const found = await pool.query(statements.find)
    const counted = await pool.query(statements.count)
    return { results: found.rows, count: countOf(counted.rows) }
  })
  // 5pgp: the same statements on Parse's own pool (pg-promise, its own pg and the kit's pool
  // options): what the driver stack under Parse costs, without Parse.
  app.get('/bench/pg-baseline-parse-pool', async (_request, reply) => {
    if (!statements) return reply.code(503).send({ error: 'not armed yet' })
    const client = parseDatabase(appId)
    const found = await client.any(statements.find)
    return { results: found, count: countOf(await client.any(statements.count)) }
  })

  return {
    async arm (listNotes) {
      const client = parseDatabase(appId)
      const parsePool = client.$pool as { Client: { prototype: { query: (...args: unknown[]) => unknown } }, options: Record<string, unknown> }
      const proto = parsePool.Client.prototype
      const original = proto.query
      const seen: string[] = []
      proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
        const text = typeof config === 'string' ? config : (config as { text?: string })?.text
        // The kit's own work after boot (field constraints: a pg_constraint look-up, an ALTER TABLE, a COMMENT ON CONSTRAINT) may run on this pool meanwhile.
        if (text && /"Note"|pg_class/.test(text) && !/pg_constraint|^\s*(ALTER|CREATE|DROP|COMMENT)\b/i.test(text)) seen.push(text)
        return original.call(this, config, ...rest)
      }
      try {
        await listNotes()
      } finally {
        proto.query = original
      }
      // The rows are the ordered statement; the count is a count(*), the planner's estimate, or a capped read of objectIds.
      const find = seen.find((text) => /^SELECT .* FROM "Note".* ORDER BY /s.test(text))
      const count = seen.find((text) => text !== find && /count\(\*\)|approximate_row_count|^SELECT "objectId" FROM "Note"/.test(text))
      if (seen.length !== 2 || !find || !count) throw new Error(`listNotes sent ${seen.length} statements on Note, expected a find and a count: ${JSON.stringify(seen)}`)
      // The connection Parse's pool was made from (pg-promise keeps it as $cn), with as many connections.
      const connection = typeof client.$cn === 'string' ? { connectionString: client.$cn } : client.$cn
      pool = new pg.Pool({ ...connection, max: Number(parsePool.options.max ?? 10) })
      statements = { find, count }
      return statements
    },
    async close () {
      await pool?.end()
    }
  }
}

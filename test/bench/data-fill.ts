// The data-size scenario's tables, filled by SQL (generate_series, one
// statement per table): the kit's Note and _Session in Parse's own row format
// (as a row written through the API looks: 10-character objectIds, _rperm and
// _wperm arrays, a pointer column holding the user's objectId), and the same
// rows in the NestJS peer's note and session tables. Row i is the same note on
// both sides; filling to a larger size appends the rows after the last one.
import { createHash } from 'node:crypto'
import pg from 'pg'

/** Rows are i = 1…N; createdAt = FIRST_CREATED + i × STEP, so a larger fill appends newer rows, as an application's table grows. */
const FIRST_CREATED = '2026-01-01T00:00:00Z'
const STEP_SECONDS = 10

/** Who owns and reads the filled rows: users created through the API, the first one holds the role Editor. */
export interface FillUsers { ids: string[], role: string }

/** The session token of filled session row i (the runner picks unused ones by index without asking the database). */
export function sessionToken (i: number): string {
  return `r:${createHash('md5').update(`fpk-bench-session-${i}`).digest('hex')}`
}
const TOKEN_SQL = (i: string) => `'r:' || md5('fpk-bench-session-' || ${i})`

/**
 * A unique 10-character id for row i of a table: a prefix letter and 9 hex
 * digits of i multiplied by an odd constant modulo 2^36 (a bijection), so ids
 * look random in the index as Parse's do, yet never collide.
 */
const ID_SQL = (prefix: string, i: string) => `'${prefix}' || lpad(to_hex((${i}::bigint * 2654435761) % 68719476736), 9, '0')`

/** Half public; of the rest, half owner-only and half readable by the role (Parse's _rperm spellings). */
const RPERM_SQL = (owner: string, role: string) =>
  `CASE WHEN i % 2 = 0 THEN ARRAY['*', ${owner}] WHEN i % 4 = 1 THEN ARRAY[${owner}] ELSE ARRAY['role:${role}'] END`

const usersArray = (users: FillUsers) => `ARRAY[${users.ids.map((id) => `'${id}'`).join(', ')}]`
const ownerOf = (users: FillUsers) => `(${usersArray(users)})[1 + i % ${users.ids.length}]`

async function withClient<T> (url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    // A fill of a million rows outlasts any statement timeout a server sets by default.
    await client.query('SET statement_timeout = 0')
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * VACUUM (ANALYZE) after a fill: the planner's statistics, and the visibility
 * map a settled table has (so autovacuum does not start on the fresh rows
 * while the scenario measures).
 */
async function settle (client: pg.Client, tables: string[]): Promise<void> {
  for (const table of tables) await client.query(`VACUUM (ANALYZE) ${table}`)
}

/** How long each step of a fill took, ms: the notes' INSERT, the sessions' INSERT, VACUUM (ANALYZE) of both. */
export interface FillTiming { notesMs: number, sessionsMs: number, vacuumMs: number }

/** The kit's tables: filled rows `from` to `to` of Note and _Session, then ANALYZE. */
export async function fillParseTables (url: string, from: number, to: number, users: FillUsers): Promise<FillTiming> {
  return withClient(url, async (client) => {
    const owner = ownerOf(users)
    // The bench server's seeded rows go: the table holds the filled rows only.
    if (from === 1) await client.query('TRUNCATE "Note"')
    let started = performance.now()
    await client.query(`
      INSERT INTO "Note" ("objectId", "createdAt", "updatedAt", title, body, status, slug, views, _rperm, _wperm)
      SELECT ${ID_SQL('n', 'i')},
             timestamptz '${FIRST_CREATED}' + i * interval '${STEP_SECONDS} seconds',
             timestamptz '${FIRST_CREATED}' + i * interval '${STEP_SECONDS} seconds' + (i % 7) * interval '1 hour',
             'Filled note ' || i,
             'The body of filled note ' || i || '. ' || repeat('Some words a note holds. ', 8),
             CASE WHEN i % 2 = 0 THEN 'published' ELSE 'draft' END,
             'filled-' || i,
             (i % 1000)::double precision,
             ${RPERM_SQL(owner, users.role)},
             ARRAY[${owner}]
      FROM generate_series($1::bigint, $2::bigint) AS i`, [from, to])
    const notesMs = performance.now() - started
    started = performance.now()
    // As Parse's login writes a session (no ACL of its own: _rperm and _wperm stay NULL), one year to live.
    await client.query(`
      INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "user", "sessionToken", "expiresAt", "createdWith")
      SELECT ${ID_SQL('s', 'i')}, now() - interval '1 day', now() - interval '1 day', ${owner},
             ${TOKEN_SQL('i')}, now() + interval '1 year',
             '{"action": "login", "authProvider": "password", "bench": "filled"}'::jsonb
      FROM generate_series($1::bigint, $2::bigint) AS i`, [from, to])
    const sessionsMs = performance.now() - started
    started = performance.now()
    await settle(client, ['"Note"', '"_Session"'])
    return { notesMs, sessionsMs, vacuumMs: performance.now() - started }
  })
}

/** The NestJS peer's tables: the same notes (publicRead for the public half, ownerId the owner) and the same sessions. */
export async function fillNestTables (url: string, from: number, to: number, users: FillUsers): Promise<FillTiming> {
  return withClient(url, async (client) => {
    const owner = ownerOf(users)
    // The peer's own seeded rows go: its table holds the filled rows only, as the kit's does.
    if (from === 1) await client.query('TRUNCATE note RESTART IDENTITY')
    let started = performance.now()
    await client.query(`
      INSERT INTO note (title, body, status, slug, views, "ownerId", "publicRead", "createdAt", "updatedAt")
      SELECT 'Filled note ' || i,
             'The body of filled note ' || i || '. ' || repeat('Some words a note holds. ', 8),
             CASE WHEN i % 2 = 0 THEN 'published' ELSE 'draft' END,
             'filled-' || i, i % 1000, ${owner}, i % 2 = 0,
             timestamptz '${FIRST_CREATED}' + i * interval '${STEP_SECONDS} seconds',
             timestamptz '${FIRST_CREATED}' + i * interval '${STEP_SECONDS} seconds' + (i % 7) * interval '1 hour'
      FROM generate_series($1::bigint, $2::bigint) AS i`, [from, to])
    const notesMs = performance.now() - started
    started = performance.now()
    await client.query(`
      INSERT INTO session (token, "userId", "expiresAt")
      SELECT ${TOKEN_SQL('i')}, ${owner}, now() + interval '1 year'
      FROM generate_series($1::bigint, $2::bigint) AS i`, [from, to])
    const sessionsMs = performance.now() - started
    started = performance.now()
    await settle(client, ['note', 'session'])
    return { notesMs, sessionsMs, vacuumMs: performance.now() - started }
  })
}

/** The rows the write scenario added go, and VACUUM reclaims them, so every run reads the filled table alone. */
export async function removeWrites (url: string, table: string, title: string): Promise<void> {
  await withClient(url, async (client) => {
    await client.query(`DELETE FROM ${table} WHERE title = $1`, [title])
    await client.query(`VACUUM ${table}`)
  })
}

/** A public filled note's objectId (getNote's target): row 2 × k is public. */
export async function publicNoteId (url: string, row: number): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string }>('SELECT "objectId" AS id FROM "Note" WHERE slug = $1', [`filled-${row - (row % 2)}`])
    if (!rows[0]) throw new Error(`filled note ${row} not found`)
    return rows[0].id
  })
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement on one side's database, for the report's closing note. */
export async function explain (url: string, sql: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`)
    return rows.map((row) => row['QUERY PLAN']).join('\n')
  })
}

/** The session token of role member k (the LiveQuery fan-out's subscribers; apart from the filled rows' tokens). */
export const memberToken = (k: number) => `r:${createHash('md5').update(`fpk-bench-member-${k}`).digest('hex')}`

/**
 * `count` users holding `role`, each with one session, in Parse's row format:
 * a `_User` row as sign-up writes it (the password hash of `hashFrom`, a user
 * made through the API; public read, own write), its `_Join:users:_Role` row,
 * and a `_Session` row as login writes it. Their tokens (memberToken(0…))
 * sit among the filled sessions. Returns the tokens.
 */
export async function fillRoleMembers (url: string, role: string, count: number, hashFrom: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ role: string, hash: string }>(
      'SELECT r."objectId" AS role, u._hashed_password AS hash FROM "_Role" r, "_User" u WHERE r.name = $1 AND u."objectId" = $2', [role, hashFrom])
    if (!rows[0]) throw new Error(`role ${role} or user ${hashFrom} not found`)
    const run = Date.now().toString(36)
    await client.query('BEGIN')
    await client.query(`
      INSERT INTO "_User" ("objectId", "createdAt", "updatedAt", username, _hashed_password, _rperm, _wperm)
      SELECT ${ID_SQL('m', 'k')}, now(), now(), 'member-' || $3 || '-' || k, $2, ARRAY['*', ${ID_SQL('m', 'k')}], ARRAY[${ID_SQL('m', 'k')}]
      FROM generate_series(0, $1::bigint - 1) AS k`, [count, rows[0].hash, run])
    await client.query(`
      INSERT INTO "_Join:users:_Role" ("relatedId", "owningId")
      SELECT ${ID_SQL('m', 'k')}, $2 FROM generate_series(0, $1::bigint - 1) AS k`, [count, rows[0].role])
    await client.query(`
      INSERT INTO "_Session" ("objectId", "createdAt", "updatedAt", "user", "sessionToken", "expiresAt", "createdWith")
      SELECT ${ID_SQL('t', 'k')}, now(), now(), ${ID_SQL('m', 'k')}, 'r:' || md5('fpk-bench-member-' || k), now() + interval '1 year',
             '{"action": "login", "authProvider": "password", "bench": "member"}'::jsonb
      FROM generate_series(0, $1::bigint - 1) AS k`, [count])
    await client.query('COMMIT')
    return Array.from({ length: count }, (_, k) => memberToken(k))
  })
}

// What the benchmark sends: one request shape per scenario, and the check
// that its answer is right (run once before any load, so a benchmark of an
// error page cannot pass for a result).
import { APP_ID, BENCH_CONSTANT, MASTER_KEY, MOUNT, PARSE_FUNCTION, SEEDED_NOTES, WRITE_TITLE, type ServerReady } from './shared.js'

export interface Scenario {
  /** Stable key used in the JSON results. */
  key: string
  /** The numbering: 1, 2, 3, 4, 5, 5', 6, 6' (and extra rows). */
  label: string
  title: string
  /**
   * Scenarios of a group run back to back within a round (their order rotates
   * between rounds); groups run in the order they first appear below. The
   * group 'write' resets the Note table after each run.
   */
  group: string
  /** Which process answers: the kit's bench server (default) or the NestJS peer (test/bench/nest/). */
  server?: 'kit' | 'nest'
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** What the request carries, in words, for the report. */
  credentials: string
  /** Undefined when the answer is right, else what is wrong. */
  check: (status: number, body: any) => string | undefined // eslint-disable-line @typescript-eslint/no-explicit-any
}

const json = { 'content-type': 'application/json' }
const app = { 'x-parse-application-id': APP_ID }
const master = { ...app, 'x-parse-master-key': MASTER_KEY }
const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const expect = (status: number, wanted: number, ok: boolean, what: string) =>
  status !== wanted ? `answered ${status}, expected ${wanted}` : ok ? undefined : `unexpected body (${what})`

/** Same find + count as listNotes: newest first, 10 rows, with a constraint so PostgreSQL counts for real. */
export const REST_QUERY_SAME_WORK = `${MOUNT}/classes/Note?limit=10&order=-createdAt&count=1&where=${encodeURIComponent(JSON.stringify({ objectId: { $exists: true } }))}`

export function scenarios (server: ServerReady, nest?: ServerReady): Scenario[] {
  return [...kitScenarios(server), ...(nest ? nestScenarios(nest) : [])]
}

/**
 * The NestJS 11 + TypeORM + class-validator peer: the same three endpoints on
 * the same Note shape, seeded rows and PostgreSQL flags; with and without a
 * session check. Their groups interleave them with the kit's scenarios.
 */
function nestScenarios (nest: ServerReady): Scenario[] {
  const session = { 'x-parse-session-token': nest.sessionToken }
  const noteBody = JSON.stringify({ title: WRITE_TITLE, body: 'Written by the benchmark.', status: 'published' })
  const tenRows = (status: number, body: { results?: unknown[], count?: number }) =>
    expect(status, 200, body?.results?.length === 10 && body.count === SEEDED_NOTES,
      `expected 10 rows and count ${SEEDED_NOTES}, got ${body?.results?.length} rows and count ${body?.count}`)
  const saved = (status: number, body: { objectId?: unknown, slug?: unknown }) => expect(status, 200, typeof body?.objectId === 'string' && typeof body?.slug === 'string', 'a saved note')
  return [
    {
      key: 'nestConstant', label: 'N2', group: 'constant', server: 'nest', title: 'NestJS peer: controller returning the constant',
      method: 'POST', path: `${MOUNT}/bench/benchConstant`, headers: { ...app, ...json }, body: '{}', credentials: 'none',
      check: (status, body) => expect(status, 200, sameJSON(body, BENCH_CONSTANT), 'the constant')
    },
    {
      key: 'nestListNotes', label: 'N5', group: 'read', server: 'nest', title: 'NestJS peer: listNotes, validated query, TypeORM findAndCount (10 newest + count)',
      method: 'GET', path: `${MOUNT}/notes/listNotes?limit=10`, headers: app, credentials: 'none', check: tenRows
    },
    {
      key: 'nestListNotesSession', label: 'N5s', group: 'read', server: 'nest', title: 'NestJS peer: listNotes behind a guard reading the session row on every request',
      method: 'GET', path: `${MOUNT}/notes/listNotesSession?limit=10`, headers: { ...app, ...session }, credentials: 'session token (read every request)', check: tenRows
    },
    {
      key: 'nestCreateNote', label: 'N6', group: 'write', server: 'nest', title: 'NestJS peer: createNote, class-validator DTO, TypeORM repo.save',
      method: 'POST', path: `${MOUNT}/notes/createNote`, headers: { ...app, ...json }, body: noteBody, credentials: 'none', check: saved
    },
    {
      key: 'nestCreateNoteSession', label: 'N6s', group: 'write', server: 'nest', title: 'NestJS peer: createNote behind a guard caching the session 5 s',
      method: 'POST', path: `${MOUNT}/notes/createNoteSession`, headers: { ...app, ...json, ...session }, body: noteBody, credentials: 'session token (cached 5 s)', check: saved
    }
  ]
}

function kitScenarios (server: ServerReady): Scenario[] {
  const session = { ...app, 'x-parse-session-token': server.sessionToken }
  const noteBody = { title: WRITE_TITLE, body: 'Written by the benchmark.', status: 'published' }
  const noteACL = { '*': { read: true }, [server.userId]: { read: true, write: true } }
  const constant = (status: number, body: unknown) => expect(status, 200, sameJSON(body, BENCH_CONSTANT), 'the constant')
  const wrapped = (status: number, body: unknown) => expect(status, 200, sameJSON(body, { result: BENCH_CONSTANT }), '{result: constant}')
  const tenRows = (status: number, body: { results?: unknown[], count?: number }) =>
    expect(status, 200, body?.results?.length === 10 && body.count === SEEDED_NOTES,
      `expected 10 rows and count ${SEEDED_NOTES}, got ${body?.results?.length} rows and count ${body?.count}`)
  return [
    {
      key: 'bare', label: '1', group: 'constant', title: 'bare Fastify route, constant (ceiling)',
      method: 'POST', path: '/bench/bare', headers: { ...app, ...json }, body: '{}', credentials: 'app id (ignored)', check: constant
    },
    {
      key: 'declared', label: '2', group: 'constant', title: 'declared endpoint, constant',
      method: 'POST', path: `${MOUNT}/bench/benchConstant`, headers: { ...app, ...json }, body: '{}', credentials: 'app id', check: constant
    },
    {
      key: 'declaredFunctions', label: '2b', group: 'constant', title: 'declared endpoint at {mount}/functions/{name}, constant',
      method: 'POST', path: `${MOUNT}/functions/benchConstant`, headers: { ...app, ...json }, body: '{}', credentials: 'app id', check: wrapped
    },
    {
      key: 'parseFunctions', label: '3', group: 'constant', title: 'Parse.Cloud.define via Parse\'s POST /functions (Express mount)',
      method: 'POST', path: `${MOUNT}/functions/${PARSE_FUNCTION}`, headers: { ...app, ...json }, body: '{}', credentials: 'app id', check: wrapped
    },
    {
      key: 'rolesCached', label: '4', group: 'roles', title: 'declared endpoint, session + requireRoles, role cache on',
      method: 'POST', path: `${MOUNT}/bench/benchRolesCached`, headers: { ...session, ...json }, body: '{}', credentials: 'session token', check: constant
    },
    {
      key: 'rolesUncached', label: '4 (off)', group: 'roles', title: 'declared endpoint, session + requireRoles, role cache off',
      method: 'POST', path: `${MOUNT}/bench/benchRolesUncached`, headers: { ...session, ...json }, body: '{}', credentials: 'session token', check: constant
    },
    {
      key: 'listNotes', label: '5', group: 'read', title: 'declared listNotes?limit=10 (find 10 + count, SDK in-process)',
      method: 'GET', path: `${MOUNT}/notes/listNotes?limit=10`, headers: master, credentials: 'master key', check: tenRows
    },
    {
      key: 'restQuery', label: "5'", group: 'read', title: 'Parse REST GET /classes/Note, same find 10 + count',
      method: 'GET', path: REST_QUERY_SAME_WORK, headers: master, credentials: 'master key', check: tenRows
    },
    {
      key: 'restQueryPlain', label: "5''", group: 'read', title: 'Parse REST GET /classes/Note?limit=10 (no order, no count)',
      method: 'GET', path: `${MOUNT}/classes/Note?limit=10`, headers: master, credentials: 'master key',
      check: (status, body) => expect(status, 200, body?.results?.length === 10, '10 rows')
    },
    {
      key: 'listNotesUntyped', label: '5u', group: 'read', title: 'listNotes without its response schema (same handler, JSON.stringify)',
      method: 'GET', path: `${MOUNT}/bench/benchListNotesUntyped?limit=10`, headers: master, credentials: 'master key', check: tenRows
    },
    {
      key: 'pgBaseline', label: '5pg', group: 'read', title: 'physical limit: listNotes\' two SQL statements through pg, bare Fastify route',
      method: 'GET', path: '/bench/pg-baseline', headers: app, credentials: 'none (no checks at all)',
      // The replayed find reads one row more than the page when listNotes pages (to know whether a next page exists).
      check: (status, body) => expect(status, 200, body?.results?.length >= 10 && typeof body?.count === 'number', '10 rows and a count')
    },
    {
      key: 'pgBaselineParsePool', label: '5pgp', group: 'read', title: 'the same two SQL statements on Parse\'s own pool (pg-promise), bare Fastify route',
      method: 'GET', path: '/bench/pg-baseline-parse-pool', headers: app, credentials: 'none (no checks at all)',
      check: (status, body) => expect(status, 200, body?.results?.length >= 10 && typeof body?.count === 'number', '10 rows and a count')
    },
    {
      key: 'createNote', label: '6', group: 'write', title: 'declared createNote (validation, beforeSave, insert)',
      method: 'POST', path: `${MOUNT}/notes/createNote`, headers: { ...session, ...json }, body: JSON.stringify(noteBody), credentials: 'session token',
      check: (status, body) => expect(status, 200, typeof body?.objectId === 'string' && typeof body?.slug === 'string', 'a saved note')
    },
    {
      key: 'restCreate', label: "6'", group: 'write', title: 'Parse REST POST /classes/Note, same row and ACL',
      method: 'POST', path: `${MOUNT}/classes/Note`, headers: { ...master, ...json }, body: JSON.stringify({ ...noteBody, views: 0, ACL: noteACL }), credentials: 'master key',
      check: (status, body) => expect(status, 201, typeof body?.objectId === 'string', 'an objectId')
    },
    {
      key: 'restCreateSession', label: '6s', group: 'write', title: 'Parse REST POST /classes/Note with the same session token as 6 (same caller)',
      method: 'POST', path: `${MOUNT}/classes/Note`, headers: { ...session, ...json }, body: JSON.stringify({ ...noteBody, views: 0, ACL: noteACL }), credentials: 'session token',
      check: (status, body) => expect(status, 201, typeof body?.objectId === 'string', 'an objectId')
    }
  ]
}

export interface RatioSpec {
  key: string
  label: string
  over: string
  under: string
  /** The target of issue 17, if any. */
  target?: number
  /** DESIGN.md's stricter target, if any. */
  designTarget?: number
  /** Show the two sides' profiles side by side even without a target. */
  compareProfiles?: boolean
  /** Where the target comes from, when not issue 17 (e.g. 'issue 33'). */
  source?: string
  /** p99 latency of over ÷ under must stay at or below this. */
  p99Within?: number
}

export const RATIOS: RatioSpec[] = [
  { key: '2/1', label: 'declared ÷ bare Fastify', over: 'declared', under: 'bare', target: 0.9, designTarget: 0.8 },
  { key: '2/3', label: 'declared ÷ Parse /functions', over: 'declared', under: 'parseFunctions', designTarget: 10 },
  { key: '2b/3', label: 'declared /functions route ÷ Parse /functions', over: 'declaredFunctions', under: 'parseFunctions' },
  { key: '4/1', label: 'session + roles (cache on) ÷ bare Fastify', over: 'rolesCached', under: 'bare', target: 0.6, designTarget: 0.5 },
  { key: '4on/4off', label: 'role cache on ÷ off', over: 'rolesCached', under: 'rolesUncached' },
  { key: "5/5'", label: 'listNotes ÷ Parse REST, same find + count', over: 'listNotes', under: 'restQuery', target: 2, designTarget: 2 },
  { key: "5/5''", label: 'listNotes ÷ Parse REST plain limit=10', over: 'listNotes', under: 'restQueryPlain' },
  { key: '5/5u', label: 'listNotes with its response schema ÷ without', over: 'listNotes', under: 'listNotesUntyped', target: 1.2 },
  { key: '5/5pg', label: 'listNotes ÷ the same two SQL statements through pg (physical limit; no target)', over: 'listNotes', under: 'pgBaseline', compareProfiles: true },
  { key: "6/6'", label: 'createNote ÷ Parse REST create, same row and ACL', over: 'createNote', under: 'restCreate', target: 1.5 },
  { key: '6/6s', label: 'createNote ÷ Parse REST create by the same session (same caller; no target)', over: 'createNote', under: 'restCreateSession', compareProfiles: true },
  // Issue 33: the kit against NestJS 11 + TypeORM + class-validator (test/bench/nest/).
  { key: '2/N2', label: 'declared constant ÷ NestJS constant', over: 'declared', under: 'nestConstant', target: 1.2, source: 'issue 33', compareProfiles: true },
  { key: '5/N5', label: 'listNotes (master key) ÷ NestJS findAndCount (no auth)', over: 'listNotes', under: 'nestListNotes', target: 1, p99Within: 1.5, source: 'issue 33', compareProfiles: true },
  { key: '5/N5s', label: 'listNotes ÷ NestJS with a session row read on every request (no target)', over: 'listNotes', under: 'nestListNotesSession', source: 'issue 33' },
  { key: '6/N6', label: 'createNote (session) ÷ NestJS DTO + repo.save (no auth)', over: 'createNote', under: 'nestCreateNote', target: 1, p99Within: 1.5, source: 'issue 33', compareProfiles: true },
  { key: '6/N6s', label: 'createNote ÷ NestJS with the session cached 5 s (no target)', over: 'createNote', under: 'nestCreateNoteSession', source: 'issue 33' }
]

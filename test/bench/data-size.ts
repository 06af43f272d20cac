// The data-size scenario (`npm run bench -- --data-size`, issue 46): the same
// requests on tables of 1k and 1M rows. The runner fills the kit's Note and
// _Session (Parse's row format) and the NestJS peer's note and session tables
// by SQL (data-fill.ts), then at each size runs, in interleaved rounds at a few
// connections: the example's listNotes anonymous and with a session, a page
// reached by `next` cursors at depth 10,000, getNote, createNote, /users/me,
// the first declared call of session tokens never used before, and the
// peer's list with the same page and count contract. At the largest size it
// also EXPLAINs the reads those requests sent and times writes during an
// index build (index-build.ts). With LiveQuery on (the bench server's
// BENCH_LIVE_QUERY=1, which --data-size-only sets), each size also times a
// Note event's delivery to 100 subscribers of the role (live-query-fanout.ts).
// Growth (largest ÷ smallest size) and kit ÷
// NestJS are judged against the issue's targets (data-size-report.ts).
import { setTimeout as sleep } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'
import autocannon from 'autocannon'
import { explain, fillNestTables, fillParseTables, fillRoleMembers, publicNoteId, removeWrites, sessionToken, type FillUsers } from './data-fill.js'
import { FANOUT_SPACING_MS, FANOUT_TITLE, measureFanOut, type FanOutPoint } from './live-query-fanout.js'
import { measureIndexBuild, type IndexBuildResult } from './index-build.js'
import type { DataSizePoint, DataSizeResult, DataSizeSample, DataSizeScenarioResult, DataSizeTarget } from './data-size-report.js'
import { APP_ID, MASTER_KEY, MOUNT, WRITE_TITLE, median, round, type ServerReady } from './shared.js'

export interface DataSizeSettings {
  sizes: number[]
  seconds: number
  rounds: number
  connections: number
  warmupSeconds: number
  /** Requests per round of the first-call scenario, each with a token never used before (the smallest size bounds the supply). */
  freshTokensPerRound: number
  /** Rows before the deep page (followed by `next` cursors, pages of 1000). */
  cursorDepth: number
  /** Writes every 50 ms during an index build on the largest table (index-build.ts). */
  indexBuild: boolean
  /** LiveQuery subscribers of the fan-out (0: none), and the saves timed at each size. */
  fanOutSubscribers: number
  fanOutRepetitions: number
}

/** Settings from the environment: BENCH_DATA_SIZES (1000,1000000), BENCH_DATA_SECONDS, BENCH_DATA_ROUNDS, BENCH_DATA_CONNECTIONS (10), BENCH_DATA_FRESH_TOKENS, BENCH_DATA_CURSOR_DEPTH, BENCH_DATA_INDEX_BUILD=0 (skip it), BENCH_DATA_FANOUT_SUBSCRIBERS (100; 0 skips the LiveQuery fan-out), BENCH_DATA_FANOUT_REPEATS (3). */
export function dataSizeSettings (quick: boolean): DataSizeSettings {
  const env = process.env
  const sizes = [...new Set((env.BENCH_DATA_SIZES ?? '1000,1000000').split(',').map(Number))].sort((a, b) => a - b)
  if (sizes.length < 2 || sizes.some((size) => !Number.isInteger(size) || size < 100)) {
    throw new Error(`BENCH_DATA_SIZES must name two or more whole numbers of rows ≥ 100 (got "${env.BENCH_DATA_SIZES}")`)
  }
  return {
    sizes,
    seconds: Number(env.BENCH_DATA_SECONDS ?? (quick ? 1 : 4)),
    rounds: Math.max(3, Number(env.BENCH_DATA_ROUNDS ?? 3)),
    connections: Number(env.BENCH_DATA_CONNECTIONS ?? 10),
    warmupSeconds: quick ? 1 : 2,
    freshTokensPerRound: Number(env.BENCH_DATA_FRESH_TOKENS ?? (quick ? 50 : 150)),
    cursorDepth: Number(env.BENCH_DATA_CURSOR_DEPTH ?? 10_000),
    indexBuild: env.BENCH_DATA_INDEX_BUILD !== '0',
    fanOutSubscribers: Number(env.BENCH_DATA_FANOUT_SUBSCRIBERS ?? 100),
    fanOutRepetitions: Math.max(1, Number(env.BENCH_DATA_FANOUT_REPEATS ?? 3))
  }
}

/** Owners of the filled rows; session rows are spread over them, and user 0 (role Editor) is every session scenario's caller. */
const USERS = 5
/** Filled session rows the fixed-token scenarios use (all user 0's: i % USERS === 0); first-call tokens start after them. */
const TOKEN_LIST = USERS
const TOKEN_ME = 2 * USERS
const TOKEN_WRITE = 3 * USERS
const FRESH_FROM = 3 * USERS + 1
const FRESH_WARMUP = 20
const EDITOR = 'Editor'
const PAGE = 20

interface Load {
  key: string
  title: string
  caller: string
  side: 'kit' | 'nest'
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** Each request carries a session token never used before. */
  freshToken?: boolean
  /** Rows it adds are removed after each run. */
  write?: boolean
  check: (status: number, body: any) => string | undefined // eslint-disable-line @typescript-eslint/no-explicit-any
}

const app = { 'x-parse-application-id': APP_ID }
const master = { ...app, 'x-parse-master-key': MASTER_KEY }
const json = { 'content-type': 'application/json' }
const withToken = (i: number) => ({ ...app, 'x-parse-session-token': sessionToken(i) })
const answered = (status: number, ok: boolean, what: string) => status !== 200 ? `answered ${status}` : ok ? undefined : `unexpected body (${what})`
/** A list page by the shared contract: `limit` rows, a count, its kind. */
const page = (status: number, body: { results?: unknown[], count?: unknown, countKind?: unknown }) =>
  answered(status, body?.results?.length === PAGE && typeof body.count === 'number', `${PAGE} rows and a count, got ${body?.results?.length} rows and count ${JSON.stringify(body?.count)} (${JSON.stringify(body?.countKind)})`)

async function request (origin: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number, body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const response = await fetch(origin + path, { method, headers: body === undefined ? headers : { ...headers, ...json }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: response.status, body: parsed }
}

async function requestOk (origin: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const answer = await request(origin, method, path, headers, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`)
  return answer.body
}

/** A few users through Parse's API (real _User rows), the first one holding the role Editor. */
async function createUsers (kit: ServerReady): Promise<FillUsers> {
  const run = randomBytes(3).toString('hex')
  const ids: string[] = []
  for (let k = 0; k < USERS; k++) {
    const user = await requestOk(kit.origin, 'POST', `${MOUNT}/users`, master, { username: `filled-${run}-${k}`, password: `filled-password-${k}` })
    ids.push(user.objectId as string)
  }
  const users = { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: ids[0] }] }
  const found = await requestOk(kit.origin, 'GET', `${MOUNT}/roles?where=${encodeURIComponent(JSON.stringify({ name: EDITOR }))}`, master)
  const role = (found.results as Array<{ objectId: string }>)[0]
  if (role) await requestOk(kit.origin, 'PUT', `${MOUNT}/roles/${role.objectId}`, master, { users })
  else await requestOk(kit.origin, 'POST', `${MOUNT}/roles`, master, { name: EDITOR, ACL: { '*': { read: true } }, users })
  return { ids, role: EDITOR }
}

/** The `next` cursor after `depth` rows of the anonymous list, or why there is none. */
async function deepCursor (origin: string, list: string, depth: number): Promise<{ cursor?: string, missing?: string }> {
  let after: string | undefined
  let seen = 0
  while (seen < depth) {
    const limit = Math.min(1000, depth - seen)
    const body = await requestOk(origin, 'GET', `${MOUNT}/notes/${list}?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`, app)
    if (!('next' in body) && seen === 0 && body.results?.length === limit) return { missing: `${list} answers no \`next\` cursor` }
    seen += (body.results as unknown[]).length
    if (typeof body.next !== 'string') return { missing: `the anonymous list ends after ${seen} rows` }
    after = body.next
  }
  return { cursor: after }
}

function loads (kit: ServerReady, nest: ServerReady | undefined, noteId: string, cursor: string | undefined, nestCursor: string | undefined): Load[] {
  const noteBody = JSON.stringify({ title: WRITE_TITLE, body: 'Written by the benchmark.', status: 'published' })
  const note = (status: number, body: { objectId?: unknown }) => answered(status, body?.objectId === noteId, 'the note asked for')
  const list = `${MOUNT}/notes/listNotes?limit=${PAGE}`
  return [
    { key: 'list', side: 'kit', title: 'listNotes, page 1', caller: 'anonymous', method: 'GET', path: list, headers: app, check: page },
    { key: 'listSession', side: 'kit', title: 'listNotes, page 1', caller: 'session (role Editor)', method: 'GET', path: list, headers: withToken(TOKEN_LIST), check: page },
    ...(cursor
      ? [{ key: 'deepPage', side: 'kit' as const, title: 'listNotes, the page after a deep cursor', caller: 'anonymous', method: 'GET' as const, path: `${list}&after=${encodeURIComponent(cursor)}`, headers: app, check: page }]
      : []),
    { key: 'getNote', side: 'kit', title: 'getNote (a public note)', caller: 'anonymous', method: 'GET', path: `${MOUNT}/notes/getNote?id=${noteId}`, headers: app, check: note },
    {
      key: 'createNote', side: 'kit', title: 'createNote', caller: 'session', method: 'POST', path: `${MOUNT}/notes/createNote`, headers: { ...withToken(TOKEN_WRITE), ...json }, body: noteBody, write: true,
      check: (status, body) => answered(status, typeof body?.objectId === 'string', 'a saved note')
    },
    {
      key: 'usersMe', side: 'kit', title: 'GET /users/me', caller: 'session', method: 'GET', path: `${MOUNT}/users/me`, headers: withToken(TOKEN_ME),
      check: (status, body) => answered(status, typeof body?.objectId === 'string' && typeof body?.username === 'string', 'the user')
    },
    { key: 'firstCall', side: 'kit', title: 'getNote, first call of a new token', caller: 'a session never used before', method: 'GET', path: `${MOUNT}/notes/getNote?id=${noteId}`, headers: app, freshToken: true, check: note },
    ...(nest
      ? [
          { key: 'nestList', side: 'nest' as const, title: 'NestJS peer: the same page (TypeORM, (createdAt, id) index)', caller: 'anonymous', method: 'GET' as const, path: `${MOUNT}/notes/listNotesPage?limit=${PAGE}`, headers: app, check: page },
          { key: 'nestListSession', side: 'nest' as const, title: 'NestJS peer: the same page', caller: 'session (row read every request)', method: 'GET' as const, path: `${MOUNT}/notes/listNotesPageSession?limit=${PAGE}`, headers: withToken(TOKEN_LIST), check: page },
          ...(nestCursor
            ? [{ key: 'nestDeepPage', side: 'nest' as const, title: 'NestJS peer: the page after a deep cursor', caller: 'anonymous', method: 'GET' as const, path: `${MOUNT}/notes/listNotesPage?limit=${PAGE}&after=${encodeURIComponent(nestCursor)}`, headers: app, check: page }]
            : [])
        ]
      : [])
  ]
}

/** The statements one request sends on the kit's database (the bench server's capture-sql command). */
export type CaptureSql = (path: string, headers: Record<string, string>) => Promise<string[]>

/** Requests whose reads are EXPLAINed at the largest size. */
const EXPLAINED = ['list', 'listSession', 'deepPage', 'usersMe', 'firstCall']

export async function measureDataSize (kit: ServerReady, nest: ServerReady | undefined, settings: DataSizeSettings, log: (line: string) => void, captureSql?: CaptureSql): Promise<DataSizeResult> {
  const began = performance.now()
  if (!kit.databaseUrl || (nest && !nest.databaseUrl)) throw new Error('data size: a server did not say where its database is (ServerReady.databaseUrl)')
  const origins = { kit: kit.origin, nest: nest?.origin ?? '' }
  const users = await createUsers(kit)
  // The fan-out's subscribers: users of the role, their sessions among the filled ones.
  const fanOutMissing = settings.fanOutSubscribers <= 0
    ? 'not asked for (BENCH_DATA_FANOUT_SUBSCRIBERS=0)'
    : kit.liveQueryUrl ? undefined : 'the bench server ran without LiveQuery, as the full run\'s does (BENCH_LIVE_QUERY=1 or --data-size-only)'
  const members = fanOutMissing ? [] : await fillRoleMembers(kit.databaseUrl, EDITOR, settings.fanOutSubscribers, users.ids[0])
  const fanOut: Record<string, FanOutPoint> = {}
  // The first-call scenario's supply: tokens FRESH_FROM… of the smallest size, never handed out twice.
  const supply = settings.sizes[0] - FRESH_FROM - 1 - FRESH_WARMUP
  const freshPerRound = Math.max(1, Math.min(settings.freshTokensPerRound, Math.floor(supply / settings.rounds)))
  let nextFresh = FRESH_FROM
  const freshToken = () => sessionToken(nextFresh++)

  const fire = async (load: Load, seconds: number, amount?: number): Promise<DataSizeSample> => {
    const result = await autocannon({
      url: origins[load.side] + load.path,
      method: load.method,
      headers: load.headers,
      body: load.body,
      connections: settings.connections,
      pipelining: 1,
      timeout: 60,
      ...(load.freshToken
        ? {
            amount,
            requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, 'x-parse-session-token': freshToken() } }) }]
          }
        : { duration: seconds })
    })
    if (load.write) await removeWrites(kit.databaseUrl!, '"Note"', WRITE_TITLE)
    return {
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      // A run of a fixed number of requests ends on autocannon's next one-second tick: its rate says nothing.
      reqPerSec: load.freshToken ? null : round(result['2xx'] / result.duration, 1),
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts
    }
  }

  const fills: DataSizeResult['fills'] = []
  let indexBuild: IndexBuildResult | undefined
  const explains: DataSizeResult['explains'] = []
  const byKey = new Map<string, DataSizeScenarioResult>()
  let filled = 0
  for (const size of settings.sizes) {
    log(`data size: filling to ${size} rows (kit: Note and _Session in Parse's row format${nest ? '; NestJS peer: note and session' : ''})`)
    const kitFill = await fillParseTables(kit.databaseUrl, filled + 1, size, users)
    const nestFill = nest ? await fillNestTables(nest.databaseUrl!, filled + 1, size, users) : undefined
    filled = size
    fills.push({ size, kit: kitFill, ...(nestFill ? { nest: nestFill } : {}) })
    log(`data size: filled ${size} rows: kit Note ${(kitFill.notesMs / 1000).toFixed(1)} s, _Session ${(kitFill.sessionsMs / 1000).toFixed(1)} s, VACUUM (ANALYZE) ${(kitFill.vacuumMs / 1000).toFixed(1)} s` +
      (nestFill ? `; NestJS note ${(nestFill.notesMs / 1000).toFixed(1)} s, session ${(nestFill.sessionsMs / 1000).toFixed(1)} s, VACUUM (ANALYZE) ${(nestFill.vacuumMs / 1000).toFixed(1)} s` : ''))

    const noteId = await publicNoteId(kit.databaseUrl, Math.floor(size / 2))
    const deep = await deepCursor(kit.origin, 'listNotes', settings.cursorDepth)
    const nestDeep = nest ? await deepCursor(nest.origin, 'listNotesPage', settings.cursorDepth) : {}
    if (deep.missing) log(`data size: no deep page at ${size} rows: ${deep.missing}`)
    const all = loads(kit, nest, noteId, deep.cursor, nestDeep.cursor)
    for (const load of all) {
      const headers = load.freshToken ? { ...load.headers, 'x-parse-session-token': freshToken() } : load.headers
      const answer = await request(origins[load.side], load.method, load.path, headers, load.body === undefined ? undefined : JSON.parse(load.body))
      const problem = load.check(answer.status, answer.body)
      if (problem) throw new Error(`data size ${size}: ${load.key} (${load.method} ${load.path}) ${problem}: ${JSON.stringify(answer.body).slice(0, 300)}`)
      if (load.write) await removeWrites(kit.databaseUrl, '"Note"', WRITE_TITLE)
    }
    for (const load of all) await fire(load, settings.warmupSeconds, FRESH_WARMUP)
    log(`data size ${size}: all ${all.length} requests answer correctly; warmed up`)

    const samples = new Map<string, DataSizeSample[]>(all.map((load) => [load.key, []]))
    for (let r = 0; r < settings.rounds; r++) {
      const shift = r % all.length
      for (const load of [...all.slice(shift), ...all.slice(0, shift)]) {
        await sleep(250)
        const sample = await fire(load, settings.seconds, freshPerRound)
        samples.get(load.key)!.push(sample)
        log(`data size ${size} round ${r + 1}/${settings.rounds} ${load.key.padEnd(15)} p50 ${String(sample.p50Ms).padStart(5)} ms  p99 ${String(sample.p99Ms).padStart(5)} ms  ${String(sample.reqPerSec ?? '–').padStart(7)} req/s` +
          (sample.non2xx || sample.errors ? `  non-2xx ${sample.non2xx} errors ${sample.errors}` : ''))
      }
    }

    if (!fanOutMissing) {
      fanOut[String(size)] = await measureFanOut(kit.origin, kit.liveQueryUrl!, members, EDITOR, settings.fanOutRepetitions, (line) => log(`data size ${size}: ${line}`))
      await removeWrites(kit.databaseUrl, '"Note"', FANOUT_TITLE)
    }

    if (captureSql && size === settings.sizes[settings.sizes.length - 1]) {
      // The last run's requests may still be answering after autocannon stopped: their SQL is not this request's.
      await sleep(3000)
      for (const load of all.filter((candidate) => EXPLAINED.includes(candidate.key))) {
        const headers = load.freshToken ? { ...load.headers, 'x-parse-session-token': freshToken() } : load.headers
        const reads = [...new Set(await captureSql(load.path, headers))].filter((sql) => /^\s*SELECT\b/i.test(sql) && /"(Note|_Session|_Join:[^"]+)"/.test(sql))
        for (const statement of reads) {
          const plan = await explain(kit.databaseUrl, statement).catch((error: Error) => `EXPLAIN failed: ${error.message}`)
          explains.push({ key: load.key, request: `${load.title}, ${load.caller}`, statement, plan })
        }
      }
      log(`data size ${size}: EXPLAIN (ANALYZE, BUFFERS) of ${explains.length} statements`)
    }
    if (settings.indexBuild && size === settings.sizes[settings.sizes.length - 1]) {
      const write = all.find((load) => load.key === 'createNote')!
      indexBuild = await measureIndexBuild(kit.databaseUrl, size, async () => (await request(kit.origin, write.method, write.path, write.headers, JSON.parse(write.body!))).status === 200)
      await removeWrites(kit.databaseUrl, '"Note"', WRITE_TITLE)
      for (const [how, run] of Object.entries({ CONCURRENTLY: indexBuild.concurrently, plain: indexBuild.plain })) {
        log(`data size ${size}: index build (${how}) ${run.buildMs} ms; writes every ${indexBuild.intervalMs} ms: ${run.writes} answered, ${run.failed} failed, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, max ${run.maxMs} ms`)
      }
    }

    // Every request's row in the report, the deep page's too where it could not be measured at this size.
    for (const load of loads(kit, nest, noteId, deep.cursor ?? 'none', nest ? nestDeep.cursor ?? 'none' : undefined)) {
      const scenario = byKey.get(load.key) ?? { key: load.key, title: load.title, request: `${load.method} ${load.path.split('?')[0]}`, caller: load.caller, side: load.side, bySize: {} }
      byKey.set(load.key, scenario)
      const rounds = samples.get(load.key)
      if (!rounds) {
        scenario.bySize[String(size)] = undefined
        scenario.missing = { ...scenario.missing, [String(size)]: (load.side === 'nest' ? nestDeep.missing : deep.missing) ?? 'not measured' }
        continue
      }
      scenario.bySize[String(size)] = pointOf(rounds)
    }
  }
  const scenarios = [...byKey.values()]
  return {
    sizes: settings.sizes,
    settings: { connections: settings.connections, seconds: settings.seconds, rounds: settings.rounds, freshTokensPerRound: freshPerRound, cursorDepth: settings.cursorDepth },
    fills,
    scenarios,
    ...(indexBuild ? { indexBuild } : {}),
    liveQuery: { subscribers: settings.fanOutSubscribers, repetitions: settings.fanOutRepetitions, spacingMs: FANOUT_SPACING_MS, bySize: fanOut, ...(fanOutMissing ? { missing: fanOutMissing } : {}) },
    explains,
    targets: [
      ...targetsOf(scenarios, settings.sizes, settings.cursorDepth),
      fanOutTarget(fanOut, settings.sizes, settings.fanOutSubscribers),
      ...(indexBuild ? [{ what: `writes every ${indexBuild.intervalMs} ms during an index build on the ${indexBuild.rows.toLocaleString('en-US')}-row Note table (the kit's statement), p99`, measured: indexBuild.concurrently.p99Ms, limit: 200, atMost: true, unit: 'ms' as const }] : [])
    ],
    durationSeconds: round((performance.now() - began) / 1000)
  }
}

function pointOf (rounds: DataSizeSample[]): DataSizePoint {
  return {
    p50Ms: median(rounds.map((sample) => sample.p50Ms)),
    p99Ms: median(rounds.map((sample) => sample.p99Ms)),
    reqPerSec: rounds.some((sample) => sample.reqPerSec === null) ? null : median(rounds.map((sample) => sample.reqPerSec!)),
    requests: rounds.reduce((sum, sample) => sum + sample.requests, 0),
    non2xx: rounds.reduce((sum, sample) => sum + sample.non2xx, 0),
    errors: rounds.reduce((sum, sample) => sum + sample.errors, 0),
    rounds
  }
}

/** Issue 46's targets, from the medians (growth: largest size ÷ smallest) and the per-round pairs (same size, seconds apart). */
function targetsOf (scenarios: DataSizeScenarioResult[], sizes: number[], depth: number): DataSizeTarget[] {
  const [small, large] = [String(sizes[0]), String(sizes[sizes.length - 1])]
  const point = (key: string, size: string) => scenarios.find((scenario) => scenario.key === key)?.bySize[size]
  const growth = (key: string) => {
    const [a, b] = [point(key, small), point(key, large)]
    return a && b && a.p50Ms > 0 ? round(b.p50Ms / a.p50Ms, 2) : null
  }
  /** Median of the per-round ratios of over to under at the largest size, by `metric`. */
  const paired = (over: string, under: string, metric: (sample: DataSizeSample) => number) => {
    const [a, b] = [point(over, large), point(under, large)]
    if (!a || !b) return null
    const ratios = a.rounds.map((sample, i) => metric(sample) / metric(b.rounds[i])).filter((ratio) => Number.isFinite(ratio))
    return ratios.length > 0 ? round(median(ratios), 2) : null
  }
  const label = (size: string) => Number(size) >= 1e6 ? `${Number(size) / 1e6}M` : `${Number(size) / 1e3}k`
  return [
    { what: `listNotes p50, anonymous: ${label(large)} ÷ ${label(small)}`, measured: growth('list'), limit: 3, atMost: true },
    { what: `listNotes p50, with a session: ${label(large)} ÷ ${label(small)}`, measured: growth('listSession'), limit: 3, atMost: true },
    { what: `the page after a cursor at depth ${depth.toLocaleString('en-US')} ÷ page 1, p50 at ${label(large)}`, measured: paired('deepPage', 'list', (sample) => sample.p50Ms), limit: 1.5, atMost: true },
    { what: `/users/me p50: ${label(large)} ÷ ${label(small)} sessions`, measured: growth('usersMe'), limit: 2, atMost: true },
    { what: `first declared call of a new token, p50: ${label(large)} ÷ ${label(small)} sessions`, measured: growth('firstCall'), limit: 2, atMost: true },
    { what: `NestJS peer, for comparison: its page after a cursor at depth ${depth.toLocaleString('en-US')} ÷ its page 1, p50 at ${label(large)}`, measured: paired('nestDeepPage', 'nestList', (sample) => sample.p50Ms), limit: 1.5, atMost: true },
    { what: `listNotes ÷ NestJS, req/s at ${label(large)}, anonymous`, measured: paired('list', 'nestList', (sample) => sample.reqPerSec ?? NaN), limit: 1, atMost: false },
    { what: `listNotes ÷ NestJS, req/s at ${label(large)}, with a session`, measured: paired('listSession', 'nestListSession', (sample) => sample.reqPerSec ?? NaN), limit: 1, atMost: false, note: 'the peer has no roles: a caller reads the public notes and their own' }
  ]
}

/** The LiveQuery target: the last subscriber's event at the largest size ÷ at the smallest. */
function fanOutTarget (fanOut: Record<string, FanOutPoint>, sizes: number[], subscribers: number): DataSizeTarget {
  const [a, b] = [fanOut[String(sizes[0])], fanOut[String(sizes[sizes.length - 1])]]
  const label = (size: number) => size >= 1e6 ? `${size / 1e6}M` : `${size / 1e3}k`
  return {
    what: `a LiveQuery event (role ACL) reaching ${subscribers} session subscribers, the last one: ${label(sizes[sizes.length - 1])} ÷ ${label(sizes[0])} sessions`,
    measured: a && b && a.lastMs > 0 ? round(b.lastMs / a.lastMs, 2) : null,
    limit: 2,
    atMost: true
  }
}

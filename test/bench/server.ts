// The benchmark's server process: the fixture application (Note resource and
// friends) plus the bench-only declarations, a bare Fastify route and a
// Parse.Cloud.define function, on a fresh embedded PostgreSQL. Seeds a user
// holding the bench role and the Note rows, checks itself, then tells the
// runner (its parent, over IPC) where it listens. Runs compiled (test/bench/compiled.ts), or under tsx with --tsx.
import path from 'node:path'
import { rmSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { buildExampleApp } from '../../fixtures/app.js'
import { freePort } from '../../lib/storage/free-port.js'
import { addUsersToRole } from '../../lib/index.js'
import { parseDatabase, physicalLimitRoute } from './pg-baseline.js'
import { answerRunner } from './server-commands.js'
import {
  APP_ID, BENCH_CONSTANT, benchTempDir, BENCH_DIR, BENCH_ROLE, MASTER_KEY, MOUNT, PARSE_FUNCTION, ROOT, SEEDED_NOTES,
  memorySample, type ServerReady
} from './shared.js'

if (!process.send) throw new Error('test/bench/server.ts is started by test/bench/run.ts (it needs an IPC channel)')

const masterHeaders = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }
const dir = benchTempDir('fpk-bench-')
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
// LiveQuery on Note only when asked (the data-size scenario's fan-out): off, no save pays for publishing it.
const liveQuery = process.env.BENCH_LIVE_QUERY === '1'

const started = performance.now()
const app = await buildExampleApp({
  // Pinned to one core of a busy machine, boot can outlast Fastify's 10 s plugin timeout.
  fastify: { logger: { level: process.env.BENCH_LOG_LEVEL ?? 'warn' }, pluginTimeout: 180_000 },
  kit: {
    appId: APP_ID,
    masterKey: MASTER_KEY,
    mountPath: MOUNT,
    serverURL: `${origin}${MOUNT}`,
    dataDir: path.join(dir, 'postgres'),
    // fsync off unless asked: both sides of every write comparison pay the same, and a VM's fsync is mostly noise.
    ephemeralDatabase: process.env.BENCH_FSYNC !== '1',
    functions: [path.join(ROOT, 'fixtures', 'functions'), path.join(BENCH_DIR, 'functions')],
    // Scenario 6s: Parse's own create route with the caller's session token (closed by default);
    // the data-size scenario's /users/me.
    allowedRoutes: [{ path: '/classes/Note', methods: ['POST'] }, { path: '/users/me', methods: ['GET'] }],
    // The fan-out's subscribers all come from this machine's address.
    ...(liveQuery ? { liveQuery: { classNames: ['Note'], maxConnectionsPerAddress: 1000 } } : {}),
    // The example app's idleCollection (off unless IDLE_COLLECTION is set, as in a generated project); BENCH_IDLE_COLLECTION=off forces it off.
    ...(process.env.BENCH_IDLE_COLLECTION === 'off' ? { idleCollection: false as const } : {}),
    parseServerOptions: {
      // Scenario 3: the same handler as benchConstant, the way Parse users write it without the kit.
      cloud: (Parse: { Cloud: { define: (name: string, handler: () => unknown) => void } }) => {
        Parse.Cloud.define(PARSE_FUNCTION, () => BENCH_CONSTANT)
      }
    }
  }
})
// Scenario 1, the ceiling: a plain Fastify route on the same instance.
app.post('/bench/bare', async () => BENCH_CONSTANT)
// Scenario 5pg, the physical limit of the database path: listNotes' own SQL through pg (armed below, once listening).
const baseline = physicalLimitRoute(app, APP_ID)
await app.listen({ port, host: '127.0.0.1' })
const bootMs = performance.now() - started

async function call (method: string, url: string, body?: unknown, headers: Record<string, string> = masterHeaders): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const init = body === undefined
    ? { method, headers }
    : { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }
  const response = await fetch(origin + url, init)
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`)
  return text ? JSON.parse(text) : undefined
}

// A user with a session, holding the bench role.
const credentials = { username: 'bench-user', password: 'bench-password-1' }
const user = await call('POST', `${MOUNT}/users`, credentials)
const login = await call('POST', `${MOUNT}/login`, credentials)
await addUsersToRole(BENCH_ROLE, [user.objectId as string])
const noteACL = { '*': { read: true }, [user.objectId]: { read: true, write: true } }

async function seedNotes (): Promise<void> {
  const requests = Array.from({ length: SEEDED_NOTES }, (_, i) => ({
    method: 'POST',
    path: `${MOUNT}/classes/Note`,
    body: { title: `Seeded note ${i}`, body: 'Seeded by the benchmark.', status: 'published', views: 0, ACL: noteACL }
  }))
  const results = await call('POST', `${MOUNT}/batch`, { requests }) as Array<{ success?: unknown, error?: unknown }>
  const failed = results.filter((result) => !result.success)
  if (failed.length > 0) throw new Error(`seeding Note failed: ${JSON.stringify(failed[0])}`)
}

/**
 * Back to exactly the seeded rows in a fresh table, so every round's read
 * scenarios see the same table, and the same one the NestJS peer's reads see
 * (its reset is TypeORM's clear(), a TRUNCATE). Parse's purge is a DELETE: it
 * would leave every row the write scenarios added as dead tuples that the next
 * reads scan (the find's sort and the count) until autovacuum reclaims them.
 */
async function resetNotes (): Promise<void> {
  await parseDatabase(APP_ID).none('TRUNCATE "Note"')
  await seedNotes()
}

/** Pitfall 8: the SDK inside a handler must run in-process. Over HTTP, one listNotes call would make the server see 3 requests. */
async function requestsPerListNotes (): Promise<number> {
  let seen = 0
  const count = () => { seen++ }
  app.server.on('request', count)
  try {
    await call('GET', `${MOUNT}/notes/listNotes?limit=10`)
  } finally {
    app.server.off('request', count)
  }
  return seen
}

/** Parse's own connection settings, as a URL the data-size scenario's fill connects with. */
function databaseUrl (): string {
  const cn = parseDatabase(APP_ID).$cn as string | { host: string, port: number, database: string, user: string, password: string }
  if (typeof cn === 'string') return cn
  return `postgres://${encodeURIComponent(cn.user)}:${encodeURIComponent(cn.password)}@${cn.host}:${cn.port}/${cn.database}`
}

// The fixture's own seed added a few notes: start from exactly the benchmark's rows.
await resetNotes()
const baselineSql = await baseline.arm(() => call('GET', `${MOUNT}/notes/listNotes?limit=10`))
const ready: ServerReady = {
  type: 'ready',
  origin,
  sessionToken: login.sessionToken,
  userId: user.objectId,
  bootMs,
  memory: memorySample(),
  requestsPerListNotes: await requestsPerListNotes(),
  baselineSql,
  databaseUrl: databaseUrl(),
  ...(liveQuery ? { liveQueryUrl: `${origin.replace(/^http/, 'ws')}${MOUNT}` } : {})
}

/** Every statement one request sends on Parse's pool (the data-size scenario EXPLAINs them on its filled tables). */
async function captureSql (path: string, headers: Record<string, string>): Promise<string[]> {
  const proto = (parseDatabase(APP_ID).$pool as { Client: { prototype: { query: (...args: unknown[]) => unknown } } }).Client.prototype
  const original = proto.query
  const seen: string[] = []
  proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string })?.text
    if (text) seen.push(text)
    return original.call(this, config, ...rest)
  }
  try {
    await (await fetch(origin + path, { headers })).arrayBuffer()
  } finally {
    proto.query = original
  }
  return seen
}

answerRunner({
  resetNotes: () => resetNotes(),
  captureSql,
  close: () => baseline.close().then(() => app.close()).finally(() => rmSync(dir, { recursive: true, force: true }))
})
process.send(ready)

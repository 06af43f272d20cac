// Boots the real plugin (real Parse Server, real database) for a test file.
//
// The database lane is chosen by KIT_TEST_DATABASE:
//   unset / postgres  each kit gets a database of its own on one embedded PostgreSQL
//                     per test process (shared-postgres.ts); a kit given `dataDir` or
//                     `ownDatabaseServer: true` starts its own embedded PostgreSQL in a temp dir,
//                     a copy of one cluster initialised once per machine (pg-template.ts)
//   mongo             each kit gets its own MongoDB database (test/helpers/mongo.ts):
//                     on the replica set named by MONGODB_URI, else on the wire stand-in
// and reaches it the way an application does, through DATABASE_URI.
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import type { KitOptions } from '../../plugin.js'
import { NEEDS_REAL_MONGO, mongoReplicaSet } from './mongo.js'
import { clusterFromTemplate } from './pg-template.js'

export type LaneKind = 'postgres' | 'mongo'

/** The database lane this test process runs on (read from the environment when asked). */
export const lane = {
  get kind (): LaneKind {
    const value = (process.env.KIT_TEST_DATABASE ?? '').trim().toLowerCase()
    if (value === '' || value === 'postgres') return 'postgres'
    if (value === 'mongo') return 'mongo'
    throw new Error(`KIT_TEST_DATABASE must be "postgres" or "mongo" (got "${process.env.KIT_TEST_DATABASE}")`)
  },
  /** false only on the MongoDB wire stand-in, which supports a subset of MongoDB. */
  get real (): boolean {
    return this.kind === 'postgres' || Boolean(process.env.MONGODB_URI)
  }
}

/**
 * For `t.test(name, { skip: needsRealMongo() }, fn)`: what only a real MongoDB can
 * show is skipped on the stand-in, with the reason, and runs everywhere else.
 */
export function needsRealMongo (): false | string {
  return lane.kind === 'mongo' && !lane.real ? NEEDS_REAL_MONGO : false
}

export const APP_ID = 'test-app'
export const MASTER_KEY = 'test-master-key'

export interface Kit {
  app: FastifyInstance
  /** http://127.0.0.1:{port} */
  origin: string
  /** A real HTTP request to the listening server; JSON bodies are stringified. */
  request (method: string, url: string, init?: { headers?: Record<string, string>, body?: unknown, contentType?: string }): Promise<HttpResult>
  /** Signs a user up over REST (in-process SDK sign-ups get no session token) and returns its id and session token. */
  signUp (username: string): Promise<{ id: string, token: string }>
  /** On the MongoDB stand-in: its process, which fault tests may kill. */
  standInPid?: number
}

export interface HttpResult {
  status: number
  headers: Headers
  text: string
  json: any
}

const made: string[] = []
// Whatever a test forgot (or could not reach after a failure) goes when its process ends.
process.once('exit', () => { for (const dir of made) rmSync(dir, { recursive: true, force: true }) })

/**
 * A temporary directory the OS user `postgres` can traverse (tests run as root here),
 * removed when the test process exits unless `keep` (an artefact whose path the test prints).
 */
export function tempDir (prefix = 'fpk-test-', options: { keep?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  chmodSync(dir, 0o755)
  if (!options.keep) made.push(dir)
  return dir
}

/** startKit's own options, beside the kit's. */
export interface KitTestOptions {
  /**
   * An embedded PostgreSQL of this kit's own rather than a database on the test
   * process's shared server: for a test that stops, kills or freezes the server,
   * reads its data directory, or depends on what is set server-wide. A test that
   * passes `dataDir` or `databaseURI` gets what it names without it.
   */
  ownDatabaseServer?: boolean
}

/** `server`: Fastify options over the test defaults (e.g. the kit's recommended kitServerOptions, trustProxy). */
/** `beforeKit` runs on the application before the kit registers (hooks of its own, say). */
export async function startKit (
  t: Test, { ownDatabaseServer = false, ...options }: KitOptions & KitTestOptions = {}, server: FastifyServerOptions = {},
  beforeKit?: (app: FastifyInstance) => void, afterKit?: (app: FastifyInstance) => void
): Promise<Kit> {
  // Loaded here, not at import: a file that takes only tempDir, httpRequest or the
  // keys from this helper does not pay for Parse Server, Fastify and the kit
  // (some 1.8 CPU-s a test process).
  const [{ default: Fastify }, { kitPlugin }, { resetKitConfig }] = await Promise.all([
    import('fastify'), import('../../plugin.js'), import('../../lib/config.js')
  ])
  resetKitConfig()
  // On the MongoDB lane: a database of this kit's own (the stand-in, when started, is stopped after the kit closes).
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const databaseURI = mongo?.uri
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  if (!mongo && options.databaseURI === undefined) {
    if (options.dataDir === undefined && !ownDatabaseServer) {
      // A database cloned on the process's one server (some 0.1 CPU-s, against about 1 for a server of its own).
      // Files still go beside the kit's own temp dataDir (the kit keeps them next to it).
      const { sharedPostgres } = await import('./shared-postgres.js')
      options = { ...options, ...await sharedPostgres(t) }
    } else {
      // A server of its own starts from a copy of one initialised cluster (initdb once per machine, not per kit).
      // A dataDir the test names (to boot on it again later) starts from the template too, when it is new.
      await clusterFromTemplate(options.dataDir ?? path.join(dir, 'postgres'))
    }
  }
  // A cold embedded PostgreSQL plus Parse's migrations can outlast Fastify's default 10 s
  // plugin timeout on a loaded machine; tap's per-file timeout still bounds a hung boot.
  const app = Fastify({ logger: { level: process.env.TEST_LOG_LEVEL ?? 'error' }, pluginTimeout: 120_000, ...server })
  beforeKit?.(app)
  // The plugin reads DATABASE_URI at registration, as in an application; an explicit
  // databaseURI option still wins. The embedded PostgreSQL lane never inherits one.
  await withEnv('DATABASE_URI', databaseURI, () => app.register(kitPlugin, {
    appId: APP_ID,
    masterKey: MASTER_KEY,
    dataDir: path.join(dir, 'postgres'),
    ephemeralDatabase: true,
    ...options
  }))
  afterKit?.(app)
  t.teardown(() => app.close())
  t.comment(`database lane: ${laneOf(app)}`)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const origin = `http://127.0.0.1:${port}`
  const request: Kit['request'] = (method, url, init) => httpRequest(origin, method, url, init)
  const signUp: Kit['signUp'] = async (username) => {
    const mount = app.kit.options.mountPath === '/' ? '' : app.kit.options.mountPath
    const credentials = { username, password: `${username}-password-1` }
    // The master key passes route restriction; a master sign-up opens no session. The master key opens
    // one for the user, as an admin tool may: a login would check the password again (bcrypt, some 60 ms
    // of CPU; the suite signs up hundreds of users). A test of logging in logs in itself.
    const created = await request('POST', `${mount}/users`, { headers: masterHeaders, body: credentials })
    if (created.status !== 201) throw new Error(`sign-up of ${username} failed: ${created.text}`)
    const token = `r:${randomBytes(16).toString('hex')}`
    const session = await request('POST', `${mount}/sessions`, {
      headers: masterHeaders,
      body: {
        user: { __type: 'Pointer', className: '_User', objectId: created.json.objectId },
        sessionToken: token,
        expiresAt: { __type: 'Date', iso: new Date(Date.now() + 24 * 3600_000).toISOString() },
        createdWith: { action: 'login', authProvider: 'password' }
      }
    })
    if (session.status !== 201) throw new Error(`a session for ${username} was refused: ${session.text}`)
    return { id: created.json.objectId, token }
  }
  return { app, origin, request, signUp, standInPid: mongo?.pid }
}

/** What the kit actually booted on, named like the lanes. */
function laneOf (app: FastifyInstance): string {
  const { kind, embedded } = app.kit.database
  if (kind === 'postgres') return embedded ? 'postgres (embedded)' : 'postgres (DATABASE_URI)'
  return process.env.MONGODB_URI ? 'mongo (MONGODB_URI)' : 'mongo (stand-in)'
}

async function withEnv<T> (name: string, value: string | undefined, run: () => PromiseLike<T>): Promise<T> {
  const saved = process.env[name]
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
  try {
    return await run()
  } finally {
    if (saved === undefined) delete process.env[name]
    else process.env[name] = saved
  }
}

export async function httpRequest (origin: string, method: string, url: string, init: { headers?: Record<string, string>, body?: unknown, contentType?: string } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...init.headers }
  let body: string | undefined
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
    headers['content-type'] = init.contentType ?? 'application/json'
  }
  const response = await fetch(origin + url, { method, headers, body })
  const text = await response.text()
  let json: unknown
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: response.status, headers: response.headers, text, json }
}

export const appHeaders = { 'x-parse-application-id': APP_ID }
export const masterHeaders = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }

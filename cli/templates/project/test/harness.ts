// What every test file here shares: the whole application on a throwaway
// embedded PostgreSQL, listening on a free port, called over HTTP as a client
// would. `fpk g resource` writes this file when a project lacks it.
// `npm test` runs the test files one after the other in one process
// (test/run.ts), and they share one boot of the app: a boot applies the schema
// and seeds, seconds each. A file run alone
// (`node --import tsx --test test/tags.test.ts`) boots and closes its own.
// With ephemeralDatabase, the database is a copy of one template cluster the
// kit makes once per machine (no initdb per boot).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before } from 'node:test'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { kitServerOptions, type KitOptions } from 'fastify-parse-kit'

type BuildApp = (options: { kit?: KitOptions, fastify?: FastifyServerOptions }) => Promise<FastifyInstance>

export interface Answer { status: number, text: string, json: any }

export interface TestApp {
  /** The running application (from the first test on). */
  readonly app: FastifyInstance
  /** The seeded demo user's session token. */
  readonly token: string | undefined
  /** The application's mount path (kitPlugin's mountPath, /parse unless changed), without a trailing slash. */
  readonly mount: string
  /** A request to `base` + `url`, as the application's id, with the session token and JSON body given. */
  call (method: string, url: string, options?: { token?: string, body?: unknown }): Promise<Answer>
}

/** The settings every boot here has; a file's `env` is added on top. */
const TEST_ENV: Record<string, string> = {
  APP_ID: 'test-app',
  MASTER_KEY: 'test-master-key',
  SEED_ON_BOOT: 'true', // the demo user's session token
  ADMIN_PASSWORD: 'test-admin-password',
  DOCS_ENABLED: 'true'
}

/** The app running in this process: Parse Server keeps process-wide state, so one at a time. */
let current: { key: string, ready: Promise<FastifyInstance>, dataDir: string } | undefined
/** Under test/run.ts: the boot outlives each file, for the next one with the same settings. */
let shared = false

/** Closes the running app and removes its data directory. */
async function closeBoot (): Promise<void> {
  const boot = current
  current = undefined
  if (!boot) return
  await boot.ready.then((app) => app.close(), () => {})
  rmSync(boot.dataDir, { recursive: true, force: true })
}

/**
 * Called by test/run.ts before it loads the test files: one boot serves every
 * file with the same settings, closed after the last test.
 */
export function shareOneBoot (): void {
  shared = true
  after(closeBoot)
}

function mountOf (app: FastifyInstance): string {
  return app.kit.options.mountPath.replace(/\/$/, '')
}

/**
 * Builds and starts the app (src/env.ts reads the settings at build): the
 * common ones stay set for the whole process, as tests may read them; a
 * file's own `env` only for its build.
 */
async function start (buildApp: BuildApp, extra: Record<string, string>, dataDir: string): Promise<FastifyInstance> {
  delete process.env.DATABASE_URI // always the embedded database, never a real one
  Object.assign(process.env, TEST_ENV)
  const saved = Object.keys(extra).map((key) => [key, process.env[key]] as const)
  Object.assign(process.env, extra)
  try {
    const app = await buildApp({
      // The app's own server options, with room for a boot on a busy machine (Fastify's default allows 10 s).
      fastify: kitServerOptions({ level: process.env.TEST_LOG_LEVEL || 'warn', pluginTimeout: 180_000 }),
      kit: { dataDir: path.join(dataDir, 'postgres'), ephemeralDatabase: true }
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return app
  } finally {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
}

/**
 * The app for this file's tests, started before them: under test/run.ts the
 * one the file before it started, when its settings are the same. `name`
 * names the data directory of a boot this file starts; `base` is the path
 * every `call` starts with; `env` adds settings (a different `env` means a
 * boot of its own: the running app is closed first). Files sharing a boot
 * share its database: a test asserts on the rows it made (filter by a value
 * of its own), not on a table's total.
 */
export function testApp (buildApp: BuildApp, name: string, options: { base?: string, env?: Record<string, string> } = {}): TestApp {
  const key = JSON.stringify(Object.entries(options.env ?? {}).sort())
  let app: FastifyInstance | undefined

  before(async () => {
    if (current?.key !== key) {
      await closeBoot()
      const dataDir = mkdtempSync(path.join(tmpdir(), `${name}-test-`))
      chmodSync(dataDir, 0o755) // run as root, PostgreSQL runs as the OS user postgres, which must reach it
      current = { key, ready: start(buildApp, options.env ?? {}, dataDir), dataDir }
    }
    app = await current.ready
  })

  after(async () => {
    if (!shared) await closeBoot()
  })

  /** A function of its own, not a method: `const { call } = testApp(…)` works. */
  const running = (): FastifyInstance => {
    if (!app) throw new Error('the app is built before the first test')
    return app
  }
  return {
    get app () {
      return running()
    },
    get token () {
      return app?.demoToken
    },
    get mount () {
      return mountOf(running())
    },
    async call (method, url, call = {}) {
      const app = running()
      const headers: Record<string, string> = { 'X-Parse-Application-Id': app.kit.options.appId }
      if (call.token) headers['X-Parse-Session-Token'] = call.token
      if (call.body !== undefined) headers['Content-Type'] = 'application/json'
      const { port } = app.server.address() as { port: number }
      const response = await fetch(`http://127.0.0.1:${port}${options.base ?? ''}${url}`, { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) })
      const text = await response.text()
      return { status: response.status, text, json: text ? JSON.parse(text) : undefined }
    }
  }
}

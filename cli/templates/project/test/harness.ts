// What every test file here shares: the whole application on a throwaway
// embedded PostgreSQL, listening on a free port, called over HTTP as a client
// would. `fpk g resource` writes this file when a project lacks it.
// With ephemeralDatabase, each file's database is a copy of one template
// cluster the kit makes once per machine (no initdb per file).
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

/**
 * Boots the app before this file's tests and closes it after them. `name`
 * tells the file's app id, keys and data directory apart; `base` is the path
 * every `call` starts with; `env` adds settings (src/env.ts reads them at build).
 */
function mountOf (app: FastifyInstance): string {
  return app.kit.options.mountPath.replace(/\/$/, '')
}

export function testApp (buildApp: BuildApp, name: string, options: { base?: string, env?: Record<string, string> } = {}): TestApp {
  const appId = `${name}-test-app`
  const dataDir = mkdtempSync(path.join(tmpdir(), `${name}-test-`))
  chmodSync(dataDir, 0o755) // run as root, PostgreSQL runs as the OS user postgres, which must reach it
  let app: FastifyInstance | undefined
  let origin = ''

  before(async () => {
    process.env.APP_ID = appId
    process.env.MASTER_KEY = `${name}-test-master-key`
    process.env.SEED_ON_BOOT = 'true' // the demo user's session token
    process.env.ADMIN_PASSWORD = `${name}-test-admin-password`
    delete process.env.DATABASE_URI // always the embedded database, never a real one
    Object.assign(process.env, options.env)
    app = await buildApp({
      // The app's own server options, with room for a boot on a busy machine (Fastify's default allows 10 s).
      fastify: kitServerOptions({ level: process.env.TEST_LOG_LEVEL || 'warn', pluginTimeout: 180_000 }),
      kit: { dataDir: path.join(dataDir, 'postgres'), ephemeralDatabase: true }
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    origin = `http://127.0.0.1:${port}`
  })

  after(async () => {
    await app?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  return {
    get app () {
      if (!app) throw new Error('the app is built before the first test')
      return app
    },
    get token () {
      return app?.demoToken
    },
    get mount () {
      return mountOf(this.app)
    },
    async call (method, url, call = {}) {
      const headers: Record<string, string> = { 'X-Parse-Application-Id': appId }
      if (call.token) headers['X-Parse-Session-Token'] = call.token
      if (call.body !== undefined) headers['Content-Type'] = 'application/json'
      const response = await fetch(origin + (options.base ?? '') + url, { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) })
      const text = await response.text()
      return { status: response.status, text, json: text ? JSON.parse(text) : undefined }
    }
  }
}

// The application: Fastify with fastify-parse-kit. The kit owns the boot order
// (models, database, Parse Server, routes, docs; indexes once listening), so
// this file only says what to load and which switches are on.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { kitPlugin, kitServerOptions, seedOnBoot, type KitOptions } from 'fastify-parse-kit'
import { runSeed } from './seed.js'
import { mountDashboard } from './dashboard.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..')

export interface AppOptions {
  /** Overrides for kitPlugin (tests pass a throwaway data directory). */
  kit?: KitOptions
  fastify?: FastifyServerOptions
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The seeded demo user's session token, when seeding ran and could log in. */
    demoToken: string | undefined
  }
}

export async function buildApp (options: AppOptions = {}): Promise<FastifyInstance> {
  // TRUST_PROXY (e.g. uniquelocal behind a load balancer): client addresses, and so rate limits, come from X-Forwarded-For.
  const app = Fastify(options.fastify ?? { ...kitServerOptions({ level: process.env.LOG_LEVEL || 'info' }), trustProxy: trustProxy() })
  const appId = process.env.APP_ID || '{{name}}'
  await app.register(kitPlugin, {
    appId,
    masterKey: process.env.MASTER_KEY || developmentMasterKey(app),
    dataDir: process.env.DATA_DIR || path.join(root, '.data', 'postgres'),
    // Every file in these directories is imported at boot: nothing to register.
    models: path.join(here, 'models'),
    functions: path.join(here, 'functions'),
    // ALLOW_AUTH_ROUTES=true opens login, sign-up, logout and sessions to the SDKs.
    allowAuthRoutes: envSwitch('ALLOW_AUTH_ROUTES', undefined),
    docs: envSwitch('DOCS_ENABLED', process.env.NODE_ENV !== 'production')
      ? { title: '{{name}}', version: '0.1.0', appId, path: process.env.DOCS_PATH || '/api-docs' }
      : undefined,
    ...options.kit
  })
  const production = process.env.NODE_ENV === 'production'
  const seeded = seedOnBoot()
    ? await runSeed({ sampleData: !production, log: (line) => app.log.info(line), warn: (line) => app.log.warn(line) })
    : undefined
  app.decorate('demoToken', seeded?.demoToken)
  await mountDashboard(app, { appId, masterKey: app.kit.options.masterKey, serverURL: app.kit.options.serverURL, appName: '{{name}}' })
  return app
}

function trustProxy (): boolean | string {
  const value = process.env.TRUST_PROXY?.trim() ?? ''
  return value === 'true' ? true : value === '' || value === 'false' ? false : value
}

/** A true/false switch from the environment (also 1/0, yes/no, on/off); unset or empty means `fallback`. */
function envSwitch<T extends boolean | undefined> (name: string, fallback: T): boolean | T {
  const value = process.env[name]?.trim().toLowerCase()
  if (value === undefined || value === '') return fallback
  if (['true', '1', 'yes', 'on'].includes(value)) return true
  if (['false', '0', 'no', 'off'].includes(value)) return false
  throw new Error(`${name} must be true or false (got ${JSON.stringify(process.env[name])})`)
}

/** Development only: without MASTER_KEY, a random one for this run (production refuses to boot instead). */
function developmentMasterKey (app: FastifyInstance): string | undefined {
  if (process.env.NODE_ENV === 'production') return undefined
  app.log.warn('MASTER_KEY is not set: using a random master key for this run')
  return randomBytes(24).toString('base64url')
}

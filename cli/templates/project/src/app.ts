// The application: Fastify with fastify-parse-kit. The kit owns the boot order
// (models, database, Parse Server, routes, docs; indexes once listening), so
// this file only says what to load and which switches are on.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { kitPlugin, kitServerOptions, type KitOptions } from 'fastify-parse-kit'
import { loadEnv, type Env } from './env.js'
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
    /** Where Parse Dashboard is served, when it is mounted. */
    dashboardPath: string | undefined
  }
}

export async function buildApp (options: AppOptions = {}): Promise<FastifyInstance> {
  const env = loadEnv() // here, not at import: tests set variables before building an app
  // TRUST_PROXY (e.g. uniquelocal behind a load balancer): client addresses, and so rate limits, come from X-Forwarded-For.
  const app = Fastify(options.fastify ?? { ...kitServerOptions({ level: env.logLevel }), trustProxy: env.trustProxy })
  const appId = env.appId ?? '{{name}}'
  await app.register(kitPlugin, {
    appId,
    masterKey: env.masterKey ?? developmentMasterKey(app, env),
    dataDir: env.dataDir ?? path.join(root, '.data', 'postgres'),
    databaseURI: env.databaseURI,
    redis: env.redisURL,
    // Every file in these directories is imported at boot: nothing to register
    // (src/*.ts under tsx, dist/*.js once built).
    models: path.join(here, 'models'),
    functions: path.join(here, 'functions'),
    // ALLOW_AUTH_ROUTES=true opens login, sign-up, logout and sessions to the SDKs.
    allowAuthRoutes: env.allowAuthRoutes,
    docs: env.docsEnabled
      ? { title: '{{name}}', version: '0.1.0', appId, path: env.docsPath }
      : undefined,
    // METRICS=true serves Prometheus metrics at /metrics (METRICS_TOKEN: scrapes send it as a bearer token).
    metrics: env.metrics && (env.metricsToken ? { token: env.metricsToken } : true),
    // TRACING=true adds request, function and transaction spans (docs: Observability).
    tracing: env.tracing,
    // CORS_ORIGIN=https://app.example.com,… lets only those browser origins call; unset: any, as Parse Server.
    ...(env.corsOrigins ? { cors: { origin: env.corsOrigins } } : {}),
    // SHUTDOWN_DRAIN_MS: on SIGTERM, /health answers 503 this long while requests are still served (docs: Production).
    ...(env.shutdownDrainMs !== undefined ? { shutdown: { drainDelayMs: env.shutdownDrainMs } } : {}),
    // IDLE_COLLECTION=30: 30 s without a request after serving some, one compacting collection gives the heap
    // a load grew back (V8 alone can keep it for minutes), at a CPU cost on the requests after it
    // (docs: Production, "Memory in a container"). Unset: V8 decides.
    ...(Number(process.env.IDLE_COLLECTION) > 0 ? { idleCollection: Number(process.env.IDLE_COLLECTION) } : {}),
    ...options.kit
  })
  const seeded = env.seedOnBoot
    ? await runSeed({ sampleData: !env.production, admin: env.admin, log: (line) => app.log.info(line), warn: (line) => app.log.warn(line) })
    : undefined
  app.decorate('demoToken', seeded?.demoToken)
  const dashboard = await mountDashboard(app, {
    appId,
    masterKey: app.kit.options.masterKey,
    serverURL: app.kit.options.serverURL,
    appName: '{{name}}',
    env: { NODE_ENV: env.production ? 'production' : undefined, DASHBOARD_USER: env.dashboard.user, DASHBOARD_PASS: env.dashboard.pass }
  })
  app.decorate('dashboardPath', dashboard ? '/dashboard' : undefined)
  return app
}

/** Development only: without MASTER_KEY, a random one for this run (production refuses to boot instead). */
function developmentMasterKey (app: FastifyInstance, env: Env): string | undefined {
  if (env.production) return undefined
  app.log.warn('MASTER_KEY is not set: using a random master key for this run')
  return randomBytes(24).toString('base64url')
}

// Parse Dashboard (the optional `parse-dashboard` package) served by Fastify.
// Its Express app runs in a scope of its own with catch-all routes (Express
// middleware in a Fastify scope only sees requests that reach one of its
// routes), answers with Express's own response methods (so pages keep their
// content types), and is only mounted behind a user name and password: its
// configuration carries the master key, and without users Parse Dashboard
// hands it to any request that looks local (a reverse proxy on the same host).
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyExpress from '@fastify/express'

export interface DashboardOptions {
  appId: string
  masterKey: string
  /** The URL the browser uses to reach Parse (the kit's serverURL). */
  serverURL: string
  appName: string
  /** Default '/dashboard'. */
  path?: string
  /** Read for DASHBOARD_USER, DASHBOARD_PASS and NODE_ENV. Default process.env. */
  env?: NodeJS.ProcessEnv
}

export type DashboardDecision = { mount: true, user: string, pass: string } | { mount: false, reason: string }

const CREDENTIALS_ADVICE = 'set DASHBOARD_USER and DASHBOARD_PASS (the dashboard holds the master key, so it is never served without a login)'

/** Whether to mount, from what is installed and what the environment says. */
export function dashboardDecision (installed: boolean, env: NodeJS.ProcessEnv = process.env): DashboardDecision {
  if (!installed) return { mount: false, reason: 'parse-dashboard is not installed (npm install parse-dashboard to get the dashboard)' }
  const { DASHBOARD_USER: user, DASHBOARD_PASS: pass } = env
  if (user && pass) return { mount: true, user, pass }
  return { mount: false, reason: `not mounted: ${CREDENTIALS_ADVICE}` }
}

type DashboardFactory = (config: unknown, options: unknown) => unknown

const DASHBOARD_PACKAGE = 'parse-dashboard' // optional: the application installs it

/** Whether the package can be found, without loading it (it weighs some 25 MB once loaded). */
function dashboardInstalled (): boolean {
  try {
    import.meta.resolve(DASHBOARD_PACKAGE)
    return true
  } catch (error) {
    if (isNotFound(error)) return false
    throw error
  }
}

/**
 * The package is not there. Through off-thread module hooks (tsx, test runners) the error
 * can reach this thread without its `code`: its message still says so.
 */
export function isNotFound (error: unknown): boolean {
  const { code, message } = (error ?? {}) as NodeJS.ErrnoException
  return code === 'ERR_MODULE_NOT_FOUND' || new RegExp(`^Cannot find (package|module) '${DASHBOARD_PACKAGE}'`).test(String(message))
}

async function loadParseDashboard (): Promise<DashboardFactory> {
  return ((await import(DASHBOARD_PACKAGE)) as { default: DashboardFactory }).default
}

/** Mounts Parse Dashboard when installed and configured; logs why not otherwise. Resolves to whether it is served. */
export async function mountDashboard (app: FastifyInstance, options: DashboardOptions): Promise<boolean> {
  const env = options.env ?? process.env
  const path = (options.path ?? '/dashboard').replace(/\/+$/, '')
  const installed = dashboardInstalled()
  const decision = dashboardDecision(installed, env)
  if (!decision.mount) {
    if (installed) app.log.warn(`[dashboard] ${path} ${decision.reason}`)
    else app.log.info(`[dashboard] ${decision.reason}`)
    return false
  }
  const production = env.NODE_ENV === 'production'
  // Loaded only once it is going to be served; a package that resolves but cannot load counts as absent.
  const Dashboard = await loadParseDashboard().catch((error: unknown) => {
    if (!isNotFound(error)) throw error
    return undefined
  })
  if (!Dashboard) {
    app.log.warn(`[dashboard] ${path} not mounted: ${reasonOf(dashboardDecision(false, env))}`)
    return false
  }
  const dashboard = Dashboard({
    apps: [{ appId: options.appId, masterKey: options.masterKey, serverURL: options.serverURL, appName: options.appName }],
    users: [{ user: decision.user, pass: decision.pass }],
    trustProxy: 1
  }, {
    // In production the login and the master key travel over HTTPS only (behind a proxy: X-Forwarded-Proto).
    allowInsecureHTTP: !production,
    cookieSessionSecret: env.DASHBOARD_SESSION_SECRET || undefined
  })
  await app.register(async (scope) => {
    await scope.register(fastifyExpress)
    scope.use(path, useExpressReplies as never)
    scope.use(path, dashboard as never)
    // Reached only when the dashboard passed a request on: its 404.
    const notFound = async (_request: unknown, reply: FastifyReply) => reply.code(404).type('text/plain; charset=utf-8').send('Not found')
    scope.all(path, notFound)
    scope.all(`${path}/*`, notFound)
  })
  return true
}

/**
 * @fastify/express routes `res.send` through Fastify's reply, which would label
 * every page text/plain; the dashboard answers with Express's own methods instead.
 */
function reasonOf (decision: DashboardDecision): string {
  return decision.mount ? '' : decision.reason
}

function useExpressReplies (_request: unknown, response: Record<string, unknown>, next: () => void): void {
  delete response.send
  delete response.headersSent
  next()
}

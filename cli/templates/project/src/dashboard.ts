// Parse Dashboard at /dashboard, when the optional `parse-dashboard` package is
// installed (npm install parse-dashboard). DASHBOARD_USER and DASHBOARD_PASS
// protect it; in production it is not mounted without them.
import type { FastifyInstance } from 'fastify'
import fastifyExpress from '@fastify/express'

export interface DashboardSettings {
  appId: string
  masterKey: string
  serverURL: string
  appName: string
}

export async function mountDashboard (app: FastifyInstance, settings: DashboardSettings): Promise<boolean> {
  let Dashboard: (new (options: unknown, settings: unknown) => unknown) | undefined
  try {
    const name = 'parse-dashboard' // optional: not a dependency of this project
    Dashboard = ((await import(name)) as { default: typeof Dashboard }).default
  } catch {
    app.log.debug('[dashboard] parse-dashboard is not installed (npm install parse-dashboard to get /dashboard)')
    return false
  }
  const { DASHBOARD_USER: user, DASHBOARD_PASS: pass } = process.env
  const users = user && pass ? [{ user, pass }] : undefined
  if (!users && process.env.NODE_ENV === 'production') {
    app.log.warn('[dashboard] not mounted: set DASHBOARD_USER and DASHBOARD_PASS to use /dashboard in production')
    return false
  }
  if (!users) app.log.warn('[dashboard] DASHBOARD_USER/DASHBOARD_PASS are not set: /dashboard is open to anyone who can reach this port')
  const dashboard = new Dashboard!({
    apps: [{ appId: settings.appId, masterKey: settings.masterKey, serverURL: settings.serverURL, appName: settings.appName }],
    users
  }, { allowInsecureHTTP: process.env.NODE_ENV !== 'production' })
  await app.register(async (scope) => {
    await scope.register(fastifyExpress)
    scope.use('/dashboard', dashboard as never)
  })
  return true
}

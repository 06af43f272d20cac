// Seeding: reference data (roles, the first admin) and demo data. Every step
// finds before it creates, so running it again creates nothing. It runs inside
// the server at boot (SEED_ON_BOOT), with the master key.
import Parse from 'parse/node'
import { implementACL, nestRole, SeedReport, seedMembership, seedRoles, seedRow, seedUser } from 'fastify-parse-kit'
import { Note } from './models/Note.js'
import { ADMIN, EDITOR, SUPER_ADMIN } from './roles.js'
import type { Env } from './env.js'

export const DEMO_USER = { username: 'demo', password: 'demo-password', email: 'demo@example.com' }
const DEFAULT_ADMIN_PASSWORD = 'change-me-admin'

type Log = (line: string) => void

/** Roles (Admin inside Editor, SuperAdmin for role management) and the first administrator. */
export async function seed (account: Env['admin'], report = new SeedReport(), warn: Log = console.warn): Promise<SeedReport> {
  const roles = await seedRoles([SUPER_ADMIN, ADMIN, EDITOR], report)
  await nestRole(roles.get(ADMIN)!, roles.get(EDITOR)!)
  const admin = await seedUser(adminAccount(account, warn), report)
  await seedMembership(roles.get(ADMIN)!, [admin])
  await seedMembership(roles.get(SUPER_ADMIN)!, [admin])
  return report
}

/** Demo data for development: a demo user and two notes (looked up by slug). */
export async function seedSampleData (report = new SeedReport()): Promise<SeedReport> {
  const demo = await seedUser(DEMO_USER, report)
  const byDemo = (published: boolean) => {
    const acl = implementACL({ owner: [{ user: demo, read: true, write: true }] })
    acl.setPublicReadAccess(published)
    return acl
  }
  await seedRow(Note, 'slug', { slug: 'welcome', title: 'Welcome', body: 'Notes are public once published.', status: 'published', views: 0 }, 'notes', report, byDemo(true))
  await seedRow(Note, 'slug', { slug: 'draft-ideas', title: 'Draft ideas', body: 'Only the demo user reads this.', status: 'draft', views: 0 }, 'notes', report, byDemo(false))
  return report
}

/** Logs the demo user in (in process) and returns its session token, for the ready request. */
export async function demoSession (log: Log = console.log): Promise<string | undefined> {
  try {
    const user = await Parse.User.logIn(DEMO_USER.username, DEMO_USER.password)
    return user.getSessionToken() ?? undefined
  } catch (error) {
    log(`demo login refused (${(error as Parse.Error).code ?? ''} ${(error as Error).message})`)
    return undefined
  }
}

/** ADMIN_USERNAME / ADMIN_EMAIL / ADMIN_PASSWORD (from src/env.ts); an empty password falls back to a known default, with a warning on every boot. */
export function adminAccount (admin: Env['admin'], warn: Log = console.warn): { username: string, email: string, password: string } {
  if (admin.password === '') warn(`ADMIN_PASSWORD is empty: the first admin gets the known default password "${DEFAULT_ADMIN_PASSWORD}". Set ADMIN_PASSWORD and change it.`)
  return {
    username: admin.username,
    email: admin.email,
    password: admin.password || DEFAULT_ADMIN_PASSWORD
  }
}

/** Both seeds, as the app runs them at boot; returns the report and the demo session token. */
export async function runSeed (options: { sampleData: boolean, admin: Env['admin'], log?: Log, warn?: Log }): Promise<{ report: SeedReport, demoToken?: string }> {
  const log = options.log ?? console.log
  const report = await seed(options.admin, new SeedReport(), options.warn ?? console.warn)
  if (options.sampleData) await seedSampleData(report)
  for (const line of report.lines()) log(`[seed] ${line}`)
  const demoToken = options.sampleData ? await demoSession(log) : undefined
  return { report, demoToken }
}

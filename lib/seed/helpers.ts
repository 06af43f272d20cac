// Re-runnable seeding: every helper finds first and creates only what is
// missing, with the master key, through the Parse SDK — so the same seed code
// runs inside the server (at boot) and against a running server over REST.
import Parse from 'parse/node'
import { addRoleToRole, addUsersToRole, ensureRole } from '../access/roles.js'
import type { SeedReport } from './report.js'
import { EnvInvalidError } from '../errors.js'

const master = { useMasterKey: true } as const

/** What Parse answers when a unique value (a role's name, a username, a unique field) is already taken. */
const TAKEN = new Set<number>([Parse.Error.DUPLICATE_VALUE, Parse.Error.USERNAME_TAKEN, Parse.Error.EMAIL_TAKEN])

/**
 * Runs a find-or-create step; when another run at the same time created the
 * same thing between this one's find and create, the step runs again and finds
 * it. So two seed runs at once both finish, and nothing is created twice
 * (as long as the lookup key is unique in the database).
 */
async function evenIfRacing<T> (step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (!TAKEN.has((error as { code?: number }).code ?? 0)) throw error
    return step()
  }
}

/** Finds roles by name and creates the missing ones (public read, no public write). */
export async function seedRoles (names: string[], report?: SeedReport): Promise<Map<string, Parse.Role>> {
  report?.expect('roles')
  const roles = new Map<string, Parse.Role>()
  for (const name of names) {
    const { role, created } = await evenIfRacing(() => ensureRole(name))
    if (created) report?.add('roles', name)
    roles.set(name, role)
  }
  return roles
}

/** Makes every member of `member` count as a member of `container` (once). */
export async function nestRole (member: Parse.Role, container: Parse.Role): Promise<void> {
  const already = await container.getRoles().query().equalTo('objectId', member.id).first(master)
  if (already) return
  await addRoleToRole(member, container)
}

export interface SeedUser { username: string, password: string, email?: string }

/** Finds a user by username, creating it when missing; the password of an existing user is left alone. */
export async function seedUser (user: SeedUser, report?: SeedReport): Promise<Parse.User> {
  report?.expect('users')
  return evenIfRacing(() => findOrCreateUser(user, report))
}

async function findOrCreateUser (user: SeedUser, report?: SeedReport): Promise<Parse.User> {
  const existing = await new Parse.Query(Parse.User).equalTo('username', user.username).first(master)
  if (existing) return existing
  const created = new Parse.User({ username: user.username, password: user.password, ...(user.email ? { email: user.email } : {}) })
  await created.save(null, master)
  report?.add('users', user.username)
  return created
}

/** Adds users to a role's users relation unless they are in it already. */
export async function seedMembership (role: Parse.Role, users: Parse.User[]): Promise<void> {
  const missing: Parse.User[] = []
  for (const user of users) {
    const member = await role.getUsers().query().equalTo('objectId', user.id).first(master)
    if (!member) missing.push(user)
  }
  if (missing.length === 0) return
  await addUsersToRole(role, missing)
}

/**
 * Finds a row by a unique key (e.g. slug, sku, code) and creates it from
 * `attributes` when missing. `kind` names it in the report.
 */
export async function seedRow<T extends Parse.Object> (
  model: new () => T, key: string, attributes: Record<string, unknown>, kind: string, report?: SeedReport, acl?: Parse.ACL
): Promise<T> {
  report?.expect(kind)
  const value = attributes[key]
  if (value === undefined) throw new Error(`seedRow: the attributes must include the lookup key "${key}"`)
  return evenIfRacing(() => findOrCreateRow(model, key, value, attributes, kind, report, acl))
}

async function findOrCreateRow<T extends Parse.Object> (
  model: new () => T, key: string, value: unknown, attributes: Record<string, unknown>, kind: string, report?: SeedReport, acl?: Parse.ACL
): Promise<T> {
  const existing = await new Parse.Query(model).equalTo(key, value as never).first(master)
  if (existing) return existing
  const row = new model() // eslint-disable-line new-cap -- a class passed in by the caller
  row.set(attributes)
  if (acl) row.setACL(acl)
  await row.save(null, master)
  report?.add(kind, String(value))
  return row
}

/**
 * SEED_ON_BOOT, in the words every switch of the example app and generated projects takes:
 * true/1/yes/on forces seeding on, false/0/no/off off; unset seeds unless NODE_ENV is production.
 */
export function seedOnBoot (env: NodeJS.ProcessEnv = process.env): boolean {
  const flag = env.SEED_ON_BOOT?.trim().toLowerCase()
  if (flag === 'true' || flag === '1' || flag === 'yes' || flag === 'on') return true
  if (flag === 'false' || flag === '0' || flag === 'no' || flag === 'off') return false
  if (flag) throw new EnvInvalidError(`SEED_ON_BOOT must be true or false (true/1/yes/on, false/0/no/off; got "${env.SEED_ON_BOOT}")`)
  return env.NODE_ENV !== 'production'
}

// Roles through Parse's own role graph: membership lives in a role's `users`
// relation, and a role inside another role's `roles` relation makes its
// members count as members of that role too.
import Parse from 'parse/node'
import { rolesOfUser } from '../parse/parse-calls.js'
import { parseConfig } from './parse-config.js'
import { implementACL } from './acl.js'
import { cachedRoles } from './role-cache.js'

const master = { useMasterKey: true }

/**
 * Names of every role the user holds, inherited ones included. Parse's Auth
 * walks the role graph; the role cache (configureRoleCache) may answer first.
 */
export async function getUserRoles (user: Parse.User | string, options: { cacheMs?: number } = {}): Promise<string[]> {
  const id = typeof user === 'string' ? user : user.id
  if (!id) return []
  return cachedRoles(id, () => loadRoles(id), options.cacheMs)
}

async function loadRoles (id: string): Promise<string[]> {
  const config = parseConfig(Parse.CoreManager.get('APPLICATION_ID'))
  const roles = await rolesOfUser(config, Parse.User.createWithoutData(id))
  return roles.map((role) => role.replace(/^role:/, ''))
}

/** Finds a role by name, creating it (public read, no public write) when missing. */
export async function ensureRole (name: string): Promise<{ role: Parse.Role, created: boolean }> {
  const existing = await findRole(name)
  if (existing) return { role: existing, created: false }
  const role = new Parse.Role(name, implementACL({ publicRead: true, publicWrite: false }))
  try {
    await role.save(null, master)
  } catch (error) {
    // Another call (a request, another instance's seed) created it meanwhile: _Role's name is unique.
    const created = (error as { code?: unknown }).code === Parse.Error.DUPLICATE_VALUE ? await findRole(name) : undefined
    if (!created) throw error
    return { role: created, created: false }
  }
  return { role, created: true }
}

async function findRole (name: string): Promise<Parse.Role | undefined> {
  return await new Parse.Query(Parse.Role).equalTo('name', name).first(master)
}

/** Adds users to a role's users relation (and saves the role); a role given by name is created when missing. */
export async function addUsersToRole (roleOrName: Parse.Role | string, users: Array<Parse.User | string>): Promise<Parse.Role> {
  const role = await asRole(roleOrName)
  role.getUsers().add(users.map(asUser))
  await role.save(null, master)
  return role
}

/** Removes users from a role's users relation (and saves the role). */
export async function removeUsersFromRole (roleName: string, users: Array<Parse.User | string>): Promise<Parse.Role> {
  const { role } = await ensureRole(roleName)
  role.getUsers().remove(users.map(asUser))
  await role.save(null, master)
  return role
}

/**
 * Puts role `member` inside role `container`: every member of `member` then counts as a member of `container`.
 * Roles given by name are created when missing.
 */
export async function addRoleToRole (member: Parse.Role | string, container: Parse.Role | string): Promise<void> {
  const inner = await asRole(member)
  const outer = await asRole(container)
  outer.getRoles().add(inner)
  await outer.save(null, master)
}

async function asRole (role: Parse.Role | string): Promise<Parse.Role> {
  return typeof role === 'string' ? (await ensureRole(role)).role : role
}

function asUser (user: Parse.User | string): Parse.User {
  return typeof user === 'string' ? Parse.User.createWithoutData(user) as Parse.User : user
}

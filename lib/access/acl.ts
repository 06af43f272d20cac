// Building ACLs and class-level permission subjects from a short description.
import Parse from 'parse/node'

export interface AclDescription {
  publicRead?: boolean
  publicWrite?: boolean
  roleRules?: Array<{ role: string, read?: boolean, write?: boolean }>
  owner?: Array<{ user: Parse.User | string, read?: boolean, write?: boolean }>
}

/** The subject key of a role in a class-level permission map: roleKey('Admin') → 'role:Admin'. */
export function roleKey (roleName: string): string {
  return `role:${roleName}`
}

/** An ACL built from the description (nothing is granted that it does not name); apply it with setACL. */
export function implementACL (description: AclDescription = {}): Parse.ACL {
  const acl = new Parse.ACL()
  acl.setPublicReadAccess(description.publicRead === true)
  acl.setPublicWriteAccess(description.publicWrite === true)
  for (const rule of description.roleRules ?? []) {
    acl.setRoleReadAccess(rule.role, rule.read === true)
    acl.setRoleWriteAccess(rule.role, rule.write === true)
  }
  for (const rule of description.owner ?? []) {
    const user = typeof rule.user === 'string' ? rule.user : rule.user.id
    if (!user) throw new Error('implementACL: an owner must be a saved user or a user id')
    acl.setReadAccess(user, rule.read === true)
    acl.setWriteAccess(user, rule.write === true)
  }
  return acl
}

// A single instance's answer to a change of _Role made through Parse (a save,
// its users or roles relations, a delete): once it has committed, the role
// lists Parse keeps for its cacheTTL are dropped, so Parse's role checks (ACLs,
// class-level permissions) and the kit's reads of the role graph see it at once.
// Parse drops them itself on a save only, and before the write commits: a
// deleted role kept admitting its members, and a check made between Parse's
// drop and the commit could cache the old list again. The kit's own role cache keeps
// its documented limit (roleCacheMs, ttlMs; invalidateRoles ends it). Cluster
// mode registers lib/cluster/role-evictions.ts instead, which drops both on
// every instance.
import { afterRoleWrites, forgetRoleLists } from '../parse/parse-calls.js'
import { parseConfig } from '../access/parse-config.js'
import { afterCommit } from '../storage/transaction.js'

export function forgetRolesOnChange (appId: string): void {
  afterRoleWrites(appId, () => afterCommit(() => forgetRoleLists(parseConfig(appId))))
}

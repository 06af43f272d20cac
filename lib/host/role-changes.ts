// A single instance's answer to a change of _Role made through Parse (a save,
// its users or roles relations, a delete): once it has committed, Parse's role
// lists and the kit's role cache are dropped in this process, so the next role
// check reads the role graph. Cluster mode does the same on every instance
// (lib/cluster/role-evictions.ts) and registers that instead.
import { afterRoleWrites, forgetRoleLists } from '../parse/parse-calls.js'
import { parseConfig } from '../access/parse-config.js'
import type { RoleCache } from '../access/role-cache.js'
import { afterCommit } from '../storage/transaction.js'

export function evictRolesOnChange (appId: string, roleCache: RoleCache): void {
  afterRoleWrites(appId, () => afterCommit(async () => {
    // Parse's lists first: a load starting between the two would otherwise cache a stale one.
    await forgetRoleLists(parseConfig(appId))
    roleCache.evict({ all: true })
  }))
}

// Parse's Auth loads a user's roles when its role cache misses (the roles the
// user is in, then the roles those inherit: two queries or more), and every
// request builds an Auth of its own. When the cache entry expires (5 s by
// default), every request of that user then in flight misses at once and
// runs the same queries: 50 concurrent requests of one user sent 100 role
// queries in one burst, every 5 s, and the burst was their p99. Here a load of
// one user's roles in one app joins the one running, within the limits of
// shared-loads.ts (none after a role change, none older than a second, a
// failure not shared), and each Auth keeps a copy of the answer.
// test/parse-contract.test.ts pins the Auth methods this relies on.
import { parseInternals } from './internals.js'
import { SharedLoads } from './shared-loads.js'
import { fastPathsOn } from './fast-path-switch.js'

interface RoleLoader {
  config?: { applicationId?: string }
  user: { id: string }
  userRoles?: string[]
  fetchedRoles?: boolean
  rolePromise?: unknown
  _loadRoles (): Promise<string[]>
}

const INSTALLED = Symbol.for('fastify-parse-kit.shared-role-loads')
const roleLoads = new SharedLoads<string[]>()

/** Role loads running now (for tests). */
export function roleLoadsRunning (): number {
  return roleLoads.size
}

/** Idempotent: concurrent role loads of one user in one app share the first. */
export function installSharedRoleLoads (): void {
  const prototype = parseInternals().AuthModule.Auth.prototype as unknown as RoleLoader & Record<symbol, unknown>
  if (prototype[INSTALLED]) return
  const loadRoles = prototype._loadRoles
  prototype._loadRoles = function (this: RoleLoader) {
    if (!fastPathsOn()) return loadRoles.call(this)
    return roleLoads.run(`${this.config?.applicationId}\u0000${this.user.id}`, () => loadRoles.call(this), (roles) => {
      // What _loadRoles leaves on its Auth once it has the names.
      this.userRoles = [...roles]
      this.fetchedRoles = true
      this.rolePromise = null
      return this.userRoles
    })
  }
  prototype[INSTALLED] = true
}

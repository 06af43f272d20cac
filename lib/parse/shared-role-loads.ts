// Parse's Auth loads a user's roles when its role cache misses (the roles the
// user is in, then the roles those inherit: two queries or more), and every
// request builds an Auth of its own. When the cache entry expires (5 s by
// default), every request of that user then in flight misses at once and
// runs the same queries: 50 concurrent requests of one user sent 100 role
// queries in one burst, every 5 s, and the burst was their p99. Here a load
// of one user's roles in one app that finds another already running takes its
// answer, as it would have read it from the cache that load fills; each Auth
// keeps a copy of its own. A role change clears Parse's role cache as before;
// a load already running when it does answers what it read, exactly as Parse's
// own load would (and as Parse, it is what the cache then holds).
// test/parse-contract.test.ts pins the Auth methods this relies on.
import { AuthModule } from './internals.js'

interface RoleLoader {
  config?: { applicationId?: string }
  user: { id: string }
  userRoles?: string[]
  fetchedRoles?: boolean
  rolePromise?: unknown
  _loadRoles (): Promise<string[]>
}

const INSTALLED = Symbol.for('fastify-parse-kit.shared-role-loads')
const running = new Map<string, Promise<string[]>>()

/** Role loads running now, by app and user (for tests). */
export function roleLoadsRunning (): number {
  return running.size
}

/** Idempotent: concurrent role loads of one user in one app share the first. */
export function installSharedRoleLoads (): void {
  const prototype = AuthModule.Auth.prototype as unknown as RoleLoader & Record<symbol, unknown>
  if (prototype[INSTALLED]) return
  const loadRoles = prototype._loadRoles
  prototype._loadRoles = function (this: RoleLoader) {
    const key = `${this.config?.applicationId}\u0000${this.user.id}`
    const first = running.get(key)
    if (first) {
      // What _loadRoles leaves on its Auth once it has the names.
      return first.then((roles) => {
        this.userRoles = [...roles]
        this.fetchedRoles = true
        this.rolePromise = null
        return this.userRoles
      })
    }
    const loading = loadRoles.call(this)
    running.set(key, loading)
    const forget = () => { if (running.get(key) === loading) running.delete(key) }
    loading.then(forget, forget)
    return loading
  }
  prototype[INSTALLED] = true
}

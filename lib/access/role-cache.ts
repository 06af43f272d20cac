// An optional cache of each user's role names. Off by default. Entries expire
// when read (no timers), and the map holds at most maxUsers entries, dropping
// the oldest. A revoked role stays effective until its entry expires, unless
// invalidateRoles(userId) drops it first.

export interface RoleCacheOptions {
  ttlMs: number
  /** Most users kept; the oldest entry goes first. Default 10 000. */
  maxUsers?: number
}

interface Entry { roles: string[], expiresAt: number }

const DEFAULT_MAX_USERS = 10_000
let settings: { ttlMs: number, maxUsers: number } | undefined
const entries = new Map<string, Entry>()

export function configureRoleCache (options: RoleCacheOptions | false): void {
  entries.clear()
  if (options === false) {
    settings = undefined
    return
  }
  const { ttlMs, maxUsers = DEFAULT_MAX_USERS } = options
  if (!Number.isInteger(ttlMs) || ttlMs < 0) throw new Error('configureRoleCache: ttlMs must be a whole number of milliseconds ≥ 0')
  if (!Number.isInteger(maxUsers) || maxUsers < 1) throw new Error('configureRoleCache: maxUsers must be a whole number ≥ 1')
  settings = { ttlMs, maxUsers }
}

export function invalidateRoles (userId: string): void {
  entries.delete(userId)
}

/**
 * The user's roles, from the cache when fresh. `ttlOverride` is a function's
 * roleCacheMs: 0 never caches, a positive value caches even when the cache is off.
 */
export async function cachedRoles (userId: string, load: () => Promise<string[]>, ttlOverride?: number): Promise<string[]> {
  const ttl = ttlOverride ?? settings?.ttlMs ?? 0
  if (ttl <= 0) return load()
  const now = Date.now()
  const entry = entries.get(userId)
  if (entry && entry.expiresAt > now) return entry.roles
  if (entry) entries.delete(userId)
  const roles = await load()
  entries.set(userId, { roles, expiresAt: now + ttl })
  const maxUsers = settings?.maxUsers ?? DEFAULT_MAX_USERS
  while (entries.size > maxUsers) entries.delete(entries.keys().next().value as string)
  return roles
}

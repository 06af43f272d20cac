// An optional cache of each user's role names. Off by default. Each entry keeps
// the time its roles were read, and every reader applies its own maximum age
// (configureRoleCache's ttlMs, or a function's roleCacheMs): a function with a
// 1 s limit never sees roles older than 1 s, whoever cached them. Entries are
// checked when read (no timers), and the map holds at most maxUsers entries,
// dropping the oldest. A revoked role stays effective until the reader's limit
// passes, unless invalidateRoles(userId) drops it first.
//
// With several instances (the `redis` option), evictions made here are also
// sent to every other instance, and while that channel is down the cache is
// bypassed (see lib/cluster/role-evictions.ts).

export interface RoleCacheOptions {
  ttlMs: number
  /** Most users kept; the oldest entry goes first. Default 10 000. */
  maxUsers?: number
}

/** What to drop: some users' entries, or every entry. */
export type RoleEviction = { userIds: string[] } | { all: true }

interface Entry { roles: string[], fetchedAt: number }

const DEFAULT_MAX_USERS = 10_000
let settings: { ttlMs: number, maxUsers: number } | undefined
const entries = new Map<string, Entry>()
/** Bumped by every eviction, so a load that raced with one is not stored. */
let generation = 0
let suspended = false
let broadcast: ((eviction: RoleEviction) => void) | undefined

export function configureRoleCache (options: RoleCacheOptions | false): void {
  if (options !== false) {
    const { ttlMs, maxUsers = DEFAULT_MAX_USERS } = options
    if (!Number.isInteger(ttlMs) || ttlMs < 0) throw new Error('configureRoleCache: ttlMs must be a whole number of milliseconds ≥ 0')
    if (!Number.isInteger(maxUsers) || maxUsers < 1) throw new Error('configureRoleCache: maxUsers must be a whole number ≥ 1')
    settings = { ttlMs, maxUsers }
  } else {
    settings = undefined
  }
  evictRoles({ all: true })
  broadcast?.({ all: true })
}

export function invalidateRoles (userId: string): void {
  evictRoles({ userIds: [userId] })
  broadcast?.({ userIds: [userId] })
}

/** Drops entries in this process only (what an eviction received from another instance does). */
export function evictRoles (eviction: RoleEviction): void {
  generation++
  if ('all' in eviction) entries.clear()
  else for (const id of eviction.userIds) entries.delete(id)
}

/** Where invalidateRoles and configureRoleCache also send their evictions (other instances); undefined stops it. */
export function broadcastRoleEvictions (send: ((eviction: RoleEviction) => void) | undefined): void {
  broadcast = send
}

/**
 * While suspended every check reads the role graph and nothing is stored: used
 * when evictions from other instances could be missed. Entries are dropped on
 * both transitions.
 */
export function suspendRoleCache (value: boolean): void {
  suspended = value
  evictRoles({ all: true })
}

/**
 * The user's roles, from the cache when young enough. `maxAgeOverride` is a
 * function's roleCacheMs: 0 never caches, a positive value caches even when the
 * cache is off.
 */
export async function cachedRoles (userId: string, load: () => Promise<string[]>, maxAgeOverride?: number): Promise<string[]> {
  const maxAge = maxAgeOverride ?? settings?.ttlMs ?? 0
  if (maxAge <= 0 || suspended) return load()
  const entry = entries.get(userId)
  if (entry && Date.now() - entry.fetchedAt < maxAge) return entry.roles
  const startedAt = Date.now()
  const startedGeneration = generation
  const roles = await load()
  if (generation !== startedGeneration || suspended) return roles
  // Stamped with the time the read began: the roles are at least that old.
  entries.delete(userId)
  entries.set(userId, { roles, fetchedAt: startedAt })
  const maxUsers = settings?.maxUsers ?? DEFAULT_MAX_USERS
  while (entries.size > maxUsers) entries.delete(entries.keys().next().value as string)
  return roles
}

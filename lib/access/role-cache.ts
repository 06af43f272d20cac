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
//
// Each kit has its own cache (lib/kit-state.ts); the exported functions act on
// the running kit's.
import { currentKitState, statePart } from '../kit-state.js'
import { OptionInvalidError } from '../errors.js'
import { metricHooks } from '../metrics/hooks.js'

export interface RoleCacheOptions {
  ttlMs: number
  /** Most users kept; the oldest entry goes first. Default 10 000. */
  maxUsers?: number
}

/** What to drop: some users' entries, or every entry. */
export type RoleEviction = { userIds: string[] } | { all: true }

interface Entry { roles: string[], fetchedAt: number }

const DEFAULT_MAX_USERS = 10_000

export class RoleCache {
  private settings: { ttlMs: number, maxUsers: number } | undefined
  private readonly entries = new Map<string, Entry>()
  /** Bumped by every eviction, so a load that raced with one is not stored. */
  private generation = 0
  private suspended = false
  private broadcast: ((eviction: RoleEviction) => void) | undefined

  configure (options: RoleCacheOptions | false): void {
    if (options !== false) {
      const { ttlMs, maxUsers = DEFAULT_MAX_USERS } = options
      if (!Number.isInteger(ttlMs) || ttlMs < 0) throw new OptionInvalidError('configureRoleCache: ttlMs must be a whole number of milliseconds ≥ 0')
      if (!Number.isInteger(maxUsers) || maxUsers < 1) throw new OptionInvalidError('configureRoleCache: maxUsers must be a whole number ≥ 1')
      this.settings = { ttlMs, maxUsers }
    } else {
      this.settings = undefined
    }
    this.evict({ all: true })
    this.broadcast?.({ all: true })
  }

  invalidate (userId: string): void {
    this.evict({ userIds: [userId] })
    this.broadcast?.({ userIds: [userId] })
  }

  /** Drops entries in this process only (what an eviction received from another instance does). */
  evict (eviction: RoleEviction): void {
    this.generation++
    if ('all' in eviction) this.entries.clear()
    else for (const id of eviction.userIds) this.entries.delete(id)
  }

  /** Where invalidate and configure also send their evictions (other instances); undefined stops it. */
  broadcastTo (send: ((eviction: RoleEviction) => void) | undefined): void {
    this.broadcast = send
  }

  /**
   * While suspended every check reads the role graph and nothing is stored: used
   * when evictions from other instances could be missed. Entries are dropped on
   * both transitions.
   */
  suspend (value: boolean): void {
    this.suspended = value
    this.evict({ all: true })
  }

  /**
   * The user's roles, from the cache when young enough. `maxAgeOverride` is a
   * function's roleCacheMs: 0 never caches, a positive value caches even when the
   * cache is off.
   */
  async roles (userId: string, load: () => Promise<string[]>, maxAgeOverride?: number): Promise<string[]> {
    const maxAge = maxAgeOverride ?? this.settings?.ttlMs ?? 0
    if (maxAge <= 0 || this.suspended) return load()
    const fresh = this.fresh(userId, maxAge)
    metricHooks().roleCacheLookup(fresh !== undefined)
    if (fresh) return fresh
    const startedAt = Date.now()
    const startedGeneration = this.generation
    const roles = await load()
    if (this.generation !== startedGeneration || this.suspended) return roles
    // Stamped with the time the read began: the roles are at least that old.
    this.entries.delete(userId)
    this.entries.set(userId, { roles, fetchedAt: startedAt })
    const maxUsers = this.settings?.maxUsers ?? DEFAULT_MAX_USERS
    while (this.entries.size > maxUsers) this.entries.delete(this.entries.keys().next().value as string)
    return roles
  }

  /** The cached roles when `roles` would answer from the cache, else undefined: the same rules, with no promise. */
  peek (userId: string, maxAgeOverride?: number): string[] | undefined {
    const maxAge = maxAgeOverride ?? this.settings?.ttlMs ?? 0
    if (maxAge <= 0 || this.suspended) return undefined
    const fresh = this.fresh(userId, maxAge)
    // A miss here is counted by the roles() call that follows it.
    if (fresh) metricHooks().roleCacheLookup(true)
    return fresh
  }

  private fresh (userId: string, maxAge: number): string[] | undefined {
    const entry = this.entries.get(userId)
    return entry && Date.now() - entry.fetchedAt < maxAge ? entry.roles : undefined
  }
}

/** The running kit's role cache. */
export const roleCachePart = statePart('role cache', () => new RoleCache())
const current = () => currentKitState().get(roleCachePart)

export function configureRoleCache (options: RoleCacheOptions | false): void {
  current().configure(options)
}

export function invalidateRoles (userId: string): void {
  current().invalidate(userId)
}

/** Drops entries in this process only (what an eviction received from another instance does). */
export function evictRoles (eviction: RoleEviction): void {
  current().evict(eviction)
}

/** Where invalidateRoles and configureRoleCache also send their evictions (other instances); undefined stops it. */
export function broadcastRoleEvictions (send: ((eviction: RoleEviction) => void) | undefined): void {
  current().broadcastTo(send)
}

/** See RoleCache.suspend. */
export function suspendRoleCache (value: boolean): void {
  current().suspend(value)
}

/** See RoleCache.peek. */
export function cachedRolesNow (userId: string, maxAgeOverride?: number): string[] | undefined {
  return current().peek(userId, maxAgeOverride)
}

/** See RoleCache.roles. */
export async function cachedRoles (userId: string, load: () => Promise<string[]>, maxAgeOverride?: number): Promise<string[]> {
  return current().roles(userId, load, maxAgeOverride)
}

// Cluster mode (the `redis` option): the state several instances must share,
// each piece on the engine built for it. plugin.ts decides when each part is
// wired in; this module only opens and closes them together.
import { connectRedis } from './connection.js'
import { createOutageLog, redactRedisURL, type OutageLogger } from './outage-log.js'
import { sharedRateLimitStore } from './rate-limit-store.js'
import { SharedParseCache, DEFAULT_CACHE_TTL_MS } from './parse-cache.js'
import { liveQueryPubSub } from './live-query-pubsub.js'
import { shareRoleEvictions } from './role-evictions.js'
import { boundRedis, DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis-bound.js'
import type { RoleCache } from '../access/role-cache.js'

export interface Cluster {
  displayURL: string
  /** Parse Server's cacheAdapter: sessions, users and roles in Redis. */
  cacheAdapter: SharedParseCache
  /** Parse's pubSubAdapter for LiveQuery (Parse Server and the LiveQuery server). */
  pubSubAdapter: unknown
  /** @fastify/rate-limit's `store` option. */
  rateLimitStore: ReturnType<typeof sharedRateLimitStore>
  /** To run after the application's cloud code: role changes evict role caches everywhere. */
  registerRoleTriggers (appId: string): void
  close (): Promise<void>
}

const CONSEQUENCES = 'Meanwhile rate limits count per instance, the role cache and Parse\'s session cache are bypassed, LiveQuery events reach this instance\'s own subscribers only (those for the others are queued).'

export async function openCluster (settings: { url: string, appId: string, log: OutageLogger, roleCache: RoleCache, cacheTtlMs?: number, commandTimeoutMs?: number }): Promise<Cluster> {
  const displayURL = redactRedisURL(settings.url)
  const outage = createOutageLog(settings.log, displayURL, CONSEQUENCES)
  const timeoutMs = settings.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS
  const link = await connectRedis(settings.url, displayURL, outage, timeoutMs)
  const bound = boundRedis({ timeoutMs, outage, ping: () => link.commands.ping() })
  const cacheAdapter = new SharedParseCache(settings.url, settings.appId, outage, bound, settings.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS)
  const pubSub = liveQueryPubSub(settings.url, outage, bound)
  let roles: Awaited<ReturnType<typeof shareRoleEvictions>>
  try {
    roles = await shareRoleEvictions(link, { appId: settings.appId, outage, bound, roleCache: settings.roleCache, forgetParseRoles: (eviction) => cacheAdapter.forgetRoles('all' in eviction ? undefined : eviction.userIds) })
  } catch (error) {
    bound.close()
    await link.close()
    throw error
  }
  return {
    displayURL,
    cacheAdapter,
    pubSubAdapter: pubSub.adapter,
    rateLimitStore: sharedRateLimitStore(link.commands, `fastify-parse-kit:${settings.appId}:rate-limit:`, outage, bound),
    registerRoleTriggers: (appId) => roles.registerRoleTriggers(appId),
    async close () {
      bound.close()
      roles.close()
      await pubSub.close()
      await link.close()
    }
  }
}

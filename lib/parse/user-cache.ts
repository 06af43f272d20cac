// Parse's cache of a session's user, read synchronously when it lives in this
// process (Parse's default InMemoryCacheAdapter): the same entry
// cacheController.user.get(sessionToken) would resolve with, without the
// promises and key joins of Parse's CacheController. Any other adapter (Redis
// in cluster mode) is asked through Parse's own asynchronous path.
import { parseInternals, type ParseConfig } from './internals.js'

/** The adapter cannot answer synchronously: ask cacheController.user.get. */
export const ASK_PARSE = Symbol('ask Parse\'s cache controller')

/** The cached entry, null when there is none (absent or past Parse's cache TTL), or ASK_PARSE. */
export function userCacheEntryNow (config: ParseConfig, sessionToken: string): Record<string, unknown> | null | typeof ASK_PARSE {
  const controller = config.cacheController
  if (!controller || !(controller.adapter instanceof parseInternals().InMemoryCacheAdapter)) return ASK_PARSE
  // CacheController.get joins its appId, SubCache('user') its prefix, with ':'.
  const entry = controller.adapter.cache.get(`${controller.appId}:user:${sessionToken}`)
  return entry && typeof entry === 'object' ? entry as Record<string, unknown> : null
}

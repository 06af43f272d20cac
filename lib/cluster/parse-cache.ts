// Parse Server's own RedisCacheAdapter (sessions, users, roles), shared by
// every instance: a logout or a role change made through one instance is seen
// by all. Three changes to how it behaves when Redis is away or shared:
// - it never waits for Redis longer than the Redis bound, nor rejects: while
//   disconnected or bypassed (redis-bound.ts), reads miss (Parse then reads the
//   database) and writes are skipped; Parse calls some of these without
//   awaiting them, and a rejection there would end the process;
// - `clear()` deletes this application's keys instead of FLUSHDB, which would
//   also wipe the rate-limit counters and anything else in that database;
// - when the connection comes back (or Redis answers again), this
//   application's keys are dropped, since deletions skipped during the outage
//   may have left stale entries behind.
import { parseServerPackage } from '../parse/parse-main.js'
import type { OutageLog } from './outage-log.js'
import type { RedisBound } from './redis-bound.js'

const CONNECTION = 'Parse cache'

interface NodeRedisClient {
  isReady: boolean
  on (event: string, listener: (...args: any[]) => void): unknown // eslint-disable-line @typescript-eslint/no-explicit-any
  removeAllListeners (event: string): unknown
  scanIterator (options: { MATCH: string, COUNT: number }): AsyncIterable<string[]>
  unlink (keys: string[]): Promise<number>
}

interface ParseRedisCache {
  client: NodeRedisClient
  get (key: string): Promise<unknown>
  put (key: string, value: unknown, ttl?: number): Promise<unknown>
  del (key: string): Promise<unknown>
  clear (): Promise<unknown>
}

// This file is imported at a boot that shares Parse's cache through Redis: Parse Server loads then.
const ParseRedisCacheAdapter = parseServerPackage().RedisCacheAdapter as unknown as new (redisContext: object, ttl?: number) => ParseRedisCache

/** Parse's in-memory cache default, so entries written past Parse live no longer than without Redis. */
export const DEFAULT_CACHE_TTL_MS = 5_000

export function nodeRedisOptions (url: string): Record<string, unknown> {
  return {
    url,
    socket: { connectTimeout: 5_000, reconnectStrategy: (retries: number) => Math.min(retries * 100, 1_000) }
  }
}

export class SharedParseCache extends ParseRedisCacheAdapter {
  private readonly keyPattern: string
  private readonly appId: string
  private readonly bound: RedisBound

  constructor (url: string, appId: string, outage: OutageLog, bound: RedisBound, ttlMs = DEFAULT_CACHE_TTL_MS) {
    super({ ...nodeRedisOptions(url), disableOfflineQueue: true }, ttlMs)
    this.appId = appId
    this.bound = bound
    bound.onRecovery(() => { void this.forget('*') })
    // CacheController prefixes every key with the application id.
    this.keyPattern = `${appId.replace(/[*?[\]\\]/g, '\\$&')}:`
    // Parse logs every reconnection attempt as an error; the outage log reports it once.
    this.client.removeAllListeners('error')
    let lost = false
    this.client.on('error', (error: unknown) => {
      lost = true
      outage.down('Parse cache', error)
    })
    this.client.on('ready', () => {
      if (lost) void this.forget('*')
      lost = false
      outage.up('Parse cache')
    })
  }

  /** False while disconnected or bypassed: the call is skipped. */
  private get usable (): boolean {
    return this.client.isReady && !this.bound.bypassed
  }

  override async get (key: string): Promise<unknown> {
    if (!this.usable) return null
    return this.bound.within(CONNECTION, super.get(key)).catch(() => null)
  }

  override async put (key: string, value: unknown, ttl?: number): Promise<void> {
    if (!this.usable) return
    await this.bound.within(CONNECTION, super.put(key, value, ttl)).catch(() => {})
  }

  override async del (key: string): Promise<void> {
    if (!this.usable) return
    await this.bound.within(CONNECTION, super.del(key)).catch(() => {})
  }

  override async clear (): Promise<void> {
    await this.forget('*')
  }

  /** Drops Parse's cached role lists: of these users, or of everyone. */
  async forgetRoles (userIds?: string[]): Promise<void> {
    if (userIds === undefined) return this.forget('role:*')
    await Promise.all(userIds.map((id) => this.del(`${this.appId}:role:${id}`)))
  }

  private async forget (pattern: string): Promise<void> {
    if (!this.usable) return
    const scan = async () => {
      for await (const keys of this.client.scanIterator({ MATCH: this.keyPattern + pattern, COUNT: 500 })) {
        if (keys.length > 0) await this.client.unlink(keys)
      }
    }
    // Disconnected or unanswered meanwhile: the recovery drops these keys anyway.
    await this.bound.within(CONNECTION, scan()).catch(() => {})
  }
}

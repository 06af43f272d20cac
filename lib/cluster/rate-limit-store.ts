// A store for @fastify/rate-limit that counts in Redis through the plugin's
// own RedisStore, so a limit holds across every instance. While Redis cannot
// be reached or does not answer within the Redis bound (redis-bound.ts), each instance counts on its own with the plugin's LocalStore (as
// without `redis`: at most max × instances per window) instead of refusing or
// waving everything through; Redis counting resumes as soon as it is back.
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import type { OutageLog } from './outage-log.js'
import { isCommandTimeout, type RedisBound } from './redis-bound.js'

type Counted = { current: number, ttl: number }
type Done = (error: Error | null, result: Counted | null) => void
interface Store { incr (key: string, done: Done, timeWindow: number, max: number): void }
type StoreConstructor = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => Store

// The plugin's stores are not in its public exports map; the package has none, so the files are reachable.
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreConstructor
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreConstructor

interface StoreParams { continueExceeding?: boolean, exponentialBackoff?: boolean }

/** The `store` option for @fastify/rate-limit: a class, as the plugin expects. */
export function sharedRateLimitStore (redis: Redis, keyPrefix: string, outage: OutageLog, bound: RedisBound) {
  return class SharedRateLimitStore {
    readonly shared: Store
    readonly local: Store

    constructor (params: StoreParams) {
      const continueExceeding = params.continueExceeding === true
      const exponentialBackoff = params.exponentialBackoff === true
      this.shared = new RedisStore(continueExceeding, exponentialBackoff, redis, keyPrefix)
      this.local = new LocalStore(continueExceeding, exponentialBackoff)
    }

    /** Each limiter gets its own pair; the kit's keys already name the function. */
    child (params: StoreParams): SharedRateLimitStore {
      return new SharedRateLimitStore(params)
    }

    incr (key: string, done: Done, timeWindow: number, max: number): void {
      if (redis.status !== 'ready' || bound.bypassed) return this.local.incr(key, done, timeWindow, max)
      this.shared.incr(key, (error, result) => {
        if (!error) {
          outage.up('commands')
          return done(null, result)
        }
        // ioredis' commandTimeout (the Redis bound) ran out: bypassed until Redis answers.
        if (isCommandTimeout(error)) bound.noAnswer('rate limits')
        else outage.down('commands', error)
        this.local.incr(key, done, timeWindow, max)
      }, timeWindow, max)
    }
  }
}

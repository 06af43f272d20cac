// A store for @fastify/rate-limit that counts in Redis through the plugin's
// own RedisStore, so a limit holds across every instance. While Redis cannot
// be reached or does not answer within the Redis bound (redis-bound.ts), each instance counts on its own with the plugin's LocalStore (as
// without `redis`: at most max × instances per window) instead of refusing or
// waving everything through; Redis counting resumes as soon as it is back.
import type { Redis } from 'ioredis'
import type { OutageLog } from './outage-log.js'
import { isCommandTimeout, type RedisBound } from './redis-bound.js'
import { localCounter, redisCounter, type CountDone, type RateCounter } from '../rate-limit-stores.js'

interface StoreParams { continueExceeding?: boolean, exponentialBackoff?: boolean }

/** The `store` option for @fastify/rate-limit: a class, as the plugin expects. */
export function sharedRateLimitStore (redis: Redis, keyPrefix: string, outage: OutageLog, bound: RedisBound) {
  return class SharedRateLimitStore {
    readonly shared: RateCounter
    readonly local: RateCounter

    constructor (params: StoreParams) {
      const rules = { continueExceeding: params.continueExceeding === true, exponentialBackoff: params.exponentialBackoff === true }
      this.shared = redisCounter(rules, redis, keyPrefix)
      this.local = localCounter(rules)
    }

    /** Each limiter gets its own pair; the kit's keys already name the function. */
    child (params: StoreParams): SharedRateLimitStore {
      return new SharedRateLimitStore(params)
    }

    incr (key: string, done: CountDone, timeWindow: number, max: number): void {
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

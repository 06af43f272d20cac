// @fastify/rate-limit's own counters (its RedisStore and LocalStore), which the
// package does not export: they are required by file path and constructed by
// position, here and nowhere else, so an upgrade of the plugin that moves or
// reorders them is fixed in one file. test/rate-limit-stores.test.ts pins the
// files, the argument positions and the answer shape this relies on.
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

export type Counted = { current: number, ttl: number }
export type CountDone = (error: Error | null, result: Counted | null) => void

/** One counter: `incr` adds a hit to `key` and answers its count and the ms left in its window. */
export interface RateCounter { incr (key: string, done: CountDone, timeWindow: number, max: number): void }

/** How a limit counts past its max (the plugin's own options of the same names). */
export interface CountingRules { continueExceeding: boolean, exponentialBackoff: boolean }

type StoreConstructor = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => RateCounter

// The package has no exports map, so its files are reachable by path.
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreConstructor
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreConstructor

/** Counts in Redis (one Lua script per hit), every key under `keyPrefix`: shared by every instance. */
export function redisCounter (rules: CountingRules, redis: Redis, keyPrefix: string): RateCounter {
  return new RedisStore(rules.continueExceeding, rules.exponentialBackoff, redis, keyPrefix)
}

/** Counts in this process (an LRU of the plugin's default size). */
export function localCounter (rules: CountingRules): RateCounter {
  return new LocalStore(rules.continueExceeding, rules.exponentialBackoff)
}

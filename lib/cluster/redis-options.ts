// kitPlugin's `redis` option: a URL, or { url, commandTimeoutMs }; unset, REDIS_URL.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis-bound.js'

/** The `redis` option as an object: where, and how long one Redis call on a request path may take. */
export const RedisOptionsSchema = Type.Object({
  url: Type.Optional(Type.String({ minLength: 1, problem: 'must be a non-empty string', secret: true })),
  commandTimeoutMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000, problem: 'must be a whole number of milliseconds from 10 to 60000' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: "must be { url: 'redis://…', commandTimeoutMs?: 1000 }" })
export type RedisOptions = Static<typeof RedisOptionsSchema>

/** The bound of one Redis call on a request path, in ms. */
export function redisCommandTimeoutMs (value: string | RedisOptions | undefined): number {
  return (typeof value === 'object' ? value.commandTimeoutMs : undefined) ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS
}

/** The URL, from the option or REDIS_URL (the option's shape was checked against RedisOptionsSchema). */
export function redisURL (option: string | RedisOptions | undefined, fail: (option: string, problem: string) => Error): string | undefined {
  const value = (typeof option === 'object' ? option.url : option) ?? (process.env.REDIS_URL || undefined)
  if (value === undefined) return undefined
  let url: URL | undefined
  try { url = new URL(value) } catch {}
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '') {
    throw fail('redis', `must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379 (from the option or REDIS_URL; got "${value.replace(/\/\/([^:/@]*):([^@]+)@/, '//$1:***@')}")`)
  }
  return value
}

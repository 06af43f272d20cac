// Rate limits on the auth routes `allowAuthRoutes` opens: POST/GET /login,
// sign-up (POST /users), /requestPasswordReset and /verificationEmailRequest,
// counted per client address and per username (or email), so that neither one
// address trying many users nor many addresses trying one user can guess
// passwords. Counted with @fastify/rate-limit's stores: in memory, or the
// shared Redis store in cluster mode, so the limit holds across instances.
// Each attempt counts, whether it succeeds or not. Inner requests of a /batch
// count as the attempts they are.
import { createRequire } from 'node:module'
import type { FastifyReply, FastifyRequest } from 'fastify'
import Parse from 'parse/node'
import type { AuthRateLimit } from '../options.js'

type Counted = { current: number, ttl: number }
interface Store { incr (key: string, done: (error: Error | null, result: Counted | null) => void, timeWindow: number, max: number): void }
export type StoreClass = new (params: { continueExceeding?: boolean, exponentialBackoff?: boolean }) => Store

const require = createRequire(import.meta.url)
// Not in the plugin's exports map (it has none); the same store the plugin uses without `store`.
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean) => Store

/** An auth attempt: the route, and the accounts it names (usernames or emails, case folded). */
interface Attempt { route: string, names: string[] }

/** Routes, the verb each is attempted with, and the body fields that name an account. */
const NAMED_BY: Record<string, { method: string, fields: string[] }> = {
  '/login': { method: 'POST', fields: ['username', 'email'] },
  '/users': { method: 'POST', fields: ['username', 'email'] },
  '/requestpasswordreset': { method: 'POST', fields: ['email'] },
  '/verificationemailrequest': { method: 'POST', fields: ['email'] }
}

/** The attempt a request under the mount makes, if it is one (`path` relative to the mount, `method` after `_method`). */
export function authAttempt (method: string, path: string, body: unknown, query: unknown): Attempt | undefined {
  const route = path.toLowerCase().replace(/\/+$/, '')
  const named = NAMED_BY[route]
  if (!named) return undefined
  if (route === '/login') {
    if (method !== 'POST' && method !== 'GET') return undefined
    return { route, names: namesIn(loginPayload(body, query), named.fields) }
  }
  if (method !== named.method) return undefined
  return { route, names: namesIn(body, named.fields) }
}

/** What Parse's login reads: the body, unless the query string names the account the body does not. */
function loginPayload (body: unknown, query: unknown): unknown {
  const from = (source: unknown, field: string) => typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[field] : undefined
  const payload = typeof body === 'object' && body !== null ? body : {}
  const fromQuery = (!from(payload, 'username') && from(query, 'username')) || (!from(payload, 'email') && from(query, 'email'))
  return fromQuery ? query : payload
}

function namesIn (source: unknown, fields: string[]): string[] {
  if (typeof source !== 'object' || source === null) return []
  return fields.flatMap((field) => {
    const value = (source as Record<string, unknown>)[field]
    return typeof value === 'string' && value !== '' ? [value.toLowerCase()] : []
  })
}

export interface AuthLimiter {
  /** Counts the attempts; answers 429 (and returns true) when one is over a limit. */
  refuse (request: FastifyRequest, reply: FastifyReply, attempts: Attempt[]): Promise<boolean>
}

export function authLimiter (limits: AuthRateLimit, Shared?: StoreClass): AuthLimiter {
  const store: Store = Shared ? new Shared({}) : new LocalStore(false, false)
  const count = (key: string, max: number) => new Promise<Counted | undefined>((resolve) => {
    store.incr(key, (error, result) => resolve(error ? undefined : result ?? undefined), limits.windowMs, max)
  })
  return {
    async refuse (request, reply, attempts) {
      for (const attempt of attempts) {
        const checks: Array<[string, number, string]> = [[`auth|ip|${request.ip}`, limits.maxPerAddress, 'from this address']]
        for (const name of new Set(attempt.names)) checks.push([`auth|name|${name}`, limits.max, 'for this account'])
        for (const [key, max, scope] of checks) {
          const counted = await count(key, max)
          if (!counted || counted.current <= max) continue
          const seconds = Math.max(1, Math.ceil(counted.ttl / 1000))
          await reply.code(429).header('retry-after', String(seconds)).send({
            code: Parse.Error.REQUEST_LIMIT_EXCEEDED,
            error: `Too many sign-in attempts ${scope}: at most ${max} per ${limits.windowMs / 1000} s. Retry in ${seconds} s.`
          })
          return true
        }
      }
      return false
    }
  }
}

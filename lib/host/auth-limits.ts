// Rate limits on the auth routes `allowAuthRoutes` opens: POST/GET /login,
// sign-up (POST /users), /requestPasswordReset and /verificationEmailRequest,
// and on the forms of Parse's pages (POST {pages}/{appId}/request_password_reset,
// which takes a reset token, and {pages}/{appId}/resend_verification_email,
// which sends an email), counted per client address and per username (or email), so that neither one
// address trying many users nor many addresses trying one user can guess
// passwords. Counted in memory (attempt-counters.ts: a junk flood cannot evict
// a counter that matters), or in the shared Redis store in cluster mode, so
// the limit holds across instances.
// Each attempt counts, whether it succeeds or not. Inner requests of a /batch
// count as the attempts they are.
//
// One account, one counter: Parse logs in by username or by email (and takes
// an email in the username field), so an identifier with an @ is looked up as
// an email and counted under its account's username. That is one indexed read
// per such attempt (two for an email in mixed case no account has as given),
// made only after the address limit admitted it (Parse's own login and
// password-reset read the same row), and remembered for the window. An email
// no account has is counted as itself.
import type { FastifyReply, FastifyRequest } from 'fastify'
import Parse from 'parse/node'
import type { AuthRateLimit } from '../options.js'
import { AttemptCounters, ATTEMPT_COUNTERS_CAPACITY, type Counted } from './attempt-counters.js'
import { rateLimitAddress } from '../access/client-address.js'

interface Store { incr (key: string, done: (error: Error | null, result: Counted | null) => void, timeWindow: number, max: number): void }
export type StoreClass = new (params: { continueExceeding?: boolean, exponentialBackoff?: boolean }) => Store

/** An auth attempt: the route, and the accounts it names (usernames or emails, as given). */
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

/** The forms of Parse's pages a browser posts, and the body field that names the account. */
const PAGE_FORMS = new Set(['request_password_reset', 'resend_verification_email'])

/**
 * The attempt a POST to one of Parse's pages' forms makes (`path` relative to the mount,
 * `pagesEndpoint` Parse's pages.pagesEndpoint), matched as Express routes it: any case,
 * a trailing slash.
 */
export function pageFormAttempt (method: string, path: string, body: unknown, pagesEndpoint: string): Attempt | undefined {
  if (method !== 'POST') return undefined
  const prefix = `/${pagesEndpoint}/`.toLowerCase()
  const lower = path.toLowerCase().replace(/\/+$/, '')
  if (!lower.startsWith(prefix)) return undefined
  const [appId, form, ...rest] = lower.slice(prefix.length).split('/')
  if (!appId || rest.length > 0 || !PAGE_FORMS.has(form)) return undefined
  return { route: `/${pagesEndpoint}/${form}`, names: namesIn(body, ['username']) }
}

function namesIn (source: unknown, fields: string[]): string[] {
  if (typeof source !== 'object' || source === null) return []
  return fields.flatMap((field) => {
    const value = (source as Record<string, unknown>)[field]
    return typeof value === 'string' && value !== '' ? [value] : []
  })
}

export interface AuthLimiter {
  /** Counts the attempts; answers 429 (and returns true) when one is over a limit. */
  refuse (request: FastifyRequest, reply: FastifyReply, attempts: Attempt[]): Promise<boolean>
}

/** The username of the account whose email is `email`, if any. */
export type UsernameForEmail = (email: string) => Promise<string | undefined>

async function usernameForEmail (email: string): Promise<string | undefined> {
  const user = await new Parse.Query(Parse.User).equalTo('email', email).select('username').first({ useMasterKey: true })
  return user?.get('username') as string | undefined
}

export function authLimiter (limits: AuthRateLimit, Shared?: StoreClass, findUsername: UsernameForEmail = usernameForEmail): AuthLimiter {
  // Without Redis: addresses and accounts in counters of their own, whose eviction spares repeated attempts.
  const shared = Shared ? new Shared({}) : undefined
  const addresses = new AttemptCounters()
  const accounts = new AttemptCounters()
  const count = (key: string, max: number) => new Promise<Counted | undefined>((resolve) => {
    if (!shared) return resolve((key.startsWith('auth|ip|') ? addresses : accounts).incr(key, limits.windowMs))
    shared.incr(key, (error, result) => resolve(error ? undefined : result ?? undefined), limits.windowMs, max)
  })
  const accountOf = accountResolver(findUsername, limits.windowMs)
  const over = async (reply: FastifyReply, key: string, max: number, scope: string) => {
    const counted = await count(key, max)
    if (!counted || counted.current <= max) return false
    const seconds = Math.max(1, Math.ceil(counted.ttl / 1000))
    await reply.code(429).header('retry-after', String(seconds)).send({
      code: Parse.Error.REQUEST_LIMIT_EXCEEDED,
      error: `Too many sign-in attempts ${scope}: at most ${max} per ${limits.windowMs / 1000} s. Retry in ${seconds} s.`
    })
    return true
  }
  return {
    async refuse (request, reply, attempts) {
      for (const attempt of attempts) {
        if (await over(reply, `auth|ip|${rateLimitAddress(request.ip)}`, limits.maxPerAddress, 'from this address')) return true
        const accounts = new Set(await Promise.all(attempt.names.map(accountOf)))
        for (const account of accounts) {
          if (await over(reply, `auth|name|${account}`, limits.max, 'for this account')) return true
        }
      }
      return false
    }
  }
}

/**
 * An identifier's account, case folded: itself, or for an email the username of the account that
 * has it (remembered for a window). Parse keeps an email as it was given and logs in by it exactly,
 * so the email is looked up as given, then folded: an attempt that can log in is always counted on
 * its account, and no more than two indexed reads are made for one that cannot.
 */
function accountResolver (findUsername: UsernameForEmail, windowMs: number): (given: string) => Promise<string> {
  const known = new Map<string, { username: string, at: number }>()
  return async (given) => {
    const name = given.toLowerCase()
    if (!name.includes('@')) return name
    const remembered = known.get(given)
    if (remembered && Date.now() - remembered.at < windowMs) return remembered.username
    let username: string | undefined
    try {
      username = (await findUsername(given) ?? (given === name ? undefined : await findUsername(name)))?.toLowerCase()
    } catch {
      return name // the database is away: Parse will say so; count the email
    }
    if (!username) return name
    known.delete(given)
    if (known.size >= ATTEMPT_COUNTERS_CAPACITY) known.delete(known.keys().next().value as string)
    known.set(given, { username, at: Date.now() })
    return username
  }
}

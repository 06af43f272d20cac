// Who is calling when a session token is presented (the master key and nobody
// are answered by the admission, admission.ts): the user behind it, resolved
// through Parse Server's own Auth and its user cache.
//
// The common case — a session Parse has cached — is read from that same cache
// here, and the Parse.User is only built when something reads `user` (a role
// check needs the id alone). Parse's cache stays the authority: a logout or a
// deleted session removes the entry there, and the next request misses.
// Expired entries, a cache miss, and extendSessionOnUse all take Parse's own
// getAuthForSessionToken.
import Parse from 'parse/node'
import type { ParseConfig } from '../parse/internals.js'
import { authOfSession } from '../parse/parse-calls.js'
import { parseConfig } from './parse-config.js'
import { runAsCaller } from '../parse/direct-writes.js'
import { ASK_PARSE, userCacheEntryNow } from '../parse/user-cache.js'
import type { Credentials } from './credentials.js'
import { callerWithoutLookup, type Admission, type Caller } from './admission.js'
import { currentKitState, statePart } from '../kit-state.js'
import { SharedLoads } from '../parse/shared-loads.js'

/**
 * The caller when nothing has to be awaited: the master key, no session, or a
 * session Parse's in-process cache holds; else undefined (lookUpCaller then).
 * The master key is judged by the admission's verdict, taken once when it was admitted.
 */
export function callerNow (admission: Admission, appId: string): Caller | undefined {
  return callerWithoutLookup(admission) ?? cachedCallerNow(admission.credentials, appId)
}

/** Session lookups running now, by session token (one per running kit); an unknown token's refusal is every joiner's answer. */
const lookupsPart = statePart('session lookups', () => new SharedLoads<Caller>((error) => (error as { code?: unknown })?.code === Parse.Error.INVALID_SESSION_TOKEN))

/**
 * The session's caller when callerNow had none: Parse's cache on another
 * adapter, else Parse's session lookup. When Parse's cache entry for a session
 * expires, every request of that session then in flight misses at once; they
 * join the one lookup running (which fills the cache), within the limits of
 * parse/shared-loads.ts, and read the cache after it, each building its own user.
 */
export async function lookUpCaller (credentials: Credentials, appId: string): Promise<Caller> {
  const sessionToken = credentials.sessionToken!
  const config = parseConfig(appId)
  if (config.extendSessionOnUse) return await callerBySession(config, credentials)
  const cached = await cachedUser(config, sessionToken)
  if (cached) return new CachedSessionCaller(cached, sessionToken)
  return await currentKitState().get(lookupsPart).run(sessionToken, () => callerBySession(config, credentials), async () => {
    const filled = await cachedUser(config, sessionToken)
    return filled ? new CachedSessionCaller(filled, sessionToken) : await callerBySession(config, credentials)
  })
}

/** Parse's own session lookup (it fills Parse's user cache). */
async function callerBySession (config: ParseConfig, credentials: Credentials): Promise<Caller> {
  const auth = await authOfSession(config, credentials.sessionToken!, credentials.installationId)
  const user = auth.user
  return { master: false, user, userId: user?.id }
}

/**
 * The session's caller straight from Parse's in-process cache, with no promise:
 * undefined when there is no session token, the entry is missing or expired,
 * extendSessionOnUse is on, or the cache lives elsewhere (lookUpCaller decides then).
 * Call after callerWithoutLookup (it answers for the master key).
 */
function cachedCallerNow (credentials: Credentials, appId: string): Caller | undefined {
  const sessionToken = credentials.sessionToken
  if (!sessionToken) return undefined
  const config = parseConfig(appId)
  if (config.extendSessionOnUse) return undefined
  const entry = userCacheEntryNow(config, sessionToken)
  if (entry === ASK_PARSE || !usable(entry)) return undefined
  return new CachedSessionCaller(entry, sessionToken)
}

/** Parse's cache entry for this session, unless absent or expired (then Parse's own path decides). */
async function cachedUser (config: ParseConfig, sessionToken: string): Promise<Record<string, unknown> | undefined> {
  const now = userCacheEntryNow(config, sessionToken)
  const entry = now === ASK_PARSE ? await config.cacheController?.user.get(sessionToken) as Record<string, unknown> | null | undefined : now
  return usable(entry) ? entry : undefined
}

/** An entry naming a user whose session has not expired. */
function usable (entry: Record<string, unknown> | null | undefined): entry is Record<string, unknown> {
  if (!entry || typeof entry.objectId !== 'string') return false
  return !(entry.expiresAt && Date.parse(entry.expiresAt as string) < Date.now())
}

/** A session's caller from Parse's cache entry; the Parse.User (a copy: its expiry is the session's, not a field of the user) is built on first read. */
class CachedSessionCaller implements Caller {
  readonly master = false
  readonly userId: string
  /** The session it was read for: the caller is also what runAsCaller needs (see actingAs). */
  readonly sessionToken: string
  private readonly entry: Record<string, unknown>
  private built: Parse.User | undefined

  constructor (entry: Record<string, unknown>, sessionToken: string) {
    this.entry = entry
    this.userId = entry.objectId as string
    this.sessionToken = sessionToken
  }

  get user (): Parse.User {
    if (!this.built) {
      const { expiresAt: _expiresAt, ...userJSON } = this.entry
      this.built = Parse.Object.fromJSON(userJSON as never) as Parse.User
    }
    return this.built
  }
}

/**
 * Runs a handler so that SDK saves it makes with the caller's own session token
 * reuse the user resolved for this request (see parse/direct-writes.ts)
 * instead of looking the session up again.
 */
export function actingAs<T> (caller: Caller, sessionToken: string | undefined, body: () => T): T {
  if (caller.master || !caller.userId || !sessionToken) return body()
  if (caller instanceof CachedSessionCaller && caller.sessionToken === sessionToken) return runAsCaller(caller, body)
  return runAsCaller({ sessionToken, get user () { return caller.user } }, body)
}

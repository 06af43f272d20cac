// Who is calling: the master key, or the user behind a session token, resolved
// through Parse Server's own Auth and its user cache.
//
// The common case — a session Parse has cached — is read from that same cache
// here, and the Parse.User is only built when something reads `user` (a role
// check needs the id alone). Parse's cache stays the authority: a logout or a
// deleted session removes the entry there, and the next request misses.
// Expired entries, a cache miss, and extendSessionOnUse all take Parse's own
// getAuthForSessionToken.
import Parse from 'parse/node'
import { AuthModule, parseConfig, type ParseConfig } from '../parse/internals.js'
import { KitError } from '../errors.js'
import { masterKeyVerdict, type Credentials, type MasterKeyRule } from './credentials.js'

export interface Caller {
  master: boolean
  /** Built on first read. */
  readonly user: Parse.User | undefined
  /** The user's id, known without building the user. */
  readonly userId: string | undefined
}

const MASTER: Caller = Object.freeze({ master: true, user: undefined, userId: undefined })
const NOBODY: Caller = Object.freeze({ master: false, user: undefined, userId: undefined })

/** `ip` is the caller's address as Fastify (and, through @fastify/express, Parse) sees it. */
export async function resolveCaller (credentials: Credentials, appId: string, masterKey: MasterKeyRule, ip: string): Promise<Caller> {
  const verdict = masterKeyVerdict(credentials.masterKey, ip, masterKey)
  if (verdict === 'master') return MASTER
  if (verdict === 'wrong') throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'Invalid master key')
  if (verdict === 'address') {
    // Parse answers 403 here too.
    throw new KitError(Parse.Error.OPERATION_FORBIDDEN, `The master key is not accepted from ${ip}: Parse Server option masterKeyIps does not include it`, 403)
  }
  const sessionToken = credentials.sessionToken
  if (!sessionToken) return NOBODY
  const config = parseConfig(appId)
  const cached = config.extendSessionOnUse ? undefined : await cachedUser(config, sessionToken)
  if (cached) return lazyCaller(cached.objectId as string, () => Parse.Object.fromJSON(cached as never) as Parse.User)
  const auth = await AuthModule.getAuthForSessionToken({ config, sessionToken, installationId: credentials.installationId })
  const user = auth.user
  return { master: false, user, userId: user?.id }
}

/** The user JSON Parse cached for this session, unless absent or expired (then Parse's own path decides). */
async function cachedUser (config: ParseConfig, sessionToken: string): Promise<Record<string, unknown> | undefined> {
  const entry = await config.cacheController?.user.get(sessionToken) as Record<string, unknown> | null | undefined
  if (!entry || typeof entry.objectId !== 'string') return undefined
  const { expiresAt, ...userJSON } = entry
  if (expiresAt && new Date(expiresAt as string) < new Date()) return undefined
  return userJSON
}

function lazyCaller (userId: string, build: () => Parse.User): Caller {
  let user: Parse.User | undefined
  return {
    master: false,
    userId,
    get user () {
      user ??= build()
      return user
    }
  }
}

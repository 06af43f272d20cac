// Who is calling: the master key, or the user behind a session token, resolved
// through Parse Server's own Auth (and its user cache).
import Parse from 'parse/node'
import { AuthModule, parseConfig } from '../parse/internals.js'
import { KitError } from '../errors.js'
import { masterKeyVerdict, type Credentials, type MasterKeyRule } from './credentials.js'

export interface Caller {
  master: boolean
  user: Parse.User | undefined
}

/** `ip` is the caller's address as Fastify (and, through @fastify/express, Parse) sees it. */
export async function resolveCaller (credentials: Credentials, appId: string, masterKey: MasterKeyRule, ip: string): Promise<Caller> {
  const verdict = masterKeyVerdict(credentials.masterKey, ip, masterKey)
  if (verdict === 'master') return { master: true, user: undefined }
  if (verdict === 'wrong') throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'Invalid master key')
  if (verdict === 'address') {
    // Parse answers 403 here too.
    throw new KitError(Parse.Error.OPERATION_FORBIDDEN, `The master key is not accepted from ${ip}: Parse Server option masterKeyIps does not include it`, 403)
  }
  if (!credentials.sessionToken) return { master: false, user: undefined }
  const auth = await AuthModule.getAuthForSessionToken({
    config: parseConfig(appId),
    sessionToken: credentials.sessionToken,
    installationId: credentials.installationId
  })
  return { master: false, user: auth.user as Parse.User | undefined }
}

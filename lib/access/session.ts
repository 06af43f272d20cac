// Who is calling: the master key, or the user behind a session token, resolved
// through Parse Server's own Auth (and its user cache).
import Parse from 'parse/node'
import { AuthModule, parseConfig } from '../host/parse-internals.js'
import { secretsEqual, type Credentials } from './credentials.js'

export interface Caller {
  master: boolean
  user: Parse.User | undefined
}

export async function resolveCaller (credentials: Credentials, appId: string, masterKey: string): Promise<Caller> {
  if (credentials.masterKey !== undefined) {
    if (secretsEqual(credentials.masterKey, masterKey)) return { master: true, user: undefined }
    throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'Invalid master key')
  }
  if (!credentials.sessionToken) return { master: false, user: undefined }
  const auth = await AuthModule.getAuthForSessionToken({
    config: parseConfig(appId),
    sessionToken: credentials.sessionToken,
    installationId: credentials.installationId
  })
  return { master: false, user: auth.user as Parse.User | undefined }
}

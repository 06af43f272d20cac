// A seed run from another process (npm run seed:remote) talks to the server
// over REST with the master key. A key the server does not accept would make
// the first step fail with Parse's answer to a client (route restriction, 119):
// it is checked first, and any failure becomes one line with its code.
import Parse from 'parse/node'
import { SeedRemoteError } from '../errors.js'

type SeedRemoteFailure = InstanceType<typeof SeedRemoteError>

/** Refuses (FPK_ERR_SEED_REMOTE) unless the server at Parse.serverURL answers a master-key-only request. */
export async function assertMasterKeyAccepted (): Promise<void> {
  try {
    await Parse.Schema.all() // GET /schemas: Parse answers it for the master key only
  } catch (error) {
    throw remoteSeedError(error)
  }
}

/** The one-line failure of a remote seed run: what the server answered, and what to change. */
export function remoteSeedError (error: unknown): SeedRemoteFailure {
  if (error instanceof SeedRemoteError) return error as SeedRemoteFailure
  const code = (error as { code?: unknown })?.code
  const message = String((error as Error)?.message ?? error).split('\n')[0]
  const server = Parse.serverURL
  if (code === Parse.Error.CONNECTION_FAILED) {
    return new SeedRemoteError(`cannot reach the server at ${server} (${message}); start it, or set SERVER_URL`)
  }
  if (code === Parse.Error.OPERATION_FORBIDDEN || /unauthori[sz]ed|master key/i.test(message)) {
    return new SeedRemoteError(`the server at ${server} refused the master key (${code ?? ''} ${message}); set MASTER_KEY to the running server's master key (and APP_ID to its app id)`)
  }
  return new SeedRemoteError(`the seed stopped: ${typeof code === 'number' ? `${code} ` : ''}${message}`)
}

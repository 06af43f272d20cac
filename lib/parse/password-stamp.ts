// With passwordPolicy.maxPasswordAge, Parse's login stamps a user whose
// password predates the policy (no `_password_changed_at`) with an update it
// does not await (UsersRouter#handleLogIn). When the database fails that
// update, its rejection is unhandled and ends the process. This gives that one
// update's promise a handler (a warning is logged; the user's next login
// stamps again); the caller still gets the same promise, and every other
// update is left alone. The kit adds no process-wide unhandledRejection handler.
import { parseInternals, parseLogger, type DatabaseUpdate } from './internals.js'

const GUARDED = Symbol.for('fastify-parse-kit.password-stamp')

/** Installs the guard on Parse's database controller (one kit per process); returns the undo. */
export function guardPasswordStamp (): () => void {
  const prototype = parseInternals().DatabaseController.prototype
  const update = prototype.update as DatabaseUpdate & { [GUARDED]?: true }
  if (update[GUARDED]) return () => {}
  const guarded: DatabaseUpdate & { [GUARDED]?: true } = function (this: unknown, ...args) {
    const result = update.apply(this, args)
    if (isPasswordStamp(args)) {
      result.catch((error: unknown) => {
        parseLogger().warn(`[passwordPolicy] a login could not record when the user's password was set (${(error as Error)?.message ?? String(error)}); the next login records it`)
      })
    }
    return result
  }
  guarded[GUARDED] = true
  prototype.update = guarded
  return () => {
    if (prototype.update === guarded) prototype.update = update
  }
}

/** The login's own call: update('_User', {username}, {_password_changed_at}) and nothing more (RestWrite passes its options). */
function isPasswordStamp (args: Parameters<DatabaseUpdate>): boolean {
  const [className, query, changes] = args
  return args.length === 3 && className === '_User' &&
    onlyKey(query, 'username') && onlyKey(changes, '_password_changed_at')
}

function onlyKey (value: unknown, key: string): boolean {
  if (typeof value !== 'object' || value === null) return false
  const keys = Object.keys(value)
  return keys.length === 1 && keys[0] === key
}

// A declared function's own rules, judged on the request's admission: the
// caller is named on it (at once, or after a session lookup), then
// requireMaster, requiresAuth and the roles. Built once per function at boot;
// per request it answers without a promise (and without a closure) when
// nothing has to be read: the master key, no session, or a session and roles
// the caches hold.
import Parse from 'parse/node'
import { KitError } from '../errors.js'
import type { Admission, Caller } from './admission.js'
import { callerNow, lookUpCaller } from './session.js'
import { getUserRoles } from './roles.js'
import { cachedRolesNow } from './role-cache.js'

/** A declared function's access options (its CloudFunctionOptions are one). */
export interface AccessRules {
  requireMaster?: boolean
  requireRoles?: readonly string[]
  requireAllRoles?: boolean
  roleCacheMs?: number
  customErrorMessage?: string
}

/**
 * Sets the admission's caller and judges it: undefined when decided at once, a promise
 * while a session or roles are read. Refusals are thrown (Parse's {code, error}).
 */
export type Authorize = (admission: Admission) => Promise<void> | undefined

/** The roles of a function that requires none: one list for all of them. */
const NO_ROLES: readonly string[] = Object.freeze([])

/** `needsUser`: the function refuses callers without a session (requiresAuth, requireUser, roles; the master key passes). */
export function authorization (rules: AccessRules, needsUser: boolean, appId: string): Authorize {
  const { requireMaster, requireRoles = NO_ROLES, requireAllRoles = false, roleCacheMs, customErrorMessage } = rules
  const judging: Judging = { requireMaster, requireRoles, requireAllRoles, roleCacheMs, customErrorMessage, needsUser }
  return (admission) => {
    const known = callerNow(admission, appId)
    if (known) {
      admission.caller = known
      return judge(judging, known)
    }
    return lookUpCaller(admission.credentials, appId).then((caller) => {
      admission.caller = caller
      return judge(judging, caller)
    })
  }
}

/**
 * What a function's authorization judges by. The judging steps below are shared by every
 * function rather than closures made per function: a thousand functions' boot then
 * allocates (and, under tsx, names) two fewer functions each.
 */
interface Judging extends AccessRules {
  requireRoles: readonly string[]
  requireAllRoles: boolean
  needsUser: boolean
}

function judge (judging: Judging, caller: Caller): Promise<void> | undefined {
  if (caller.master) return undefined
  const { requireMaster, needsUser, requireRoles, roleCacheMs, customErrorMessage } = judging
  if (requireMaster === true) {
    throw new KitError(Parse.Error.OPERATION_FORBIDDEN, customErrorMessage ?? 'Master key required: this function answers only callers presenting the master key.', 403)
  }
  if (needsUser && !caller.userId) {
    throw new KitError(Parse.Error.OBJECT_NOT_FOUND, customErrorMessage ?? 'Authentication required: send a session token (X-Parse-Session-Token).', 400)
  }
  if (requireRoles.length === 0) return undefined
  // Roles the cache holds answer at once; others are read (and cached) first.
  const cached = cachedRolesNow(caller.userId!, roleCacheMs)
  if (cached) return judgeRoles(judging, cached)
  return getUserRoles(caller.userId!, { cacheMs: roleCacheMs }).then((roles) => judgeRoles(judging, roles))
}

function judgeRoles (judging: Judging, roles: string[]): undefined {
  const { requireRoles, requireAllRoles, customErrorMessage } = judging
  const allowed = requireAllRoles ? requireRoles.every((role) => roles.includes(role)) : requireRoles.some((role) => roles.includes(role))
  if (!allowed) {
    throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, customErrorMessage ??
      `Insufficient permissions: requires ${requireAllRoles ? 'every' : 'one'} of the roles ${requireRoles.join(', ')}`)
  }
  return undefined
}

// A create of an ordinary class, run by Parse's own RestWrite steps without
// the ones that cannot apply to it. RestWrite#execute chains 21 steps; ten of
// them serve only Parse's own classes (_User, _Session, _Installation) and
// return at once for any other, yet each still costs a promise and a turn of
// the microtask queue (and, with async context tracking on, its hooks). Here
// the other eleven run, Parse's own methods in Parse's order, after the role
// check and on a RestWrite built as rest.create does; Parse's own classes take
// rest.create itself.
//
// test/parse-contract.test.ts pins the step list and each skipped step's
// class guard, so a Parse upgrade that adds or changes a step fails by name;
// test/adapter-read.test.ts (its createRow part) compares its answers and rows with Parse's REST create.
import { parseInternals, type RestWriteResult, type RestWriteStep } from './internals.js'
import { fastPathsOn } from './fast-path-switch.js'

/** RestWrite#execute's steps for an ordinary class, in Parse's order (the ten class-specific ones left out). */
export const ORDINARY_CREATE_STEPS: readonly RestWriteStep[] = [
  'getUserAndRoleACL',
  'validateClientClassCreation',
  'runBeforeSaveTrigger',
  'validateSchema', // answers the schema controller execute keeps for the next steps
  'setRequiredFieldsIfNeeded',
  'validateCreatePermission',
  'expandFilesForExistingObjects',
  'runDatabaseOperation',
  'handleFollowup',
  'runAfterSaveTrigger',
  'filterProtectedFieldsInResponse'
]

/** The steps that return at once unless the class is _User, _Session or _Installation. */
export const CLASS_SPECIFIC_STEPS: readonly RestWriteStep[] = [
  'handleInstallation',
  'handleSession',
  'validateAuthData',
  'checkRestrictedFields',
  'ensureUniqueAuthDataId',
  'deleteEmailResetTokenIfNeeded',
  'transformUser',
  'destroyDuplicatedSessions',
  'createSessionTokenIfNeeded',
  'cleanUserAuthData'
]

/** rest.create's answer for `className`, through the ordinary steps when the class is not one of Parse's own. */
export async function createThroughRestWrite (config: unknown, auth: unknown, className: string, body: Record<string, unknown>, context: Record<string, unknown>): Promise<RestWriteResult> {
  // Parse's own classes take Parse's path, as does every class with fastPaths: false.
  const { rest, enforceRoleSecurity, RestWrite } = parseInternals()
  if (className.startsWith('_') || !fastPathsOn()) return rest.create(config, auth, className, body, context)
  enforceRoleSecurity('create', className, auth, config) // as rest.create does first
  const write = new RestWrite(config, auth, className, null, body, null, context)
  for (const step of ORDINARY_CREATE_STEPS) {
    const result = await write[step]()
    if (step === 'validateSchema') write.validSchemaController = result
  }
  // execute's tail adds authDataResponse and refuses unverified sign-ups: _User only.
  return write.response!
}

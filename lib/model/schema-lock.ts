// lockSchemas: once the declared schema is applied, no save may create a
// class or a field — not a client, not the master key, not code in the
// process. Parse itself only closes /schemas; every save path (REST, batch,
// the in-process SDK) goes through its SchemaController's enforceClassExists
// and enforceFieldExists, so the lock is checked there, with a clear error,
// before Parse would add anything to the database.
//
// Parse's SchemaController is process-wide, so its methods are wrapped once per
// process (marked on the prototype); whether the lock is on is the running
// kit's (lib/kit-state.ts), so a kit registered after a locked one starts unlocked.
import Parse from 'parse/node'
import { SchemaRules, type SchemaController } from '../parse/internals.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'

const lockPart = statePart('schema lock', () => ({ locked: false }))
const WRAPPED = Symbol('fastify-parse-kit schema lock')

/** Turns the kit's lock on (after the migration) or off (when the server closes). */
export function lockSchemas (state: KitState, on: boolean): void {
  state.get(lockPart).locked = on
  if (on) install()
}

/** Whether the running kit has locked its schema. */
export function schemasLocked (): boolean {
  return currentKitState().get(lockPart).locked
}

function install (): void {
  const controller = SchemaRules.SchemaController.prototype as SchemaController & { [WRAPPED]?: true }
  if (controller[WRAPPED]) return
  controller[WRAPPED] = true
  const enforceClassExists = controller.enforceClassExists
  const enforceFieldExists = controller.enforceFieldExists
  controller.enforceClassExists = function (this: SchemaController, className: string) {
    // Parse's own classes (sessions, installations, idempotency…) are created when first needed.
    if (schemasLocked() && !this.schemaData[className] && !className.startsWith('_')) {
      return Promise.reject(refusal(`class ${className} does not exist`))
    }
    return enforceClassExists.call(this, className)
  }
  controller.enforceFieldExists = function (this: SchemaController, className: string, fieldName: string, type: unknown, ...rest: unknown[]) {
    const field = fieldName.split('.')[0]
    if (type && schemasLocked() && this.schemaData[className] && this.getExpectedType(className, field) === undefined && !parseOwned(className, field)) {
      throw refusal(`class ${className} has no field "${field}"`)
    }
    return enforceFieldExists.call(this, className, fieldName, type, ...(rest as [boolean, boolean]))
  }
}

/** Fields Parse adds to its own classes as it works (auth data, hidden bookkeeping). */
function parseOwned (className: string, field: string): boolean {
  return className.startsWith('_') && (field.startsWith('_') || field.startsWith('authData') || Boolean(SchemaRules.defaultColumns[className]?.[field]))
}

function refusal (what: string): Parse.Error {
  return new Parse.Error(Parse.Error.OPERATION_FORBIDDEN,
    `The schema is locked (lockSchemas: true): ${what}, and saves may not create classes or fields. Declare it with @ParseClass / @ParseField and restart.`)
}

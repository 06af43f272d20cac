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
import { isParseClassColumn } from '../parse/parse-calls.js'
import { checkSchemaEnforcement } from '../parse/schema-enforcement.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'
import { relationInsideObject } from './relation-keys.js'

const lockPart = statePart('schema lock', () => ({ locked: false }))

/** Turns the kit's lock on (after the migration) or off (when the server closes); the checks are installed either way (relation-keys.ts holds always). */
export function lockSchemas (state: KitState, on: boolean): void {
  state.get(lockPart).locked = on
  install()
}

/** Whether the running kit has locked its schema. */
export function schemasLocked (): boolean {
  return currentKitState().get(lockPart).locked
}

function install (): void {
  checkSchemaEnforcement({
    newClass (controller, className) {
      // Parse's own classes (sessions, installations, idempotency…) are created when first needed.
      if (schemasLocked() && !controller.schemaData[className] && !className.startsWith('_')) return refusal(`class ${className} does not exist`)
      return undefined
    },
    newField (controller, className, fieldName, type) {
      const relation = relationInsideObject(fieldName, type)
      if (relation) return relation
      const field = fieldName.split('.')[0]
      if (type && schemasLocked() && controller.schemaData[className] && controller.getExpectedType(className, field) === undefined && !parseOwned(className, field)) {
        return refusal(`class ${className} has no field "${field}"`)
      }
      return undefined
    }
  })
}

/** Fields Parse adds to its own classes as it works (auth data, hidden bookkeeping). */
function parseOwned (className: string, field: string): boolean {
  return className.startsWith('_') && (field.startsWith('_') || field.startsWith('authData') || isParseClassColumn(className, field))
}

function refusal (what: string): Parse.Error {
  return new Parse.Error(Parse.Error.OPERATION_FORBIDDEN,
    `The schema is locked (lockSchemas: true): ${what}, and saves may not create classes or fields. Declare it with @ParseClass / @ParseField and restart.`)
}

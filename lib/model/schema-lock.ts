// lockSchemas: once the declared schema is applied, no save may create a
// class or a field — not a client, not the master key, not code in the
// process. Parse itself only closes /schemas; every save path (REST, batch,
// the in-process SDK) goes through its SchemaController's enforceClassExists
// and enforceFieldExists, so the lock is checked there, with a clear error,
// before Parse would add anything to the database.
import Parse from 'parse/node'
import { SchemaRules, type SchemaController } from '../parse/internals.js'

let locked = false
let installed = false

/** Turns the lock on (after the migration) or off (when the server closes). */
export function lockSchemas (on: boolean): void {
  locked = on
  if (on && !installed) install()
}

export function schemasLocked (): boolean {
  return locked
}

function install (): void {
  installed = true
  const controller = SchemaRules.SchemaController.prototype
  const enforceClassExists = controller.enforceClassExists
  const enforceFieldExists = controller.enforceFieldExists
  controller.enforceClassExists = function (this: SchemaController, className: string) {
    // Parse's own classes (sessions, installations, idempotency…) are created when first needed.
    if (locked && !this.schemaData[className] && !className.startsWith('_')) {
      return Promise.reject(refusal(`class ${className} does not exist`))
    }
    return enforceClassExists.call(this, className)
  }
  controller.enforceFieldExists = function (this: SchemaController, className: string, fieldName: string, type: unknown, ...rest: unknown[]) {
    const field = fieldName.split('.')[0]
    if (locked && type && this.schemaData[className] && this.getExpectedType(className, field) === undefined && !parseOwned(className, field)) {
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

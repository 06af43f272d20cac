// Every save path of Parse (REST, batch, the in-process SDK) goes through its
// SchemaController's enforceClassExists and enforceFieldExists before Parse
// would add a class or field. model/schema-lock.ts checks its lock there; this
// file holds the patch of Parse's prototype (once per process: Parse's
// SchemaController is process-wide).
import { parseInternals, type SchemaController } from './internals.js'

/** Checks before Parse adds a class or a field: an error refuses it, undefined lets Parse go on. */
export interface SchemaEnforcementChecks {
  newClass (controller: SchemaController, className: string): Error | undefined
  newField (controller: SchemaController, className: string, fieldName: string, type: unknown): Error | undefined
}

const WRAPPED = Symbol.for('fastify-parse-kit.schema-enforcement')

/** Wraps SchemaController#enforceClassExists / #enforceFieldExists with `checks` (the first call in a process installs them). */
export function checkSchemaEnforcement (checks: SchemaEnforcementChecks): void {
  const controller = parseInternals().SchemaRules.SchemaController.prototype as SchemaController & { [WRAPPED]?: true }
  if (controller[WRAPPED]) return
  controller[WRAPPED] = true
  const enforceClassExists = controller.enforceClassExists
  const enforceFieldExists = controller.enforceFieldExists
  // A controller's schema may predate a class or field another save path or instance added since: Parse
  // reloads before it concludes one is new, and so does a refusal here (a locked schema refused a declared
  // class's save when the request's controller was loaded before the migration finished).
  controller.enforceClassExists = function (this: SchemaController, className: string) {
    if (!checks.newClass(this, className)) return enforceClassExists.call(this, className)
    return this.reloadData({ clearCache: true }).then(() => {
      const refusal = checks.newClass(this, className)
      if (refusal) throw refusal
      return enforceClassExists.call(this, className)
    })
  }
  controller.enforceFieldExists = function (this: SchemaController, className: string, fieldName: string, type: unknown, ...rest: unknown[]) {
    if (!checks.newField(this, className, fieldName, type)) return enforceFieldExists.call(this, className, fieldName, type, ...(rest as [boolean, boolean]))
    return this.reloadData({ clearCache: true }).then(() => {
      const refusal = checks.newField(this, className, fieldName, type)
      if (refusal) throw refusal
      return enforceFieldExists.call(this, className, fieldName, type, ...(rest as [boolean, boolean]))
    })
  }
}

/** Whether Parse itself gives the class this column (objectId, createdAt, … and each of its own classes' fields). */
export function isParseDefaultColumn (className: string, field: string): boolean {
  const { defaultColumns } = parseInternals().SchemaRules
  return Boolean(defaultColumns._Default[field] || defaultColumns[className]?.[field])
}

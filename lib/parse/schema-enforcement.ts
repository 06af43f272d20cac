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
  controller.enforceClassExists = function (this: SchemaController, className: string) {
    const refusal = checks.newClass(this, className)
    return refusal ? Promise.reject(refusal) : enforceClassExists.call(this, className)
  }
  controller.enforceFieldExists = function (this: SchemaController, className: string, fieldName: string, type: unknown, ...rest: unknown[]) {
    const refusal = checks.newField(this, className, fieldName, type)
    if (refusal) throw refusal
    return enforceFieldExists.call(this, className, fieldName, type, ...(rest as [boolean, boolean]))
  }
}

/** Whether Parse itself gives the class this column (objectId, createdAt, … and each of its own classes' fields). */
export function isParseDefaultColumn (className: string, field: string): boolean {
  const { defaultColumns } = parseInternals().SchemaRules
  return Boolean(defaultColumns._Default[field] || defaultColumns[className]?.[field])
}

// validateOrThrow: checks an object against its declared fields and throws one
// Parse error (VALIDATION_ERROR, 142) listing every rule it breaks.
import Parse from 'parse/node'
import { valueProblems } from './field-options.js'
import { modelByName } from './registry.js'
import { ModelDeclarationError } from '../errors.js'

export function validateOrThrow (object: Parse.Object): void {
  const definition = modelByName(object.className)
  if (!definition) throw new ModelDeclarationError(`validateOrThrow: ${object.className} is not declared with @ParseClass, so it has no rules to check; declare it (@ParseClass('${object.className}')) and import its file first`)
  const problems: string[] = []
  // One snapshot: each object.get() rebuilds every attribute from the object's server data and pending operations.
  const attributes = object.attributes
  for (const [name, field] of definition.fields) {
    if (field.version) continue
    const value = attributes[name]
    // Parse fills declared defaults after beforeSave runs, so an unset field with a default is fine.
    if (value === undefined && field.default !== undefined) continue
    problems.push(...valueProblems(name, value, field))
  }
  if (problems.length > 0) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${object.className} is invalid: ${problems.join('; ')}`)
  }
}

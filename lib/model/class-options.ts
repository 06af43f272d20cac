// @ParseClass options, checked when the model file is imported.
import { ModelDeclarationError, type FieldDefinition } from './field-options.js'
import type { ClassOptions } from './registry.js'
import { SchemaRules } from '../parse/internals.js'

const CLASS_KEYS = new Set(['description', 'clp', 'compoundIndexes', 'protectedFields'])
const CLP_OPERATIONS = new Set(['find', 'get', 'count', 'create', 'update', 'delete', 'addField'])
const BUILT_IN_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt'])
/** Parse's own rule (SchemaController.classNameIsValid), without its internal join tables. */
const validClassName = (name: string) => SchemaRules.classNameIsValid(name) && !name.startsWith('_Join:')

export function checkClassOptions (className: string, jsName: string, options: ClassOptions, fields: Map<string, FieldDefinition>): void {
  const where = `@ParseClass('${className}') on ${jsName}`
  const fail = (problem: string): never => { throw new ModelDeclarationError(`${where}: ${problem}`) }
  if (typeof className !== 'string' || !validClassName(className)) {
    fail(`Parse refuses the class name: a class name starts with a letter and holds only letters, digits and _ (or is a Parse system class: ${SchemaRules.systemClasses.join(', ')})`)
  }
  if (typeof options !== 'object' || options === null) fail('options must be an object')
  for (const key of Object.keys(options)) {
    if (!CLASS_KEYS.has(key)) fail(`"${key}" is not a class option (known: ${[...CLASS_KEYS].join(', ')})`)
  }
  if (options.description !== undefined && typeof options.description !== 'string') fail('"description" must be text')
  if (options.clp !== undefined) {
    if (typeof options.clp !== 'object' || options.clp === null) fail('"clp" must map operations to subjects')
    for (const [operation, subjects] of Object.entries(options.clp)) {
      if (!CLP_OPERATIONS.has(operation)) fail(`clp: "${operation}" is not an operation (known: ${[...CLP_OPERATIONS].join(', ')})`)
      if (typeof subjects !== 'object' || subjects === null || Array.isArray(subjects)) {
        fail(`clp.${operation} must map subjects to true, e.g. { '*': true } or { [roleKey('Admin')]: true }; {} denies everyone`)
      }
      for (const [subject, allowed] of Object.entries(subjects as object)) {
        if (allowed !== true) fail(`clp.${operation}['${subject}'] must be true (leave a subject out to deny it)`)
      }
    }
  }
  const known = (field: string) => fields.has(field) || BUILT_IN_FIELDS.has(field)
  if (options.compoundIndexes !== undefined) {
    if (!Array.isArray(options.compoundIndexes)) fail('"compoundIndexes" must be a list of { fields: [...] }')
    let textIndexes = 0
    for (const [i, index] of options.compoundIndexes.entries()) {
      if (!index || !Array.isArray(index.fields) || index.fields.length === 0) fail(`compoundIndexes[${i}].fields must be a non-empty list of field names`)
      for (const field of index.fields) {
        if (!known(field)) fail(`compoundIndexes[${i}] names "${field}", which is not a declared field`)
      }
      if (index.text) {
        textIndexes++
        for (const field of index.fields) {
          if (fields.get(field)?.type !== 'String') fail(`compoundIndexes[${i}] is a text index, but "${field}" is not a String field`)
        }
      }
      if (index.partial !== undefined && (typeof index.partial !== 'object' || index.partial === null)) fail(`compoundIndexes[${i}].partial must be a filter object`)
    }
    if (textIndexes > 1) fail('only one text index per class is possible')
  }
  if (options.protectedFields !== undefined) {
    for (const [subject, names] of Object.entries(options.protectedFields)) {
      if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) fail(`protectedFields['${subject}'] must be a list of field names`)
    }
  }
}

// @ParseClass, @ParseField and @ParseVersionField: a model class becomes a
// registered Parse.Object subclass whose declared fields are accessors.
import Parse from 'parse/node'
import { assertLegacyDecorator } from './legacy-decorators.js'
import { checkFieldOptions, ModelDeclarationError, type FieldDefinition, type FieldOptions } from './field-options.js'
import { addPendingField, forgetModels, modelByName, pendingFields, registerModel, takePendingFields, type ClassOptions, type ModelClass } from './registry.js'
import { checkClassOptions } from './class-options.js'
import { declaringFile, shownPath, type ForgottenDeclaration } from '../declaring-file.js'

const PARSE_MEMBERS = new Set([
  ...Object.getOwnPropertyNames(Parse.Object.prototype),
  ...Object.getOwnPropertyNames(Parse.User.prototype)
].filter((name) => name !== 'constructor'))

export function ParseField (options: FieldOptions) {
  return function (target: object, propertyKey: unknown): void {
    assertLegacyDecorator('@ParseField', propertyKey)
    const name = String(propertyKey)
    const className = (target as { constructor: { name: string } }).constructor.name
    if (typeof target === 'function') throw new ModelDeclarationError(`@ParseField ${className}.${name}: fields are instance properties, not static ones`)
    checkFieldOptions(className, name, options, PARSE_MEMBERS)
    declareField(target, { ...options, name })
  }
}

/**
 * Declares a Number field that carries the version each object was read at.
 * Every save asserts it and increments it; a stale save fails with CONFLICT.
 */
export function ParseVersionField () {
  return function (target: object, propertyKey: unknown): void {
    assertLegacyDecorator('@ParseVersionField', propertyKey)
    const name = String(propertyKey)
    const className = (target as { constructor: { name: string } }).constructor.name
    const options: FieldOptions = { type: 'Number', integer: true, min: 1, description: 'Version for optimistic locking; set by the server' }
    checkFieldOptions(className, name, options, PARSE_MEMBERS)
    declareField(target, { ...options, name, version: true })
  }
}

function declareField (prototype: object, field: FieldDefinition): void {
  const decorator = field.version ? '@ParseVersionField' : '@ParseField'
  const earlier = pendingFields(prototype.constructor).get(field.name)
  if (earlier) {
    // Stacked decorators would silently replace one another (a @ParseField above @ParseVersionField drops versioning).
    const other = earlier.version ? '@ParseVersionField' : '@ParseField'
    throw new ModelDeclarationError(`${decorator} ${prototype.constructor.name}.${field.name}: the field is already declared by ${other}; keep one decorator (@ParseVersionField declares its Number field itself)`)
  }
  const fields = addPendingField(prototype.constructor, field)
  if ([...fields.values()].filter((f) => f.version).length > 1) {
    throw new ModelDeclarationError(`@ParseVersionField ${prototype.constructor.name}.${field.name}: a class has at most one version field`)
  }
  Object.defineProperty(prototype, field.name, {
    configurable: true,
    enumerable: false,
    get (this: Parse.Object) { return this.get(field.name) },
    set (this: Parse.Object, value: unknown) { this.set(field.name, value) }
  })
}

/**
 * Parse's system classes that the SDK builds as classes of its own: Parse Server and the kit build every row of
 * one as the registered class and call the SDK class's methods on it. A BaseModel there answered 500 to a
 * logged-in user's file upload (_isLinked) and to every handler's asCaller (getSessionToken) for _User; the
 * role helpers (addUsersToRole, seed memberships) call getUsers() and getRoles() on a _Role.
 */
const SDK_CLASS_OF: Record<string, { sdk: () => abstract new (...args: never[]) => object, name: string }> = {
  _User: { sdk: () => Parse.User, name: 'Parse.User' },
  _Role: { sdk: () => Parse.Role, name: 'Parse.Role' },
  _Session: { sdk: () => Parse.Session, name: 'Parse.Session' },
  _Installation: { sdk: () => Parse.Installation, name: 'Parse.Installation' }
}

function refuseSystemClassOnPlainModel (className: string, target: { name: string, prototype: unknown }): void {
  const own = Object.hasOwn(SDK_CLASS_OF, className) ? SDK_CLASS_OF[className] : undefined
  if (!own || target.prototype instanceof own.sdk()) return
  const noun = className.slice(1)
  throw new ModelDeclarationError(`@ParseClass('${className}') on ${target.name}: a ${className} model must extend ${own.name} (class ${target.name} extends ${own.name}), not BaseModel: Parse Server and the kit build every ${noun.toLowerCase()} row as this class and call ${own.name}'s methods on it`)
}

export function ParseClass (className: string, options: ClassOptions = {}) {
  return function <T extends ModelClass> (target: T, context?: unknown): T {
    assertLegacyDecorator('@ParseClass', context)
    if (!(target.prototype instanceof Parse.Object)) {
      throw new ModelDeclarationError(`@ParseClass('${className}') on ${target.name}: the class must extend BaseModel (or Parse.Object / Parse.User)`)
    }
    refuseSystemClassOnPlainModel(className, target)
    const fields = takePendingFields(target)
    checkClassOptions(className, target.name, options, fields)
    const file = declaringFile()
    refuseSecondDeclaration(className, target.name, file)
    const model = repairShadowedFields(target, [...fields.keys()])
    Parse.Object.registerSubclass(className, model as unknown as new () => Parse.Object)
    const versionField = [...fields.values()].find((field) => field.version)?.name
    registerModel({ className, model, options, fields, versionField, file }, target)
    return model
  }
}

/**
 * Two model classes for one Parse class would silently replace each other
 * (the later one's fields become the schema). The same class from the same
 * file again is a re-declaration (a file imported twice, a test declaring a
 * newer version of its model): the newer one wins.
 */
function refuseSecondDeclaration (className: string, jsName: string, file: string | undefined): void {
  const earlier = modelByName(className)
  if (!earlier) return
  const earlierName = earlier.model.name
  const sameFile = earlier.file === undefined || file === undefined || earlier.file === file
  if (earlierName === jsName && sameFile) return
  const where = (name: string, at: string | undefined) => at ? `${name} (${shownPath(at)})` : name
  throw new ModelDeclarationError(
    `@ParseClass('${className}') on ${where(jsName, file)}: the Parse class "${className}" is already declared by ${where(earlierName, earlier.file)}; ` +
    'declare each Parse class once (import that model where it is needed, or give this one its own class name)')
}

/**
 * `title!: string` compiles (with useDefineForClassFields) to an own property
 * that hides the prototype accessor, so values would never reach Parse. The
 * registered class moves any such value into the object's attributes.
 */
function repairShadowedFields<T extends ModelClass> (target: T, names: string[]): T {
  if (names.length === 0) return target
  const Base = target as unknown as new (...args: unknown[]) => Parse.Object
  const Repaired = class extends Base {
    constructor (...args: unknown[]) {
      super(...args)
      for (const name of names) {
        if (!Object.prototype.hasOwnProperty.call(this, name)) continue
        const value = (this as unknown as Record<string, unknown>)[name]
        delete (this as unknown as Record<string, unknown>)[name]
        if (value !== undefined) this.set(name, value)
      }
    }
  }
  Object.defineProperty(Repaired, 'name', { value: target.name })
  return Repaired as unknown as T
}

/** The SDK's own classes for the system classes a model may extend, registered back when that model is forgotten. */
const SDK_CLASSES: Record<string, new () => Parse.Object> = {
  _User: Parse.User, _Role: Parse.Role as unknown as new () => Parse.Object, _Session: Parse.Session, _Installation: Parse.Installation
}

/** Drops every declared model and gives its Parse class name back to the SDK (see lib/forget-declarations.ts). */
export function forgetModelClasses (): ForgottenDeclaration[] {
  return forgetModels().map(({ definition, aliases }) => {
    const { className, model } = definition
    const sdkClass = SDK_CLASSES[className]
    if (sdkClass) Parse.Object.registerSubclass(className, sdkClass)
    else Parse.Object.unregisterSubclass(className)
    return {
      file: definition.file,
      revive () {
        Parse.Object.registerSubclass(className, model as unknown as new () => Parse.Object)
        registerModel(definition, ...aliases)
      }
    }
  })
}

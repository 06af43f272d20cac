// What @Route and @CloudFunction declared. The methods themselves are read
// when routes are registered, so decorators that wrap a method (such as
// @Transactional) may sit above or below @CloudFunction.
import type { CloudFunctionOptions } from './options.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'
import { RouteDeclarationError } from '../errors.js'
import { declaringFile, type ForgottenDeclaration } from '../declaring-file.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyClass = abstract new (...args: any[]) => unknown

export interface FunctionDeclaration {
  /** The source file that declared it, when the call stack tells (see lib/forget-declarations.ts). */
  file?: string
  name: string
  owner: AnyClass
  isStatic: boolean
  options: CloudFunctionOptions
}

export interface DeclaredFunction extends FunctionDeclaration {
  /** Route prefix from @Route; undefined for a function reachable only at /functions/{name}. */
  prefix: string | undefined
  /** "NoteFunctions.createNote", for messages. */
  label: string
  invoke: (request: unknown) => unknown
}

// The declarations are class metadata, collected when the decorators run at
// import; they outlive any one kit. Whether a kit serves them is the kit's state.
const declarations: FunctionDeclaration[] = []
const prefixes = new Map<unknown, string>()
let revision = 0
const servingPart = statePart('functions served', () => ({ served: false }))

/** Set while a kit serves the declared functions: routes are fixed then, so a late declaration is refused. */
export function functionsServed (state: KitState, on: boolean): void {
  state.get(servingPart).served = on
}

export function addFunction (declaration: FunctionDeclaration): void {
  if (currentKitState().get(servingPart).served) {
    throw new RouteDeclarationError(`@CloudFunction ${declaration.owner.name}.${declaration.name}: declared after kitPlugin booted, so it would be neither served nor documented. ` +
      'Import the file before kitPlugin is registered (or list its class or directory in the functions option), then restart.')
  }
  // Methods of one class are declared one after another: one stack read per class.
  const previous = declarations.at(-1)
  const file = previous?.owner === declaration.owner ? previous.file : declaringFile()
  // Written out: a spread followed by more keys makes a slow dictionary object (see declaredFunctions).
  declarations.push({ name: declaration.name, owner: declaration.owner, isStatic: declaration.isStatic, options: declaration.options, file })
  revision++
}

export function setRoutePrefix (owner: unknown, prefix: string): void {
  prefixes.set(owner, prefix)
  revision++
}

/** Drops every declared function and route prefix (see lib/forget-declarations.ts); a prefix goes back with its class's functions. */
export function forgetFunctions (): ForgottenDeclaration[] {
  const forgotten: ForgottenDeclaration[] = declarations.map((declaration) => ({
    file: declaration.file,
    revive () { declarations.push(declaration); revision++ }
  }))
  for (const [owner, prefix] of prefixes) {
    forgotten.push({ file: declarations.find((declaration) => declaration.owner === owner)?.file, revive () { prefixes.set(owner, prefix); revision++ } })
  }
  declarations.length = 0
  prefixes.clear()
  revision++
  return forgotten
}

/** Changes whenever a function or route is declared (the API document is rebuilt when it does). */
export function functionRevision (): number {
  return revision
}

/** Every declared function with its prefix and a bound invoker; fails on duplicate names. */
export function declaredFunctions (): DeclaredFunction[] {
  const byName = new Map<string, DeclaredFunction>()
  const instances = new Map<unknown, unknown>()
  for (const declaration of declarations) {
    const { owner, name, isStatic } = declaration
    const label = `${owner.name}.${name}`
    const previous = byName.get(name)
    if (previous && previous.owner !== owner) {
      throw new RouteDeclarationError(`Two Cloud Functions are named "${name}" (${previous.label} and ${label}); both would answer {mount}/functions/${name}. Rename one.`)
    }
    // Written out, not spread from the declaration: a spread followed by more keys makes
    // a slow dictionary object, about ten times the size (a kilobyte per function).
    byName.set(name, {
      name,
      owner,
      isStatic,
      options: declaration.options,
      prefix: prefixes.get(owner),
      label,
      invoke: invoker(owner, name, isStatic, label, instances)
    })
  }
  return [...byName.values()]
}

/** Made here, not inline in the record: tsx names every function written as an object's property, which costs a thousand functions' boot a slower object each. */
function invoker (owner: AnyClass, name: string, isStatic: boolean, label: string, instances: Map<unknown, unknown>): DeclaredFunction['invoke'] {
  return (request) => {
    // Read now, not at declaration: a decorator applied later may have replaced the method.
    const self = isStatic ? owner : instanceOf(owner, instances)
    const method = (self as Record<string, unknown>)[name]
    if (typeof method !== 'function') throw new RouteDeclarationError(`${label} is not a method`)
    return method.call(self, request)
  }
}

function instanceOf (owner: AnyClass, instances: Map<unknown, unknown>): unknown {
  if (!instances.has(owner)) instances.set(owner, new (owner as unknown as new () => unknown)())
  return instances.get(owner)
}

// @Route, @CloudFunction and @ProtectedCloudFunction: handler methods become
// endpoints at {mount}/{prefix}/{methodName} and {mount}/functions/{methodName}.
import { assertLegacyDecorator } from '../model/legacy-decorators.js'
import { modelByClass } from '../model/registry.js'
import { checkPrefix, kebabPlural } from './naming.js'
import { checkCloudFunctionOptions, type CloudFunctionOptions } from './options.js'
import { addFunction, setRoutePrefix } from './registry.js'
import type { HandlerCheck } from './typing.js'
import { RouteDeclarationError } from '../errors.js'

/** The prefix is the kebab-case plural of the model's class name, or the kebab name given. */
export function Route (model: string | (abstract new (...args: never[]) => unknown)) {
  return function <T extends abstract new (...args: never[]) => unknown> (target: T, context?: unknown): T {
    assertLegacyDecorator('@Route', context)
    const where = `@Route on ${target.name}`
    if (typeof model === 'string') {
      setRoutePrefix(target, checkPrefix(model, where))
    } else if (typeof model === 'function') {
      setRoutePrefix(target, checkPrefix(kebabPlural(modelByClass(model)?.className ?? model.name), where))
    } else {
      throw new RouteDeclarationError(`${where}: pass a model class or a kebab-case name`)
    }
    return target
  }
}

/**
 * The method becomes an endpoint. Its request parameter and answer are
 * checked at compile time against the options (see HandlerCheck): type the
 * request as `RequestOf<typeof options>`, `CloudRequest<{ …fields }>`, or
 * plain `CloudRequest` (params left untyped).
 */
export function CloudFunction<const O extends CloudFunctionOptions = CloudFunctionOptions> (options: O = {} as O) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return function <H extends (...args: any[]) => unknown> (target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<H> & HandlerCheck<O, H>): void {
    assertLegacyDecorator('@CloudFunction', propertyKey)
    const isStatic = typeof target === 'function'
    const owner = (isStatic ? target : target.constructor) as abstract new (...args: never[]) => unknown
    const name = String(propertyKey)
    const where = `@CloudFunction ${owner.name}.${name}`
    if (typeof descriptor?.value !== 'function') throw new RouteDeclarationError(`${where}: decorate a method`)
    if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) throw new RouteDeclarationError(`${where}: the method name becomes the function's name and path segment, so it must be an identifier (letters, digits, _ or $, not starting with a digit); rename the method`)
    checkCloudFunctionOptions(where, options)
    addFunction({ name, owner, isStatic, options })
  }
}

/** A POST endpoint that requires a signed-in user. */
export function ProtectedCloudFunction<const O extends Omit<CloudFunctionOptions, 'methods'> = Omit<CloudFunctionOptions, 'methods'>> (options: O = {} as O) {
  type Protected = O & { methods: ['POST'], validation: { requireUser: true } }
  return CloudFunction<Protected>({ ...options, methods: ['POST'], validation: { ...options.validation, requireUser: true } } as Protected)
}

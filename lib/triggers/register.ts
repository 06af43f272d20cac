// Registers the declared triggers with Parse.Cloud, once, at boot.
import { allModels, modelByClass } from '../model/registry.js'
import { stampVersion } from '../storage/version.js'
import { declaredTriggers, TRIGGER_KINDS, type TriggerDeclaration } from './decorators.js'
import { ModelDeclarationError } from '../errors.js'

type Cloud = Record<string, (...args: unknown[]) => unknown>

export function registerTriggers (cloud: Cloud, declarations: readonly TriggerDeclaration[] = declaredTriggers()): void {
  const seen = new Map<string, string>()
  for (const { kind, target, method, validator } of declarations) {
    const owner = `${(target as { name: string }).name}.${method}`
    const model = modelByClass(target)
    if (!model) {
      throw new ModelDeclarationError(`@${kind} on ${owner}: ${(target as { name: string }).name} is not a model. Add @ParseClass('<ClassName>') to the class, or move the trigger to a model class.`)
    }
    const { cloud: hook, scope } = TRIGGER_KINDS[kind]
    const className = scope === 'class' ? model.className : scope === 'global' ? undefined : scope
    const key = `${kind}:${className ?? '*'}`
    const previous = seen.get(key)
    if (previous) throw new ModelDeclarationError(`@${kind}${className ? ` for ${className}` : ''} is declared twice (${previous} and ${owner}); Parse keeps one per class and type.`)
    seen.set(key, owner)
    const run = (request: unknown) => (target as Record<string, (request: unknown) => unknown>)[method](request)
    const versionField = kind === 'BeforeSave' ? model.versionField : undefined
    const handler = versionField
      ? (request: unknown) => { stampVersion(request as Parameters<typeof stampVersion>[0], versionField); return run(request) }
      : run
    const args: unknown[] = className === undefined ? [handler] : [className, handler]
    if (validator !== undefined) args.push(validator)
    cloud[hook](...args)
  }
  // A versioned class needs its beforeSave step even when the model declares none.
  for (const model of allModels()) {
    if (!model.versionField || seen.has(`BeforeSave:${model.className}`)) continue
    const field = model.versionField
    cloud.beforeSave(model.className, (request: unknown) => stampVersion(request as Parameters<typeof stampVersion>[0], field))
  }
}

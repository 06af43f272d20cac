// Trigger decorators on a model's static methods. They only record the
// method; the plugin registers them with Parse at boot (see register.ts).
import { assertLegacyDecorator } from '../model/legacy-decorators.js'
import { ModelDeclarationError } from '../model/field-options.js'
import { declaringFile, type ForgottenDeclaration } from '../declaring-file.js'

/** How each trigger is registered with Parse.Cloud. */
export const TRIGGER_KINDS = {
  BeforeSave: { cloud: 'beforeSave', scope: 'class' },
  AfterSave: { cloud: 'afterSave', scope: 'class' },
  BeforeDelete: { cloud: 'beforeDelete', scope: 'class' },
  AfterDelete: { cloud: 'afterDelete', scope: 'class' },
  BeforeFind: { cloud: 'beforeFind', scope: 'class' },
  AfterFind: { cloud: 'afterFind', scope: 'class' },
  BeforeSubscribe: { cloud: 'beforeSubscribe', scope: 'class' },
  AfterLiveQueryEvent: { cloud: 'afterLiveQueryEvent', scope: 'class' },
  BeforeLogin: { cloud: 'beforeLogin', scope: 'global' },
  AfterLogin: { cloud: 'afterLogin', scope: 'global' },
  AfterLogout: { cloud: 'afterLogout', scope: 'global' },
  BeforePasswordResetRequest: { cloud: 'beforePasswordResetRequest', scope: 'global' },
  BeforeConnect: { cloud: 'beforeConnect', scope: 'global' },
  BeforeSaveFile: { cloud: 'beforeSave', scope: '@File' },
  AfterSaveFile: { cloud: 'afterSave', scope: '@File' },
  BeforeDeleteFile: { cloud: 'beforeDelete', scope: '@File' },
  AfterDeleteFile: { cloud: 'afterDelete', scope: '@File' },
  BeforeConfigSave: { cloud: 'beforeSave', scope: '@Config' },
  AfterConfigSave: { cloud: 'afterSave', scope: '@Config' }
} as const

export type TriggerKind = keyof typeof TRIGGER_KINDS

export interface TriggerDeclaration {
  kind: TriggerKind
  target: unknown
  method: string
  /** Parse Cloud validator (same shape as Parse.Cloud.beforeSave's third argument). */
  validator?: unknown
  /** The source file that declared it, when the call stack tells (see lib/forget-declarations.ts). */
  file?: string
}

// Class metadata, filled when the trigger decorators run at import; it
// outlives any one kit, unlike the runtime state in lib/kit-state.ts.
const declarations: TriggerDeclaration[] = []

export function declaredTriggers (): readonly TriggerDeclaration[] {
  return declarations
}

/** Drops every declared trigger (see lib/forget-declarations.ts). */
export function forgetTriggers (): ForgottenDeclaration[] {
  return declarations.splice(0).map((declaration) => ({ file: declaration.file, revive: () => { declarations.push(declaration) } }))
}

function trigger (kind: TriggerKind) {
  return (validator?: unknown) => function (target: unknown, propertyKey: unknown, descriptor?: PropertyDescriptor): void {
    assertLegacyDecorator(`@${kind}`, propertyKey)
    const method = String(propertyKey)
    if (typeof target !== 'function') {
      const owner = (target as { constructor: { name: string } }).constructor.name
      throw new ModelDeclarationError(`@${kind} on ${owner}.${method}: triggers must be static methods (static async ${method}(request) { … })`)
    }
    if (typeof descriptor?.value !== 'function') throw new ModelDeclarationError(`@${kind} on ${target.name}.${method}: decorate a method`)
    // Parse keeps one trigger per class and kind: a second would silently replace the first at boot.
    const earlier = declarations.find((declaration) => declaration.target === target && declaration.kind === kind)
    if (earlier) throw new ModelDeclarationError(`@${kind} on ${target.name}.${method}: ${target.name}.${earlier.method} is already its @${kind}; Parse runs one per class, so do both steps in one method`)
    declarations.push({ kind, target, method, validator, file: declaringFile() })
  }
}

export const BeforeSave = trigger('BeforeSave')
export const AfterSave = trigger('AfterSave')
export const BeforeDelete = trigger('BeforeDelete')
export const AfterDelete = trigger('AfterDelete')
export const BeforeFind = trigger('BeforeFind')
export const AfterFind = trigger('AfterFind')
export const BeforeSubscribe = trigger('BeforeSubscribe')
export const AfterLiveQueryEvent = trigger('AfterLiveQueryEvent')
export const BeforeLogin = trigger('BeforeLogin')
export const AfterLogin = trigger('AfterLogin')
export const AfterLogout = trigger('AfterLogout')
export const BeforePasswordResetRequest = trigger('BeforePasswordResetRequest')
export const BeforeConnect = trigger('BeforeConnect')
export const BeforeSaveFile = trigger('BeforeSaveFile')
export const AfterSaveFile = trigger('AfterSaveFile')
export const BeforeDeleteFile = trigger('BeforeDeleteFile')
export const AfterDeleteFile = trigger('AfterDeleteFile')
export const BeforeConfigSave = trigger('BeforeConfigSave')
export const AfterConfigSave = trigger('AfterConfigSave')

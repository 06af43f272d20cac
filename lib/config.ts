// Kit-wide settings. Values are read at use time, so configureKit() may run
// before or after the models are imported; plugin options feed the same store.
// They belong to the running kit (lib/kit-state.ts): a kit registered after
// another closed starts from the defaults again.
import { currentKitState, statePart } from './kit-state.js'
import { OptionInvalidError, OptionUnknownError } from './errors.js'
import { dottedName, optionChecker } from './option-schema.js'
import { Type } from './typebox.js'

export interface KitConfig {
  mountPath: string
  masterKey: string | undefined
  adminRole: string
  allowAuthRoutes: boolean
  excludedPointerClasses: string[]
}

export type KitConfigInput = Partial<KitConfig>

const DEFAULT_MOUNT_PATH = '/parse'
const settings = statePart('settings', () => ({ explicit: {} as KitConfigInput }))

const name = Type.String({ minLength: 1, problem: 'must be a non-empty string' })
/** What configureKit takes: a misspelt key was ignored, and allowAuthRoutes: 'false' (text) opened the auth routes. */
const checkConfig = optionChecker(Type.Object({
  mountPath: Type.Optional(name),
  masterKey: Type.Optional(Type.String({ minLength: 1, problem: 'must be a non-empty string', secret: true })),
  adminRole: Type.Optional(name),
  allowAuthRoutes: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  excludedPointerClasses: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { problem: 'must be a list of class names' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be an object' }))

export function configureKit (options: KitConfigInput = {}): KitConfig {
  const given = typeof options === 'object' && options !== null ? stripUndefined(options) : options
  const problem = checkConfig(given)
  if (problem) {
    const message = `configureKit option "${problem.path.length === 0 ? 'options' : dottedName(problem.path)}": ${problem.problem}`
    throw problem.kind === 'unknown' ? new OptionUnknownError(message) : new OptionInvalidError(message)
  }
  const own = currentKitState().get(settings)
  own.explicit = { ...own.explicit, ...given }
  return getKitConfig()
}

export function getKitConfig (): KitConfig {
  const { explicit } = currentKitState().get(settings)
  return {
    mountPath: normaliseMountPath(explicit.mountPath ?? process.env.mountPath ?? process.env.MOUNT_PATH ?? DEFAULT_MOUNT_PATH),
    masterKey: explicit.masterKey ?? process.env.masterKey ?? process.env.MASTER_KEY,
    adminRole: explicit.adminRole ?? 'SuperAdmin',
    allowAuthRoutes: explicit.allowAuthRoutes ?? false,
    excludedPointerClasses: explicit.excludedPointerClasses ?? ['IMG', 'File']
  }
}

/** Forgets everything configureKit() was told (tests, and a plugin booting twice in one process). */
export function resetKitConfig (): void {
  currentKitState().get(settings).explicit = {}
}

/** One leading "/", no repeated or trailing "/" ("/" stays "/"): the rule for the mount path and the docs paths. */
export function normaliseMountPath (mountPath: string): string {
  const trimmed = `/${mountPath}`.replace(/\/+/g, '/').replace(/\/$/, '')
  return trimmed === '' ? '/' : trimmed
}

function stripUndefined<T extends object> (value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

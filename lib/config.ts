// Kit-wide settings. Values are read at use time, so configureKit() may run
// before or after the models are imported; plugin options feed the same store.
// They belong to the running kit (lib/kit-state.ts): a kit registered after
// another closed starts from the defaults again.
import { currentKitState, statePart } from './kit-state.js'

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

export function configureKit (options: KitConfigInput = {}): KitConfig {
  const own = currentKitState().get(settings)
  own.explicit = { ...own.explicit, ...stripUndefined(options) }
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

// Kit-wide settings. Values are read at use time, so configureKit() may run
// before or after the models are imported; plugin options feed the same store.
export interface KitConfig {
  mountPath: string
  masterKey: string | undefined
  adminRole: string
  allowAuthRoutes: boolean
  excludedPointerClasses: string[]
}

export type KitConfigInput = Partial<KitConfig>

const DEFAULT_MOUNT_PATH = '/parse'
let explicit: KitConfigInput = {}

export function configureKit (options: KitConfigInput = {}): KitConfig {
  explicit = { ...explicit, ...stripUndefined(options) }
  return getKitConfig()
}

export function getKitConfig (): KitConfig {
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
  explicit = {}
}

/** One leading "/", no repeated or trailing "/" ("/" stays "/"): the rule for the mount path and the docs paths. */
export function normaliseMountPath (mountPath: string): string {
  const trimmed = `/${mountPath}`.replace(/\/+/g, '/').replace(/\/$/, '')
  return trimmed === '' ? '/' : trimmed
}

function stripUndefined<T extends object> (value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

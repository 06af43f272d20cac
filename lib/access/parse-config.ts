// Parse's Config for the kit's own lookups (sessions, roles, queryRows).
// Config.get() builds a new config and database controller on every call, which
// showed in profiles; the kit never puts a transaction on this one, so one is
// kept per running kit (lib/kit-state.ts), and forgotten when its server starts or stops.
import type { ParseConfig } from '../parse/internals.js'
import { appConfig } from '../parse/parse-calls.js'
import type { SchemaMemo } from '../parse/reused-schema.js'
import { currentKitState, statePart } from '../kit-state.js'

const cachePart = statePart('parse config', () => ({ appId: undefined as string | undefined, config: undefined as ParseConfig | undefined }))
const schemaMemoPart = statePart('shared schema controller', (): SchemaMemo => ({}))

/** The schema controller the kit's reads and writes share while Parse's schema cache is unchanged (parse/reused-schema.ts). */
export function schemaMemo (): SchemaMemo {
  return currentKitState().get(schemaMemoPart)
}

export function parseConfig (appId: string): ParseConfig {
  const cached = currentKitState().get(cachePart)
  if (cached.appId !== appId || !cached.config) {
    const config = appConfig(appId)
    if (!config) throw new Error(`Parse Server is not running in this process (no application ${appId})`)
    // Parse takes the mount from each request; in-process there is none: the configured address.
    config.mount = config.serverURL
    cached.appId = appId
    cached.config = config
  }
  return cached.config
}

export function forgetParseConfig (): void {
  const cached = currentKitState().get(cachePart)
  cached.appId = undefined
  cached.config = undefined
}

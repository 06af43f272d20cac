// kitPlugin's `schema` option: the options of createSchemaConfig, or a whole
// configuration it returned (with `definitions`), checked at registration.
import type { SchemaConfigOptions } from './schema-config.js'
import type { SchemaConfig } from './schema-boot.js'

export type SchemaOption = SchemaConfigOptions | SchemaConfig

const FLAGS = ['lockSchemas', 'strict', 'recreateModifiedFields', 'deleteExtraFields', 'keepUnknownIndexes'] as const
const HOOKS = ['beforeMigration', 'afterMigration'] as const
const KNOWN = new Set<string>([...FLAGS, ...HOOKS, 'adminRole', 'definitions'])

/** What is wrong with the option, or undefined. */
export function checkSchemaOption (value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object such as { lockSchemas: true } or createSchemaConfig({ … })'
  const option = value as Record<string, unknown>
  for (const key of Object.keys(option)) {
    if (!KNOWN.has(key)) return `"${key}" is not a schema option (known: ${[...KNOWN].join(', ')})`
  }
  for (const flag of FLAGS) {
    if (option[flag] !== undefined && typeof option[flag] !== 'boolean') return `${flag} must be true or false (got ${JSON.stringify(option[flag])})`
  }
  for (const hook of HOOKS) {
    if (option[hook] !== undefined && typeof option[hook] !== 'function') return `${hook} must be a function`
  }
  if (option.adminRole !== undefined && (typeof option.adminRole !== 'string' || option.adminRole === '')) return 'adminRole must be a role name'
  if (option.definitions !== undefined && !Array.isArray(option.definitions)) return 'definitions must be a list of class schemas (as createSchemaConfig() returns)'
  return undefined
}

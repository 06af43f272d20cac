// The names Parse Server knows for its options, from its generated option
// table (Options/Definitions.js: a data file requiring only its parsers, no
// cycle, Parse Server itself not loaded). Parse meets a misspelt key with one
// log line and boots on its default; the kit's option check refuses it instead.
import { createRequire } from 'node:module'

interface Definition { type?: string }
type Definitions = Record<string, Record<string, Definition>>

/** Groups whose keys Parse hands on to someone else (the database driver) or that the kit checks itself (schema). */
const NOT_CHECKED = new Set(['databaseOptions', 'schema'])

const requireParse = createRequire(import.meta.url)

/** Read at each check (require() keeps the module after the first): no state of this file's own. */
function loadDefinitions (): Definitions {
  return requireParse('parse-server/lib/Options/Definitions.js') as Definitions
}

export interface UnknownParseOption {
  /** "sessionLenght" or "accountLockout.treshold" */
  path: string
  key: string
  /** The keys Parse knows where the unknown one sits. */
  known: string[]
}

/** The first key of `options` (at any depth of Parse's own option groups) Parse Server does not know, or undefined. */
export function unknownParseServerOption (options: Record<string, unknown>): UnknownParseOption | undefined {
  const all = loadDefinitions()
  return walk(options, all.ParseServerOptions, all, '')
}

function walk (value: Record<string, unknown>, group: Record<string, Definition>, all: Definitions, prefix: string): UnknownParseOption | undefined {
  for (const [key, inner] of Object.entries(value)) {
    const definition = Object.hasOwn(group, key) ? group[key] : undefined
    if (!definition) return { path: prefix + key, key, known: Object.keys(group) }
    if (prefix === '' && NOT_CHECKED.has(key)) continue
    const type = definition.type
    const nested = type === undefined ? undefined : all[type.replace(/\[\]$/, '')]
    if (!nested || typeof inner !== 'object' || inner === null) continue
    const items = Array.isArray(inner) ? inner.map((item, index) => [`${key}[${index}]`, item] as const) : [[key, inner] as const]
    for (const [name, item] of items) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) continue
      const found = walk(item as Record<string, unknown>, nested, all, `${prefix}${name}.`)
      if (found) return found
    }
  }
  return undefined
}

// Parse loads the schema afresh for each step of one operation: a find and the
// count of a `count: 1` query each build a SchemaController (a new Config,
// every class's schema data, its permissions copied), a caller without the
// master key adds more for its protected fields, and one save builds four or
// five. Parse's DatabaseController keeps none, so that one request never sees
// two schemas; within one query or one write the schema cannot usefully change,
// so one load serves every step of it.
import type { ParseConfig, ParseDatabaseController } from './server-shapes.js'
import { reusedSchema, writeView, type SchemaMemo } from './reused-schema.js'
import { fastPathsOn } from './fast-path-switch.js'

export interface OneSchemaLoadOptions {
  /**
   * The running kit's memo: the operation's first load then takes the
   * controller an earlier operation built while Parse's schema cache has not
   * changed (reused-schema.ts).
   */
  memo?: SchemaMemo
  /** The operation writes: it takes a view of a shared controller, so what its validation reassigns stays its own. */
  write?: boolean
}

/**
 * A view of Parse's Config whose database controller answers the schema this
 * operation loaded last: a load asked with clearCache replaces it, a failed
 * load is not kept. Everything else is the shared config and controller
 * themselves, read through the prototype.
 */
export function withOneSchemaLoad<C extends Pick<ParseConfig, 'database'>> (config: C, options: OneSchemaLoadOptions = {}): C {
  // fastPaths: false: Parse loads the schema for each step, as it does on its own.
  if (!fastPathsOn()) return config
  const { memo, write = false } = options
  const shared = config.database
  const load = shared.loadSchema
  let loaded: ReturnType<ParseDatabaseController['loadSchema']> | undefined
  function loadSchema (this: ParseDatabaseController, loadOptions?: { clearCache?: boolean }) {
    if (loaded && !loadOptions?.clearCache) return loaded
    // A schema cache with a time to live is refreshed by the loads themselves: those keep loading.
    const reuse = memo && !loadOptions?.clearCache && !(this.adapter as { schemaCacheTtl?: number }).schemaCacheTtl
    const controller = reuse ? reusedSchema(memo, () => load.call(this, loadOptions)) : load.call(this, loadOptions)
    const attempt = reuse && write ? controller.then(writeView) : controller
    loaded = attempt
    attempt.catch(() => { if (loaded === attempt) loaded = undefined })
    return attempt
  }
  // Own properties set by assignment, not descriptors: this runs on every query and write, and
  // Object.create with descriptors takes V8's slow path (about 3 µs against 0.1 µs here).
  const database = Object.create(shared) as ParseDatabaseController & { schemaPromise: unknown }
  // Its own schemaPromise: Parse's loadSchema parks an in-flight load there.
  database.schemaPromise = null
  database.loadSchema = loadSchema
  const view = Object.create(config) as C
  view.database = database
  return view
}

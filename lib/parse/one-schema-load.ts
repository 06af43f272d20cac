// Parse loads the schema afresh for each step of one operation: a find and the
// count of a `count: 1` query each build a SchemaController (a new Config,
// every class's schema data, its permissions copied), a caller without the
// master key adds more for its protected fields, and one save builds four or
// five. Parse's DatabaseController keeps none, so that one request never sees
// two schemas; within one query or one write the schema cannot usefully change,
// so one load serves every step of it.
//
// That one load still builds a Config: Parse's SchemaController constructor
// calls Config.get(appId) (a new Config and DatabaseController, every option
// copied) to read two boot-time options, protectedFields and
// allowCustomObjectId. The operation's own config answers that lookup: it is
// a view of the same application's Config, so both options are the same ones.
import { Config } from './internals.js'
import type { ParseConfig, ParseDatabaseController } from './server-shapes.js'

/**
 * A view of Parse's Config whose database controller answers the schema this
 * operation loaded last: a load asked with clearCache replaces it, a failed
 * load is not kept. Everything else is the shared config and controller
 * themselves, read through the prototype.
 */
export function withOneSchemaLoad<C extends Pick<ParseConfig, 'database' | 'applicationId'>> (config: C): C {
  const shared = config.database
  const load = shared.loadSchema
  let loaded: ReturnType<ParseDatabaseController['loadSchema']> | undefined
  function loadSchema (this: ParseDatabaseController, options?: { clearCache?: boolean }) {
    if (loaded && !options?.clearCache) return loaded
    const attempt = answeringConfigLookups(view, () => load.call(this, options))
    loaded = attempt
    attempt.catch(() => { if (loaded === attempt) loaded = undefined })
    return attempt
  }
  // Its own schemaPromise: Parse's loadSchema parks an in-flight load there.
  const database = Object.create(shared, {
    schemaPromise: { value: null, writable: true, configurable: true },
    loadSchema: { value: loadSchema, writable: true, configurable: true }
  }) as ParseDatabaseController
  const view = Object.create(config, { database: { value: database, enumerable: true } }) as C
  return view
}

/**
 * Runs `body` (synchronous: it only starts the load) with Config.get(appId)
 * answering `config` for its own application. The SchemaController is built
 * before the load's first await, so the lookup it makes is inside.
 */
function answeringConfigLookups<T> (config: Pick<ParseConfig, 'applicationId'>, body: () => T): T {
  const get = Config.get
  Config.get = function (appId, mount) {
    return appId === config.applicationId && mount === undefined ? config as ParseConfig : get.call(this, appId, mount)
  }
  try {
    return body()
  } finally {
    Config.get = get
  }
}

// Parse's query engine loads the schema afresh for each step of one query: the
// find and the count of a `count: 1` query each build a SchemaController (a new
// Config, every class's schema data, its permissions copied), and a caller
// without the master key adds more for its protected fields. Within one query
// the schema cannot usefully change, so one load serves every step.

interface DatabaseLike {
  loadSchema (options?: { clearCache?: boolean }): Promise<unknown>
}

/**
 * A view of Parse's Config whose database controller loads the schema at most
 * once (a load that clears the cache still goes through). Everything else is
 * the shared config and controller themselves, read through the prototype.
 */
export function withOneSchemaLoad<C extends { database: DatabaseLike }> (config: C): C {
  const shared = config.database
  let loaded: Promise<unknown> | undefined
  const database = Object.create(shared, {
    loadSchema: {
      value: (options?: { clearCache?: boolean }) => {
        if (options?.clearCache) return shared.loadSchema(options)
        loaded ??= shared.loadSchema(options)
        return loaded
      }
    }
  }) as DatabaseLike
  return Object.create(config, { database: { value: database } }) as C
}

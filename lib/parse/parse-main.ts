// Parse Server's package, loaded with require() once its unused subsystems
// are deferred (lazy-subsystems.ts). An ESM `import … from 'parse-server'`
// would read every export of the package as it links, the GraphQL server's
// among them, and so load what the kit defers: the kit's code takes Parse's
// public exports from here. Loaded at the first call, not at import: importing
// the kit, declaring models and a refused boot never load Parse Server.
import './no-log-files.js' // before parse-server loads
import './defer-modules.js' // before parse-server loads
import { createRequire } from 'node:module'

type ParseServerPackage = typeof import('parse-server')

let parseServer: ParseServerPackage | undefined

/** Parse Server's package (its public exports: ParseServer, FileSystemAdapter, RedisCacheAdapter, …), loaded at the first call. */
export function parseServerPackage (): ParseServerPackage {
  parseServer ??= createRequire(import.meta.url)('parse-server') as ParseServerPackage
  return parseServer
}

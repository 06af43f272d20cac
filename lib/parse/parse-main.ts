// Parse Server's package, loaded with require() once its unused subsystems
// are deferred (lazy-subsystems.ts). An ESM `import … from 'parse-server'`
// would read every export of the package as it links, the GraphQL server's
// among them, and so load what the kit defers: the kit's code takes Parse's
// public exports from here.
import './no-log-files.js' // before parse-server loads
import './defer-modules.js' // before parse-server loads
import { createRequire } from 'node:module'

const parseServerPackage = createRequire(import.meta.url)('parse-server') as typeof import('parse-server')

export const ParseServer = parseServerPackage.ParseServer
export const FileSystemAdapter = parseServerPackage.FileSystemAdapter
export const RedisCacheAdapter = parseServerPackage.RedisCacheAdapter

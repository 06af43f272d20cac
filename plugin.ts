// kitPlugin: hosts Parse Server inside Fastify. The boot order lives here and
// only here, so an application cannot get it wrong.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { configureKit } from './lib/config.js'
import { loadDeclarations } from './lib/loader.js'
import { resolveOptions, type KitOptions } from './lib/options.js'
import { openDatabase } from './lib/storage/database.js'
import { startParseServer, type ParseHost } from './lib/host/parse-server.js'
import { mountParse } from './lib/host/mount.js'
import { registerCors } from './lib/host/cors.js'
import { composeCloud } from './lib/host/cloud.js'
import { createSchemaConfig, watchMigration } from './lib/model/schema-config.js'
import { registerDeclaredRoutes } from './lib/routing/register.js'
import { collectRoutes } from './lib/docs/collector.js'
import { setupSwagger } from './lib/docs/setup.js'
import type { DeclaredFunction } from './lib/routing/registry.js'
import { transactionalDeclared, useTransactionalAdapter } from './lib/storage/transaction.js'
import { applyAllIndexes, applyMongoValidators } from './lib/storage/indexes/apply.js'
import { startLiveQuery, type LiveQueryHost } from './lib/host/live-query.js'

export type { KitOptions } from './lib/options.js'

export interface KitRuntime {
  parse: ParseHost
  options: ReturnType<typeof resolveOptions>
  database: { kind: string, displayURI: string, embedded: boolean }
  functions: DeclaredFunction[]
}

declare module 'fastify' {
  interface FastifyInstance {
    kit: KitRuntime
  }
}

async function kit (fastify: FastifyInstance, input: KitOptions): Promise<void> {
  // 1. Options, checked before anything starts.
  const options = resolveOptions(input)
  configureKit({
    mountPath: options.mountPath,
    masterKey: options.masterKey,
    adminRole: options.adminRole,
    allowAuthRoutes: options.allowAuthRoutes,
    excludedPointerClasses: options.excludedPointerClasses
  })

  // 2. Models and handlers: importing them runs their decorators.
  await loadDeclarations(options.models)
  await loadDeclarations(options.functions)

  // 3. The database (embedded PostgreSQL when none is configured).
  const database = await openDatabase({
    databaseURI: options.databaseURI,
    dataDir: options.dataDir,
    ephemeral: options.ephemeralDatabase,
    production: options.production,
    onNotice: (line) => fastify.log.warn(line)
  })

  let parse: ParseHost | undefined
  let liveQuery: LiveQueryHost | undefined
  let functions: DeclaredFunction[] = []
  try {
    // 4. Parse Server on that database: the declared schema (Defined Schemas),
    //    then the declared triggers and the application's own cloud code.
    const { cloud: userCloud, schema: userSchema, ...overrides } = options.parseServerOptions
    if (options.liveQuery) overrides.liveQuery = { ...(overrides.liveQuery as object | undefined), classNames: options.liveQuery.classNames }
    const migration = watchMigration(createSchemaConfig({ adminRole: options.adminRole }))
    const directAccess = overrides.directAccess !== false
    if (!directAccess && transactionalDeclared()) {
      throw new Error('@Transactional needs Parse Server option directAccess: true (saves made over HTTP cannot join a transaction). Remove directAccess: false from parseServerOptions.')
    }
    parse = await startParseServer({
      appId: options.appId,
      masterKey: options.masterKey,
      serverURL: options.serverURL,
      mountPath: options.mountPath,
      databaseAdapter: database.adapter,
      filesAdapter: database.filesAdapter,
      schema: userSchema ?? migration.schema,
      cloud: composeCloud(userCloud),
      overrides
    })
    if (userSchema === undefined && !migration.completed()) {
      throw new Error('Parse Server could not apply the declared schema (its "Failed to run migrations" error is logged above). Fix the model declarations or the database, then restart.')
    }
    useTransactionalAdapter(database.adapter as never, { directAccess })

    // 5. Cross-origin policy for everything under the mount path: its preflight
    //    answers come before any app id check. Then Parse's REST surface behind
    //    the app id check and route restriction.
    if (options.cors) await registerCors(fastify, options.cors, options.mountPath)
    //    The API document's route collector comes first (@fastify/swagger sees only
    //    routes added after it); the kit's plumbing routes stay out of the document.
    const documented = await collectRoutes(fastify)
    const parseApp = parse.app
    await documented.kitRoutes(() => mountParse(fastify, {
      app: parseApp,
      mountPath: options.mountPath,
      appId: options.appId,
      masterKey: options.masterKey,
      policy: { allowAuthRoutes: options.allowAuthRoutes, allowedRoutes: options.allowedRoutes }
    }))

    // 6. One Fastify route per declared function (served without Parse's Express pipeline).
    functions = await documented.kitRoutes(() => registerDeclaredRoutes(fastify, {
      mountPath: options.mountPath,
      appId: options.appId,
      masterKey: options.masterKey,
      restApiKey: typeof overrides.restAPIKey === 'string' ? overrides.restAPIKey : undefined
    }))

    // 7. API documentation: OpenAPI at {docs}/json, Swagger UI at {docs} when installed.
    if (options.docs) await setupSwagger(fastify, options.docs.config, options.docs.path)

    // 8. LiveQuery subscriptions over WebSocket, on the same HTTP server.
    if (options.liveQuery) {
      liveQuery = await startLiveQuery(fastify, { appId: options.appId, masterKey: options.masterKey, serverURL: options.serverURL, parseOptions: overrides })
    }
  } catch (error) {
    await liveQuery?.shutdown().catch(() => {})
    await parse?.shutdown().catch(() => {})
    await database.close()
    throw error
  }

  const host = parse
  fastify.decorate('kit', {
    parse: host,
    options,
    database: { kind: database.kind, displayURI: database.displayURI, embedded: database.embedded },
    functions
  })

  // 9. Once listening: the declared indexes and the database-side field constraints.
  let closing = false
  if (options.indexes) {
    fastify.addHook('onListen', async () => {
      try {
        await applyAllIndexes(fastify, { log: fastify.log })
        await applyMongoValidators(fastify, { log: fastify.log })
      } catch (error) {
        // A server closed right after listen has nothing left to index.
        if (!closing) fastify.log.error({ err: error }, '[indexes] could not apply the declared indexes and constraints')
      }
    })
  }

  // Last: Parse first (it ends its pool), then the database it was using.
  fastify.addHook('onClose', async () => {
    closing = true
    useTransactionalAdapter(undefined)
    await liveQuery?.shutdown()
    await host.shutdown()
    await database.close()
  })
}

export const kitPlugin = fp(kit, { fastify: '5.x', name: 'fastify-parse-kit' })
export default kitPlugin

// One kit instance of the cluster test, in its own process (Parse's SDK is a
// process singleton). Reads PORT, DATABASE_URI and REDIS_URL; prints
// "listening <port>" on stdout once it serves. Logs go to stderr.
import Fastify from 'fastify'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, asCaller, configureRoleCache, invalidateRoles, kitPlugin, type CloudRequest } from '../../lib/index.js'
import { APP_ID, MASTER_KEY } from './kit.js'

@ParseClass('Memo')
class Memo extends BaseModel {
  @ParseField({ type: 'String' }) declare room: string
  @ParseField({ type: 'String' }) declare text: string
}

/** The application's own _Role trigger: cluster mode must keep it running. */
let roleSavesSeen = 0

class ClusterFunctions {
  @CloudFunction()
  static roleSaves () { return roleSavesSeen }

  @CloudFunction({ rateLimit: { max: 5, windowMs: 60_000 } })
  static limited () { return 'ok' }

  @CloudFunction({ rateLimit: { max: 3, windowMs: 60_000 } })
  static limitedDuringOutage () { return 'ok' }

  @CloudFunction({ rateLimit: { max: 2, windowMs: 60_000 } })
  static limitedAfterOutage () { return 'ok' }

  @CloudFunction({ rateLimit: { max: 2, windowMs: 60_000 } })
  static limitedAfterFreeze () { return 'ok' }

  /** Counted in Redis on every call, never refused: load for the freeze test. */
  @CloudFunction({ rateLimit: { max: 1_000_000, windowMs: 60_000 } })
  static counted () { return 'ok' }

  @CloudFunction({ requireRoles: ['Admin'] })
  static adminOnly () { return 'admin' }

  @CloudFunction({ requiresAuth: true })
  static whoAmI (request: CloudRequest) { return request.user!.id }

  @CloudFunction({ requiresAuth: true })
  static async listMemos (request: CloudRequest) {
    return (await new Parse.Query('Memo').find(asCaller(request))).length
  }

  @CloudFunction({ methods: ['POST'] })
  static invalidate (request: CloudRequest) {
    if (!request.master) throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, 'master key only')
    invalidateRoles(String(request.params.userId))
    return 'invalidated'
  }
}

configureRoleCache({ ttlMs: 60_000 })
const app = Fastify({ logger: { level: 'info', stream: process.stderr }, pluginTimeout: 120_000 })
await app.register(kitPlugin, {
  appId: APP_ID,
  masterKey: MASTER_KEY,
  models: [Memo],
  functions: [ClusterFunctions],
  allowAuthRoutes: true,
  liveQuery: { classNames: ['Memo'] },
  parseServerOptions: {
    cloud: (parse: { Cloud: { afterSave: (className: string, handler: () => void) => void } }) => {
      parse.Cloud.afterSave('_Role', () => { roleSavesSeen++ })
    }
  }
})
const port = Number(process.env.PORT)
await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`listening ${port}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })

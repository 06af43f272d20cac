// Parse's LiveQuery server on Fastify's own HTTP server: clients subscribe
// over WebSocket; a session token only receives rows it may read. Its sockets
// are bounded as HTTP requests are (live-query-socket.ts).
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import '../parse/no-log-files.js' // before parse-server loads
import { parseServerPackage } from '../parse/parse-main.js'
import { LiveQuerySocketServer, type LiveQueryLimits } from './live-query-socket.js'
import { DEFAULT_REQUEST_ID_HEADER, requestIdFrom } from './request-ids.js'
import { liveQueryStats, type LiveQueryStats } from '../parse/live-query-stats.js'
import { listsThroughBeforeSubscribe } from '../parse/live-query-subscribe.js'

export interface LiveQueryOptions extends LiveQueryLimits {
  /** Classes whose changes are pushed to subscribers. */
  classNames: string[]
}

export interface LiveQueryHost {
  /** Closes every socket (within about half a second) and stops Parse's LiveQuery server. */
  shutdown (): Promise<void>
  /** Open WebSocket connections and their subscriptions, now. */
  stats (): LiveQueryStats
}

export async function startLiveQuery (fastify: FastifyInstance, settings: { appId: string, masterKey: string, serverURL: string, mountPath: string, options: LiveQueryOptions, parseOptions: Record<string, unknown>, pubSubAdapter?: unknown, requestIdHeader?: string | false }): Promise<LiveQueryHost> {
  const { classNames, ...limits } = settings.options
  const header = settings.requestIdHeader ?? DEFAULT_REQUEST_ID_HEADER
  // The server's own genReqId (kitServerOptions' takes the client's x-request-id), as for an HTTP request.
  const genReqId = (fastify as unknown as { genReqId?: (request: IncomingMessage) => string }).genReqId ?? requestIdFrom(header)
  const sockets = new LiveQuerySocketServer({
    server: fastify.server,
    path: settings.mountPath,
    classNames,
    ...limits,
    warn: (message) => fastify.log.warn(message),
    ...(header === false ? {} : { requestIds: { header, of: (request: IncomingMessage) => String(genReqId(request)) } })
  })
  const server = await parseServerPackage().ParseServer.createLiveQueryServer(fastify.server, {
    appId: settings.appId,
    masterKey: settings.masterKey,
    serverURL: settings.serverURL,
    // Without key pairs Parse's LiveQuery accepts any application id; with only this one it
    // checks it, and never honours the master key (masterKeyIps could not apply to a WebSocket).
    keyPairs: { applicationId: settings.appId },
    wssAdapter: sockets,
    // Cluster mode: events from every instance arrive through Redis.
    ...(settings.pubSubAdapter ? { pubSubAdapter: settings.pubSubAdapter } : {})
  } as never, settings.parseOptions as never) as unknown as { shutdown (): Promise<void> }
  listsThroughBeforeSubscribe(server, settings.appId)
  let closing: Promise<void> | undefined
  return {
    shutdown: () => {
      // Parse's shutdown does not wait for its sockets; the socket server's own close does.
      closing ??= Promise.all([server.shutdown(), sockets.close()]).then(() => {})
      return closing
    },
    stats: () => liveQueryStats(server)
  }
}

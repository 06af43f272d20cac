// Parse's LiveQuery server on Fastify's own HTTP server: clients subscribe
// over WebSocket; a session token only receives rows it may read.
import type { FastifyInstance } from 'fastify'
import '../parse/no-log-files.js' // before parse-server loads
import { ParseServer } from 'parse-server'
import { liveQueryStats, type LiveQueryStats } from '../parse/live-query-stats.js'

export interface LiveQueryOptions {
  /** Classes whose changes are pushed to subscribers. */
  classNames: string[]
}

export interface LiveQueryHost {
  shutdown (): Promise<void>
  /** Open WebSocket connections and their subscriptions, now. */
  stats (): LiveQueryStats
}

export async function startLiveQuery (fastify: FastifyInstance, settings: { appId: string, masterKey: string, serverURL: string, parseOptions: Record<string, unknown>, pubSubAdapter?: unknown }): Promise<LiveQueryHost> {
  const server = await ParseServer.createLiveQueryServer(fastify.server, {
    appId: settings.appId,
    masterKey: settings.masterKey,
    serverURL: settings.serverURL,
    // Without key pairs Parse's LiveQuery accepts any application id; with only this one it
    // checks it, and never honours the master key (masterKeyIps could not apply to a WebSocket).
    keyPairs: { applicationId: settings.appId },
    // Cluster mode: events from every instance arrive through Redis.
    ...(settings.pubSubAdapter ? { pubSubAdapter: settings.pubSubAdapter } : {})
  } as never, settings.parseOptions as never) as unknown as { shutdown (): Promise<void> }
  return { shutdown: () => server.shutdown(), stats: () => liveQueryStats(server) }
}

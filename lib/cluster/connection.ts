// The kit's own Redis connections (ioredis): one for commands (rate limits,
// publishing role evictions) and one subscribed to role evictions. Neither
// queues commands while disconnected, and a command unanswered within the
// Redis bound (redis-bound.ts) fails, so a request never waits for Redis: the
// callers fall back (see rate-limit-store.ts and role-evictions.ts).
import { Redis, type RedisOptions } from 'ioredis'
import type { OutageLog } from './outage-log.js'
import { RedisUnreachableError } from '../errors.js'

export interface RedisLink {
  commands: Redis
  subscriber: Redis
  close (): Promise<void>
}

const CONNECT_TIMEOUT_MS = 5_000

function clientOptions (name: string, commandTimeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    connectionName: `fastify-parse-kit:${name}`,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Fail at once instead of queueing while disconnected, and do not retry a
    // command that was in flight when the connection dropped.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A Redis that accepts the connection but stops answering must not hold requests.
    commandTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000)
  }
}

/** Connects both clients; fails with a message saying what to change when Redis cannot be reached. */
export async function connectRedis (url: string, displayURL: string, outage: OutageLog, commandTimeoutMs: number): Promise<RedisLink> {
  const commands = new Redis(url, clientOptions('commands', commandTimeoutMs))
  const subscriber = new Redis(url, clientOptions('role-evictions', commandTimeoutMs))
  let connected = false
  for (const [name, client] of [['commands', commands], ['subscriber', subscriber]] as const) {
    // ioredis reports errors as events; a listener keeps them from surfacing as unhandled.
    // Before boot completes, the error thrown below says it all.
    client.on('error', (error) => { if (connected) outage.down(name, error) })
    client.on('close', () => { if (connected) outage.down(name) })
    client.on('ready', () => outage.up(name))
  }
  const close = async () => {
    for (const client of [commands, subscriber]) {
      client.removeAllListeners('close')
      client.disconnect(false)
    }
  }
  try {
    await Promise.all([commands.connect(), subscriber.connect()])
    connected = true
  } catch (error) {
    await close()
    throw new RedisUnreachableError(`kitPlugin option "redis": cannot reach ${displayURL} (${(error as Error).message}). Start Redis there, fix REDIS_URL (redis://host:6379 or rediss://…), or unset it to run a single process.`)
  }
  return { commands, subscriber, close }
}

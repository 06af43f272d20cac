// LiveQuery events through Redis, with Parse's own Redis pub/sub clients: a
// save on any instance reaches subscribers on every instance, and each
// instance still applies ACLs and CLPs before sending an event. Given to Parse
// as its `pubSubAdapter` (rather than `redisURL`) for two guards:
// - Parse publishes without awaiting; a publish in flight when the connection
//   drops would reject unhandled and end the process, so rejections are caught;
// - reconnection attempts are reported once by the outage log, not logged as
//   an error each time.
// While Redis is away, events published meanwhile are queued (up to
// QUEUED_EVENTS) and sent when it is back; beyond that they are dropped.
import { RedisPubSub } from '../parse/internals.js'
import { nodeRedisOptions } from './parse-cache.js'
import type { OutageLog } from './outage-log.js'

const QUEUED_EVENTS = 10_000

interface PubSubClient {
  isOpen: boolean
  publish (channel: string, message: string): Promise<unknown>
  on (event: string, listener: (...args: any[]) => void): unknown // eslint-disable-line @typescript-eslint/no-explicit-any
  removeAllListeners (event: string): unknown
  close (): Promise<unknown>
}

export interface LiveQueryPubSub {
  /** Parse's `pubSubAdapter` option (Parse Server's liveQuery options and the LiveQuery server's). */
  adapter: { createPublisher (): PubSubClient, createSubscriber (): PubSubClient }
  /** Closes the clients Parse does not close itself (the publisher). */
  close (): Promise<void>
}

export function liveQueryPubSub (url: string, outage: OutageLog): LiveQueryPubSub {
  const clients = new Set<PubSubClient>()
  const config = { redisURL: url, redisOptions: { ...nodeRedisOptions(url), commandsQueueMaxLength: QUEUED_EVENTS } }
  const watch = (client: PubSubClient, name: string) => {
    client.removeAllListeners('error')
    client.on('error', (error: unknown) => outage.down(name, error))
    client.on('ready', () => outage.up(name))
    clients.add(client)
    return client
  }
  return {
    adapter: {
      createPublisher () {
        const client = watch(RedisPubSub.createPublisher(config) as PubSubClient, 'LiveQuery publisher')
        const publish = client.publish.bind(client)
        client.publish = (channel, message) => publish(channel, message).catch((error: unknown) => {
          outage.down('LiveQuery publisher', error)
        })
        return client
      },
      createSubscriber () {
        return watch(RedisPubSub.createSubscriber(config) as PubSubClient, 'LiveQuery subscriber')
      }
    },
    async close () {
      for (const client of clients) {
        client.removeAllListeners('ready')
        if (client.isOpen) await client.close().catch(() => {})
      }
      clients.clear()
    }
  }
}

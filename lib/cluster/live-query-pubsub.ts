// LiveQuery events through Redis, with Parse's own Redis pub/sub clients: a
// save on any instance reaches subscribers on every instance, and each
// instance still applies ACLs and CLPs before sending an event. Given to Parse
// as its `pubSubAdapter` (rather than `redisURL`) for these reasons:
// - an instance's own events go to its own subscribers at once, in process,
//   whatever Redis does; Redis carries them to the other instances only (each
//   message names its origin, and an instance skips its own when Redis echoes
//   them back). So a Redis outage never holds back a subscriber on the
//   instance where the save happened;
// - while Redis is away or bypassed (redis-bound.ts), events for the other
//   instances are queued (up to QUEUED_EVENTS, the oldest dropped first) and
//   published when it answers again;
// - Parse publishes without awaiting; a publish in flight when the connection
//   drops would reject unhandled and end the process, so rejections are caught;
// - reconnection attempts are reported once by the outage log, not logged as
//   an error each time.
import { randomUUID } from 'node:crypto'
import { liveQueryPublisher, liveQuerySubscriber } from '../parse/parse-calls.js'
import { nodeRedisOptions } from './parse-cache.js'
import type { OutageLog } from './outage-log.js'
import type { RedisBound } from './redis-bound.js'

export const QUEUED_EVENTS = 10_000
/** Wait before sending queued events after a reconnection. */
const RESUBSCRIBE_MS = 1_000

type Listener = (message: string, channel: string) => void

interface PubSubClient {
  isOpen: boolean
  isReady: boolean
  publish (channel: string, message: string): Promise<unknown>
  subscribe (channel: string, listener: Listener): Promise<unknown>
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

const ORIGIN_KEY = ',"__fpkOrigin":"'

/** Adds the origin to a JSON object message (Parse publishes JSON objects); anything else goes as it is. */
function withOrigin (message: string, origin: string): string {
  return message.endsWith('}') && message.length > 2 ? `${message.slice(0, -1)}${ORIGIN_KEY}${origin}"}` : message
}

/** The message without its origin, and that origin. */
function splitOrigin (message: string): { message: string, origin?: string } {
  const at = message.lastIndexOf(ORIGIN_KEY)
  if (at === -1 || !message.endsWith('"}')) return { message }
  return { message: `${message.slice(0, at)}}`, origin: message.slice(at + ORIGIN_KEY.length, -2) }
}

export function liveQueryPubSub (url: string, outage: OutageLog, bound: RedisBound): LiveQueryPubSub {
  const origin = randomUUID()
  const clients = new Set<PubSubClient>()
  /** This process's subscriptions (Parse's LiveQuery server), by channel. */
  const local = new Map<string, Listener[]>()
  const queued: Array<{ channel: string, message: string }> = []
  /** Parse's publisher, and its own publish (the client's `publish` is replaced below). */
  let publisher: { client: PubSubClient, publish: PubSubClient['publish'] } | undefined
  const config = { redisURL: url, redisOptions: { ...nodeRedisOptions(url), disableOfflineQueue: true } }
  const watch = (client: PubSubClient, name: string) => {
    client.removeAllListeners('error')
    client.on('error', (error: unknown) => outage.down(name, error))
    client.on('ready', () => outage.up(name))
    clients.add(client)
    return client
  }
  const deliverHere = (channel: string, message: string) => {
    const listeners = local.get(channel)
    if (!listeners) return
    // As a subscription would: after the publishing call returns.
    setImmediate(() => { for (const listener of listeners) listener(message, channel) })
  }
  const send = (channel: string, message: string) => {
    if (!publisher || !publisher.client.isReady || bound.bypassed) {
      if (queued.length >= QUEUED_EVENTS) queued.shift()
      queued.push({ channel, message })
      return
    }
    // Unanswered within the bound: Redis may still deliver it when it resumes, so it is not queued again.
    const lost = (error: unknown) => {
      if (!(error instanceof Error && error.name === 'RedisNoAnswerError')) outage.down('LiveQuery publisher', error)
    }
    try {
      bound.within('LiveQuery publisher', publisher.publish(channel, message)).catch(lost)
    } catch (error) {
      lost(error) // a client closed meanwhile throws at once
    }
  }
  const flush = () => {
    while (queued.length > 0 && publisher?.client.isReady && !bound.bypassed) {
      const { channel, message } = queued.shift()!
      send(channel, message)
    }
  }
  bound.onRecovery(flush)
  return {
    adapter: {
      createPublisher () {
        const client = watch(liveQueryPublisher(config) as PubSubClient, 'LiveQuery publisher')
        publisher = { client, publish: client.publish.bind(client) }
        // After a reconnection, a moment for the other instances' subscriptions to be back too.
        client.on('ready', () => setTimeout(flush, RESUBSCRIBE_MS).unref())
        client.publish = async (channel, message) => {
          deliverHere(channel, message)
          send(channel, withOrigin(message, origin))
        }
        return client
      },
      createSubscriber () {
        const client = watch(liveQuerySubscriber(config) as PubSubClient, 'LiveQuery subscriber')
        const subscribe = client.subscribe.bind(client)
        client.subscribe = (channel, listener) => {
          local.set(channel, [...(local.get(channel) ?? []), listener])
          return subscribe(channel, (raw, from) => {
            const { message, origin: from_ } = splitOrigin(raw)
            // This instance's own events were delivered here already.
            if (from_ !== origin) listener(message, from)
          })
        }
        return client
      }
    },
    async close () {
      for (const client of clients) {
        client.removeAllListeners('ready')
        if (client.isOpen) await client.close().catch(() => {})
      }
      clients.clear()
      local.clear()
    }
  }
}

// On a class with a beforeSubscribe trigger, Parse's LiveQuery server hands
// the subscription's query to the SDK's Parse.Query#withJSON before the
// trigger and takes it back through toJSON after it. Both speak `keys` and
// `watch` as comma-separated text, while the LiveQuery protocol (and every
// SDK's select() and watch()) sends lists: each such subscription was refused
// (141, "json.keys.split is not a function"). Here the query reaches withJSON
// with text, and what toJSON gives back has lists again, which Parse's
// protected-field check of `watch` and its event filter read.
import Parse from 'parse/node'
import { parseInternals } from './internals.js'

const WRAPPED = Symbol.for('fastify-parse-kit.live-query-subscribe')
const LISTS = ['keys', 'watch'] as const

interface SubscribeRequest { query?: Record<string, unknown> & { className?: unknown } }
type Handle = (socket: unknown, request: SubscribeRequest) => unknown
interface Server { _handleSubscribe: Handle, [WRAPPED]?: true }

/** Wraps the LiveQuery server's subscribe step (its update step goes through it too). */
export function listsThroughBeforeSubscribe (server: unknown, appId: string): void {
  const target = server as Server
  if (typeof target._handleSubscribe !== 'function' || target[WRAPPED]) return
  target[WRAPPED] = true
  const handle = target._handleSubscribe
  target._handleSubscribe = function (this: Server, socket, request) {
    const query = request?.query
    if (query && typeof query === 'object' && LISTS.some((name) => Array.isArray(query[name])) && hasBeforeSubscribe(query.className, appId)) {
      let current: unknown = asText(query)
      Object.defineProperty(request, 'query', {
        configurable: true,
        enumerable: true,
        get: () => current,
        // Parse puts the SDK query here for the trigger (which may put another), then its toJSON.
        set: (value: unknown) => { current = value instanceof Parse.Query ? value : asLists(value) }
      })
    }
    return handle.call(this, socket, request)
  }
}

function hasBeforeSubscribe (className: unknown, appId: string): boolean {
  return typeof className === 'string' && parseInternals().triggers.getTrigger(className, 'beforeSubscribe', appId) !== undefined
}

function asText (query: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...query }
  for (const name of LISTS) if (Array.isArray(copy[name])) copy[name] = (copy[name] as unknown[]).join(',')
  return copy
}

function asLists (value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  const json = value as Record<string, unknown>
  for (const name of LISTS) if (typeof json[name] === 'string') json[name] = (json[name] as string).split(',')
  return json
}

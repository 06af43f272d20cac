// LiveQuery's WebSocket server, given to Parse as its `wssAdapter`, with the
// bounds HTTP requests have. Parse's default takes upgrades on every path and
// reads frames up to ws's 100 MiB before anything is checked; this one:
// - takes upgrades only on the mount path (where the SDKs connect), and
//   leaves other paths to other upgrade listeners or refuses them (404,
//   naming the right URL: live-query-wrong-path.ts);
// - refuses a frame larger than `maxPayload` (the body limit) while reading
//   its header, before buffering it (close code 1009);
// - closes a socket that has not connected (a `connect` Parse accepted)
//   within `connectTimeoutMs`;
// - counts sockets per address (429 over the limit) and subscriptions per
//   socket (an `update` of a subscription the socket does not hold is refused:
//   Parse would make it a new one), and refuses a subscription to a class not
//   in liveQuery.classNames, naming the option, instead of Parse's silent
//   "subscribed";
// - closes a socket that stops reading once its unsent events pass
//   UNSENT_PAYLOADS × maxPayload (ws queues them in memory without bound).
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import Parse from 'parse/node'
import { gateLiveQueryMessages } from '../parse/live-query-messages.js'
import { wrongPathRefusals, type WrongPathRefusals } from './live-query-wrong-path.js'
import { subscriptionWhereProblem } from './live-query-where.js'

export interface LiveQueryLimits {
  /** Largest message in bytes. */
  maxPayload: number
  /** Time from the upgrade to an accepted `connect`, in ms. */
  connectTimeoutMs: number
  maxSubscriptionsPerConnection: number
  maxConnectionsPerAddress: number
  /** Whether a subscription's where may use $regex (refused otherwise, naming the option). */
  allowRegex: boolean
}

export interface LiveQuerySocketSettings extends LiveQueryLimits {
  server: Server
  /** The path clients connect to: the mount path. */
  path: string
  classNames: string[]
  /** Where a socket error a client caused is reported (the server's log, at warn). */
  warn: (message: string) => void
  /** The header a refused upgrade carries its request id in, as every HTTP answer does (none when absent), and the id of a request (Fastify's genReqId). */
  requestIds?: { header: string, of: (request: IncomingMessage) => string }
}

/** Close codes (RFC 6455): policy violation; server going away. */
const POLICY_VIOLATION = 1008
const GOING_AWAY = 1001
/** How long a closing socket may take to answer its close frame at shutdown. */
const CLOSE_GRACE_MS = 500
/**
 * Unsent bytes a socket may hold, in maxPayloads: a client that stops reading would have
 * each event of each of its subscriptions queued in the server's memory until Parse's ping
 * check ends it (two websocketTimeouts, 20 s).
 */
export const UNSENT_PAYLOADS = 8

/** Parse's WSSAdapter shape: Parse sets the three handlers, then calls start(). */
export class LiveQuerySocketServer {
  onListen: () => void = () => {}
  onConnection: (ws: WebSocket) => void = () => {}
  onError: (error: unknown) => void = () => {}
  private readonly wss: WebSocketServer
  private readonly perAddress = new Map<string, number>()
  private readonly upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => this.takeUpgrade(request, socket, head)
  private readonly wrongPath: WrongPathRefusals

  constructor (private readonly settings: LiveQuerySocketSettings) {
    this.wrongPath = wrongPathRefusals(settings.path, settings.warn, (request) => this.requestIdHeader(request))
    this.wss = new WebSocketServer({ noServer: true, maxPayload: settings.maxPayload })
    this.wss.on('error', (error) => this.onError(error))
  }

  start (): void {
    this.settings.server.on('upgrade', this.upgrade)
    this.onListen()
  }

  /** Closes every socket (a close frame, then terminated after a short grace) and stops taking upgrades. */
  async close (): Promise<void> {
    this.settings.server.off('upgrade', this.upgrade)
    const sockets = [...this.wss.clients]
    await Promise.all(sockets.map((ws) => new Promise<void>((resolve) => {
      if (ws.readyState === ws.CLOSED) return resolve()
      const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS)
      ws.once('close', () => { clearTimeout(timer); resolve() })
      ws.close(GOING_AWAY, 'server shutting down')
    })))
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
  }

  private takeUpgrade (request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.isOwnPath(request.url ?? '/')) {
      // Another upgrade listener (the application's own WebSocket server) may take it.
      if (this.settings.server.listenerCount('upgrade') === 1) this.wrongPath.refuse(request, socket)
      return
    }
    const address = request.socket.remoteAddress ?? 'unknown'
    const open = this.perAddress.get(address) ?? 0
    if (open >= this.settings.maxConnectionsPerAddress) return refuse(socket, 429, 'Too Many Requests', { 'Retry-After': '1', ...this.requestIdHeader(request) })
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1)
      ws.once('close', () => {
        const left = (this.perAddress.get(address) ?? 1) - 1
        if (left > 0) this.perAddress.set(address, left)
        else this.perAddress.delete(address)
      })
      this.guard(ws, address)
      const ownErrorListeners = new Set(ws.listeners('error'))
      // Parse pings each socket on an interval it clears only when a ping goes unanswered:
      // a closed socket kept it ticking 20 s more, and kept a closed server's process alive as long.
      const pings = intervalsStartedBy(() => this.onConnection(ws))
      ws.once('close', () => { for (const timer of pings) clearInterval(timer) })
      // Parse logs a whole inspect() of the socket, tens of KB at error level, on every socket
      // error, which a client causes at will (a frame over maxPayload, invalid UTF-8): one line
      // at warn instead; the server itself is fine.
      for (const listener of ws.listeners('error')) {
        if (!ownErrorListeners.has(listener)) ws.off('error', listener as (error: Error) => void)
      }
      ws.on('error', (error) => this.settings.warn(`LiveQuery socket from ${address}: ${error.message}`))
    })
  }

  /** `{ header: id }` for a refused upgrade, so that it can be found in the logs as any other answer can. */
  private requestIdHeader (request: IncomingMessage): Record<string, string> {
    const ids = this.settings.requestIds
    return ids ? { [ids.header]: ids.of(request) } : {}
  }

  private isOwnPath (url: string): boolean {
    let pathname: string
    try {
      pathname = new URL(url, 'http://localhost').pathname
    } catch {
      return false
    }
    const path = this.settings.path
    return pathname === path || pathname === (path.endsWith('/') ? path : `${path}/`)
  }

  private guard (ws: WebSocket, address: string): void {
    const { connectTimeoutMs, maxSubscriptionsPerConnection, classNames, maxPayload, warn, allowRegex } = this.settings
    const maxUnsent = UNSENT_PAYLOADS * maxPayload
    const subscriptions = new Set<unknown>()
    const deadline = setTimeout(() => ws.close(POLICY_VIOLATION, `no accepted connect message within ${connectTimeoutMs} ms`), connectTimeoutMs)
    ws.once('close', () => clearTimeout(deadline))
    let sendOwn: (text: string) => void = () => {}
    const refuse = (requestId: unknown, code: number, error: string) => {
      sendOwn(JSON.stringify({ op: 'error', code, error, reconnect: false, ...(requestId === undefined ? {} : { requestId }) }))
      return false
    }
    sendOwn = gateLiveQueryMessages(ws, {
      admit (text) {
        let message: { op?: unknown, requestId?: unknown, query?: { className?: unknown } }
        try {
          message = JSON.parse(text)
        } catch {
          return true // Parse answers it
        }
        if (typeof message !== 'object' || message === null) return true
        const { op, requestId } = message
        if (op === 'subscribe' || op === 'update') {
          const className = message.query?.className
          if (typeof className === 'string' && !classNames.includes(className)) {
            return refuse(requestId, Parse.Error.OPERATION_FORBIDDEN, `Class ${className} is not in liveQuery.classNames; add it to the kit's liveQuery.classNames option to subscribe to it.`)
          }
          const problem = subscriptionWhereProblem((message.query as { where?: unknown } | undefined)?.where, { allowRegex })
          if (problem) return refuse(requestId, Parse.Error.INVALID_QUERY, `The subscription's where cannot be matched: ${problem}.`)
          // Parse turns an update of a requestId it does not know into a new subscription
          // (it fails to unsubscribe, then subscribes): refused here, so that it cannot go
          // around the per-connection limit. Parse's own answer to one is an error as well.
          if (op === 'update' && !subscriptions.has(requestId)) {
            return refuse(requestId, 2, `Cannot find subscription with requestId ${JSON.stringify(requestId)}; subscribe before updating it.`)
          }
          if (op === 'subscribe' && !subscriptions.has(requestId)) {
            if (subscriptions.size >= maxSubscriptionsPerConnection) {
              return refuse(requestId, Parse.Error.OPERATION_FORBIDDEN, `At most ${maxSubscriptionsPerConnection} subscriptions per connection (liveQuery.maxSubscriptionsPerConnection); unsubscribe one first.`)
            }
            subscriptions.add(requestId)
          }
        } else if (op === 'unsubscribe') {
          subscriptions.delete(requestId)
        }
        return true
      },
      sent (text) {
        const unsent = ws.bufferedAmount + text.length
        if (unsent > maxUnsent && ws.readyState === ws.OPEN) {
          // A close frame would wait behind what the client does not read: ended at once.
          warn(`LiveQuery socket from ${address} is not reading: closed with ${unsent} bytes unsent (the bound is ${UNSENT_PAYLOADS} × liveQuery.maxPayload, ${maxUnsent})`)
          ws.terminate()
          return
        }
        if (text.startsWith('{"op":"connected"')) clearTimeout(deadline)
        else if (text.startsWith('{"op":"error"')) {
          // A subscription Parse refused does not count.
          try {
            const { requestId } = JSON.parse(text) as { requestId?: unknown }
            if (requestId !== undefined) subscriptions.delete(requestId)
          } catch {}
        }
      }
    })
  }
}

/** Runs `connect` and answers the interval timers it started. */
function intervalsStartedBy (connect: () => void): NodeJS.Timeout[] {
  const started: NodeJS.Timeout[] = []
  const original = globalThis.setInterval
  const recording = (...args: Parameters<typeof setInterval>) => {
    const timer = original(...args)
    started.push(timer)
    return timer
  }
  globalThis.setInterval = recording as unknown as typeof setInterval
  try {
    connect()
  } finally {
    globalThis.setInterval = original
  }
  return started
}

function refuse (socket: Duplex, status: number, reason: string, headers: Record<string, string> = {}): void {
  const lines = [`HTTP/1.1 ${status} ${reason}`, 'Connection: close', 'Content-Length: 0', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  socket.end(`${lines.join('\r\n')}\r\n\r\n`)
  socket.on('error', () => {})
}

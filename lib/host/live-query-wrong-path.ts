// A LiveQuery upgrade on a path other than the mount path (the server root,
// `ws://host:port`, is what Parse's own examples use) is refused 404 with a body
// naming the right URL, and the server's log says so too: the SDKs swallow the
// refusal and reconnect forever, so the log is where a developer can see it.
// One warn line per minute at most, however often the client retries.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import Parse from 'parse/node'

/** At most one warn line per this long; the next one counts the refusals in between. */
export const WRONG_PATH_WARN_EVERY_MS = 60_000

export interface WrongPathRefusals {
  refuse (request: IncomingMessage, socket: Duplex): void
}

export function wrongPathRefusals (mountPath: string, warn: (message: string) => void, extraHeaders: (request: IncomingMessage) => Record<string, string> = () => ({})): WrongPathRefusals {
  let lastWarned = -Infinity
  let unreported = 0
  return {
    refuse (request, socket) {
      const url = liveQueryUrl(request, mountPath)
      const asked = pathOf(request.url ?? '/')
      const error = `LiveQuery is served at ${url}, not at ${asked}: point the SDK's liveQueryServerURL there.`
      const body = JSON.stringify({ code: Parse.Error.OBJECT_NOT_FOUND, error }) // 404 101, as any route that does not exist
      socket.end([
        'HTTP/1.1 404 Not Found',
        'Connection: close',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...Object.entries(extraHeaders(request)).map(([name, value]) => `${name}: ${value}`),
        '', body
      ].join('\r\n'))
      socket.on('error', () => {})
      unreported++
      const now = Date.now()
      if (now - lastWarned < WRONG_PATH_WARN_EVERY_MS) return
      const count = unreported === 1 ? '' : ` (${unreported} refused since the last such line)`
      warn(`[live-query] a WebSocket upgrade at ${asked} was refused 404${count}: LiveQuery is served at the mount path, ${url}; set the SDK's liveQueryServerURL to it`)
      lastWarned = now
      unreported = 0
    }
  }
}

/** The URL the client should use, from the Host it connected with (characters of a host name only). */
function liveQueryUrl (request: IncomingMessage, mountPath: string): string {
  const host = (request.headers.host ?? 'host:port').replace(/[^A-Za-z0-9.:[\]-]/g, '') || 'host:port'
  const forwarded = String(request.headers['x-forwarded-proto'] ?? '').split(',')[0].trim()
  const secure = forwarded === 'https' || (request.socket as { encrypted?: boolean }).encrypted === true
  return `${secure ? 'wss' : 'ws'}://${host}${mountPath}`
}

/** The path asked for, without its query (which may carry keys), shortened and safe to log. */
function pathOf (url: string): string {
  const path = url.split('?')[0].replace(/[^\x21-\x7e]/g, '')
  return path.length > 100 ? `${path.slice(0, 100)}…` : path || '/'
}

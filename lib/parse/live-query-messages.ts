// Parse's LiveQuery server reads a socket's messages through the socket's
// `onmessage` property (ParseWebSocket in LiveQuery/ParseWebSocketServer.js),
// as text, and writes through `send`. The kit's socket server puts a gate
// between the two: Parse sees only the messages the gate admits, and the gate
// sees what Parse answers (to know when a client has connected, or a
// subscription was refused). test/parse-contract.test.ts pins this.
import type { WebSocket } from 'ws'

type MessageHandler = (event: { data: string }) => void

export interface LiveQueryGate {
  /** A text message from the client: true hands it to Parse. */
  admit (text: string): boolean
  /** A text message Parse sends to the client. */
  sent (text: string): void
}

/** Returns a `send` that bypasses the gate's `sent` (for the gate's own answers). */
export function gateLiveQueryMessages (ws: WebSocket, gate: LiveQueryGate): (text: string) => void {
  let parseHandler: MessageHandler | undefined
  // Parse assigns its handler here; ws would otherwise add it as a listener of every message.
  Object.defineProperty(ws, 'onmessage', {
    configurable: true,
    get: () => parseHandler,
    set: (handler: MessageHandler) => { parseHandler = handler }
  })
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      ws.close(1003, 'LiveQuery messages are JSON text')
      return
    }
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString()
    if (gate.admit(text)) parseHandler?.({ data: text })
  })
  const send = ws.send.bind(ws) as (data: unknown, ...rest: unknown[]) => void
  ws.send = ((data: unknown, ...rest: unknown[]) => {
    if (typeof data === 'string') gate.sent(data)
    send(data, ...rest)
  }) as WebSocket['send']
  return (text) => send(text)
}

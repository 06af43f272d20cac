// A raw LiveQuery WebSocket for tests that speak the protocol themselves (as an
// attacker's or a slow client's socket would): every message kept in order, and
// `next` waiting for the first one a predicate accepts.
import { once } from 'node:events'
import WebSocket from 'ws'

export type LiveQueryMessage = Record<string, any>
export interface LiveQuerySocket {
  ws: WebSocket
  messages: LiveQueryMessage[]
  next (predicate: (message: LiveQueryMessage) => boolean): Promise<LiveQueryMessage>
}

/** Opens `url`; `next` rejects after `waitMs` without a matching message, naming what did arrive. */
export async function openLiveQuerySocket (url: string, waitMs: number): Promise<LiveQuerySocket> {
  const ws = new WebSocket(url)
  const messages: LiveQueryMessage[] = []
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())))
  await once(ws, 'open')
  const next = (predicate: (message: LiveQueryMessage) => boolean) => new Promise<LiveQueryMessage>((resolve, reject) => {
    const started = Date.now()
    const check = () => {
      const found = messages.find(predicate)
      if (found) return resolve(found)
      if (Date.now() - started > waitMs) return reject(new Error(`no such message; got ${JSON.stringify(messages)}`))
      setTimeout(check, 20)
    }
    check()
  })
  return { ws, messages, next }
}

// The data-size scenario's LiveQuery fan-out (issue 46): subscribers, each
// signed in with the session of a distinct user of the role Editor, subscribe
// to Note over raw WebSockets (LiveQuery's JSON protocol with `ws`, light
// enough for a hundred clients in one process); then a Note readable by the
// role alone is saved through the API, and the time from the save to the
// first and to the last `create` event is taken. Each event makes Parse's
// LiveQuery server resolve every subscriber's session and roles; the saves are
// spaced past its 5 s auth cache, so each one pays that as an application
// whose events come less often does, and the `_Session` table's size shows.
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { APP_ID, MASTER_KEY, MOUNT, median, round } from './shared.js'

/** One save: ms from sending it to its answer, to the first and to the last subscriber's `create` event. */
export interface FanOutSample { saveMs: number, firstMs: number, lastMs: number, received: number }

/** The fan-out at one size: medians over the repetitions, and the repetitions. */
export interface FanOutPoint { subscribers: number, firstMs: number, lastMs: number, saveMs: number, missed: number, repetitions: FanOutSample[] }

/** Parse's LiveQuery keeps a token's resolved session for 5 s (its cacheTimeout), Parse's user and role caches as long. */
const AUTH_CACHE_MS = 5_000
export const FANOUT_SPACING_MS = AUTH_CACHE_MS + 1_500
/** Generous: at a large size without the session index, each subscriber's lookup is a table scan. */
const WAIT_MS = 300_000
export const FANOUT_TITLE = 'bench live query'

interface Subscriber { ws: WebSocket, created: Map<string, number> }

/** Resolves with the first message `match` accepts; rejects on an error message, a close or the deadline. */
function awaitMessage (ws: WebSocket, match: (message: Record<string, unknown>) => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`LiveQuery: no ${what} within ${WAIT_MS / 1000} s`)), WAIT_MS)
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>
      if (message.op === 'error') finish(new Error(`LiveQuery refused the ${what}: ${JSON.stringify(message)}`))
      else if (match(message)) finish()
    }
    const onClose = (code: number) => finish(new Error(`LiveQuery closed the socket (${code}) before the ${what}`))
    const finish = (error?: Error) => {
      clearTimeout(timer)
      ws.off('message', onMessage)
      ws.off('close', onClose)
      if (error) reject(error)
      else resolve()
    }
    ws.on('message', onMessage)
    ws.on('close', onClose)
  })
}

async function subscribe (url: string, sessionToken: string): Promise<Subscriber> {
  const ws = new WebSocket(url)
  const created = new Map<string, number>()
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { op?: string, object?: { objectId?: string } }
    if (message.op === 'create' && message.object?.objectId) created.set(message.object.objectId, performance.now())
  })
  await once(ws, 'open')
  const connected = awaitMessage(ws, (message) => message.op === 'connected', 'connect')
  ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID, sessionToken }))
  await connected
  const subscribed = awaitMessage(ws, (message) => message.op === 'subscribed' && message.requestId === 1, 'subscription')
  ws.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Note', where: {} }, sessionToken }))
  await subscribed
  return { ws, created }
}

/** Every subscriber's arrival time of the event for `objectId`, once all have it or the deadline passed. */
async function arrivals (subscribers: Subscriber[], objectId: string): Promise<number[]> {
  const deadline = performance.now() + WAIT_MS
  while (subscribers.some((subscriber) => !subscriber.created.has(objectId)) && performance.now() < deadline) await sleep(5)
  return subscribers.flatMap((subscriber) => subscriber.created.has(objectId) ? [subscriber.created.get(objectId)!] : [])
}

/**
 * Subscribes one client per token, then saves `repetitions` notes readable by
 * `role` alone (master key, Parse's own create route), spaced past the auth cache.
 */
export async function measureFanOut (origin: string, liveQueryUrl: string, tokens: string[], role: string, repetitions: number, log: (line: string) => void): Promise<FanOutPoint> {
  const subscribers: Subscriber[] = []
  try {
    const started = performance.now()
    // Ten at a time: the subscriptions are not what is measured.
    for (let i = 0; i < tokens.length; i += 10) subscribers.push(...await Promise.all(tokens.slice(i, i + 10).map((token) => subscribe(liveQueryUrl, token))))
    log(`live query: ${subscribers.length} subscribers connected and subscribed in ${round((performance.now() - started) / 1000, 1)} s`)
    const samples: FanOutSample[] = []
    for (let r = 0; r < repetitions; r++) {
      await sleep(FANOUT_SPACING_MS)
      const sent = performance.now()
      const response = await fetch(`${origin}${MOUNT}/classes/Note`, {
        method: 'POST',
        headers: { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ title: FANOUT_TITLE, body: 'For the role only.', status: 'draft', ACL: { [`role:${role}`]: { read: true } } })
      })
      const saveMs = performance.now() - sent
      const body = await response.json() as { objectId?: string }
      if (!response.ok || !body.objectId) throw new Error(`live query: the save answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`)
      const times = (await arrivals(subscribers, body.objectId)).map((at) => at - sent)
      if (times.length === 0) throw new Error(`live query: no subscriber received the note within ${WAIT_MS / 1000} s`)
      const sample = { saveMs: round(saveMs, 1), firstMs: round(Math.min(...times), 1), lastMs: round(Math.max(...times), 1), received: times.length }
      samples.push(sample)
      log(`live query ${r + 1}/${repetitions}: save ${sample.saveMs} ms, first event ${sample.firstMs} ms, last ${sample.lastMs} ms, ${sample.received}/${subscribers.length} subscribers`)
    }
    return {
      subscribers: subscribers.length,
      firstMs: median(samples.map((sample) => sample.firstMs)),
      lastMs: median(samples.map((sample) => sample.lastMs)),
      saveMs: median(samples.map((sample) => sample.saveMs)),
      missed: samples.reduce((sum, sample) => sum + subscribers.length - sample.received, 0),
      repetitions: samples
    }
  } finally {
    for (const { ws } of subscribers) ws.terminate()
  }
}

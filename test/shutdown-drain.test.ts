// The drain before close (shutdown.drainDelayMs), over real HTTP with
// keep-alive clients: readiness answers 503 while requests are still served,
// and a request still running when listening stops finishes, after which its
// keep-alive socket is closed, so the close ends then (it waited for Fastify's
// 72 s keepAliveTimeout, past the shutdown budget).
import t from 'tap'
import http from 'node:http'
import type { Socket } from 'node:net'
import { CloudFunction, Route } from '../lib/index.js'
import { appHeaders, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

const DRAIN_MS = 1_000

@Route('drain')
class DrainFunctions {
  /** Answers once `release` is called: a request in flight for as long as the test wants. */
  @CloudFunction({ methods: ['GET'] })
  static async held () {
    DrainFunctions.arrived = true
    await new Promise<void>((resolve) => { DrainFunctions.release = resolve })
    return { done: true }
  }

  @CloudFunction({ methods: ['GET'] })
  static quick () { return { done: true } }

  static release: () => void = () => {}
  static arrived = false
}

interface Answer { status: number, connection?: string, socket: Socket }

function get (origin: string, path: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${origin}${path}`, { agent, headers: appHeaders }, (response) => {
      const socket = response.socket
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, socket }))
    })
    request.on('error', reject)
  })
}

t.test('drain, then close with a keep-alive request in flight', async (t) => {
  const kit = await startKit(t, { functions: [DrainFunctions], shutdown: { drainDelayMs: DRAIN_MS } }, { forceCloseConnections: 'idle', return503OnClosing: false })
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const inFlightAgent = new http.Agent({ keepAlive: true })
  t.teardown(() => inFlightAgent.destroy())

  const inFlight = get(kit.origin, '/parse/drain/held', inFlightAgent)
  await until('the held request to arrive', () => DrainFunctions.arrived, scaled(10_000))
  let closed = false
  const closing = kit.app.close().then(() => { closed = true })

  const health = await get(kit.origin, '/parse/health', agent)
  t.equal(health.status, 503, 'readiness answers 503 during the drain')
  t.equal((await get(kit.origin, '/parse/health/live', agent)).status, 200, 'liveness still 200')
  const served = await get(kit.origin, '/parse/drain/quick', agent)
  t.same([served.status, served.connection], [200, 'close'], 'a request arriving during the drain is served, with Connection: close')

  // Past the drain: listening stops; the request in flight since before the close finishes.
  await new Promise((resolve) => setTimeout(resolve, DRAIN_MS + 300))
  DrainFunctions.release()
  const answer = await inFlight
  t.equal(answer.status, 200, 'the request in flight finishes')
  await until('the server to close the finished request\'s keep-alive socket', () => answer.socket.destroyed || answer.socket.readyState === 'closed', scaled(10_000))
  await until('app.close() to end', () => closed, scaled(10_000))
  await closing
})

// A small load balancer for the rolling-restart test: round robin over the
// backends whose readiness ({mount}/health) last answered 200, with keep-alive
// connections to each backend (as nginx or an ALB keeps them). One check per
// backend at a time, the next checkMs after the last one ended (as HAProxy's
// `inter`): with a check sent every checkMs whatever the last one did, a busy
// instance's 200 to a check sent before SIGTERM (it waits on the database)
// could land after the 503 to a later one and put the instance back in rotation.
// It never retries: a request that fails upstream is answered 502 and counted,
// so a shutdown that drops a request shows.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { scaled } from './time-scale.js'

interface Backend { origin: string, healthy: boolean, agent: http.Agent, timer?: NodeJS.Timeout, out?: { at: number, why: string } }

export interface RoundRobinProxy {
  origin: string
  /** Adds a backend, out of rotation until its first healthy check. */
  add (origin: string): void
  /** Upstream failures answered 502 (connection reset, refused, …), with their reasons. */
  failures: string[]
  healthyCount (): number
  /** When (Date.now()) and why (the readiness status, or the check's error) the proxy took this backend out of rotation, if it is out. */
  outOfRotation (origin: string): { at: number, why: string } | undefined
  close (): Promise<void>
}

export async function startRoundRobinProxy (options: { healthPath: string, checkMs: number }): Promise<RoundRobinProxy> {
  const backends: Backend[] = []
  const failures: string[] = []
  let next = 0
  let closed = false

  const check = (backend: Backend) => {
    let ended = false
    const end = (healthy: boolean, why: string) => {
      if (ended) return
      ended = true
      if (!healthy && backend.healthy) backend.out = { at: Date.now(), why }
      if (healthy) backend.out = undefined
      backend.healthy = healthy
      if (!closed) backend.timer = setTimeout(() => check(backend), options.checkMs)
    }
    // Stretched with the load: a busy instance that answers its readiness late is still ready (at load 30 a fixed
    // second marked the only one left unhealthy, and every request then failed at the proxy).
    const request = http.get(`${backend.origin}${options.healthPath}`, { agent: false, timeout: scaled(1_000) }, (response) => {
      response.resume()
      end(response.statusCode === 200, String(response.statusCode))
    })
    request.on('timeout', () => request.destroy(new Error('health check timed out')))
    request.on('error', (error: NodeJS.ErrnoException) => end(false, error.code ?? error.message))
  }

  const server = http.createServer((request, response) => {
    const healthy = backends.filter((backend) => backend.healthy)
    if (healthy.length === 0) {
      failures.push(`${request.method} ${request.url}: no healthy backend`)
      response.writeHead(502).end('no healthy backend')
      return
    }
    const backend = healthy[next++ % healthy.length]
    const upstream = http.request(`${backend.origin}${request.url}`, { method: request.method, headers: { ...request.headers, connection: 'keep-alive' }, agent: backend.agent }, (answer) => {
      const headers = { ...answer.headers }
      delete headers.connection
      response.writeHead(answer.statusCode ?? 502, headers)
      answer.pipe(response)
    })
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      failures.push(`${request.method} ${request.url} via ${backend.origin}: ${error.code ?? error.message}`)
      if (!response.headersSent) response.writeHead(502).end(`upstream failed: ${error.code ?? error.message}`)
      else response.destroy()
    })
    request.pipe(upstream)
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))

  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failures,
    add (origin) {
      const backend: Backend = { origin, healthy: false, agent: new http.Agent({ keepAlive: true, maxSockets: 16 }) }
      backends.push(backend)
      check(backend)
    },
    healthyCount: () => backends.filter((backend) => backend.healthy).length,
    outOfRotation: (origin) => backends.find((backend) => backend.origin === origin)?.out,
    async close () {
      closed = true
      for (const backend of backends) { clearTimeout(backend.timer); backend.agent.destroy() }
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

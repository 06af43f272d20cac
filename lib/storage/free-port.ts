// Lib code, not a test helper: the embedded PostgreSQL (postgres/embedded.ts)
// listens on a port picked here. Tests and benchmarks borrow it for their own
// servers.
import { createServer } from 'node:net'

/** A loopback port nobody listens on right now. */
export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

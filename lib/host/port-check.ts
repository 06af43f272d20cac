// A taken port is known before the boot (the database, Parse Server, the
// schema) that would otherwise run first and end in the same refusal.
import net from 'node:net'
import { PortUnavailableError } from '../errors.js'

export interface ListenAddress { port: number, host: string }

/** The coded refusal for a listen that failed on the address itself; undefined for any other failure. */
export function portUnavailable (error: unknown, { port, host }: ListenAddress): InstanceType<typeof PortUnavailableError> | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const problem = code === 'EADDRINUSE'
    ? `port ${port} on ${host} is already in use (another server is running there)`
    : code === 'EACCES'
      ? `port ${port} needs privileges this process does not have`
      : code === 'EADDRNOTAVAIL' ? `address ${host} is not available on this machine` : undefined
  if (!problem) return undefined
  return new PortUnavailableError(`${problem}. Choose another with PORT (and HOST), e.g. PORT=${port === 65535 ? 3000 : port + 1}.`)
}

/**
 * Refuses (FPK_ERR_PORT_UNAVAILABLE) when the address cannot be listened on
 * right now. Port 0 (any free port) always passes. Another process may still
 * take the port before the server listens: listenOrExit says so then.
 */
export async function assertPortFree (address: ListenAddress): Promise<void> {
  if (address.port === 0) return
  const probe = net.createServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(portUnavailable(error, address) ?? error))
    probe.listen({ port: address.port, host: address.host, exclusive: true }, () => probe.close(() => resolve()))
  })
}

// What a server's entry point says when it starts: a port already taken is one
// line naming it and how to choose another (no stack trace), and the ready
// output says where the master key comes from without printing it in production.
import type { FastifyInstance } from 'fastify'
import { decoratorsConfigError } from '../decorators-config.js'
import { portUnavailable } from './port-check.js'

/** Listens, or, when the port is taken or not allowed, closes the app, prints one line and exits with 1. */
export async function listenOrExit (app: FastifyInstance, options: { port: number, host: string }, write: (line: string) => void = (line) => process.stderr.write(line)): Promise<void> {
  try {
    await app.listen(options)
  } catch (error) {
    await app.close().catch(() => {})
    const refusal = portUnavailable(error, options)
    if (!refusal) throw error
    write(bootFailureText(refusal))
    process.exit(1)
  }
}

/** One line for the ready output: where the master key comes from; its value only for a development key made for this run. */
export function masterKeyHint (masterKey: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.MASTER_KEY) return 'master key: from MASTER_KEY (your environment or .env); it stays on servers, never in a browser'
  if (env.NODE_ENV === 'production') return 'master key: set in code (it is never printed in production)'
  return `master key for this run (random each start; set MASTER_KEY, e.g. in .env, to keep one): ${masterKey}`
}

/**
 * The one line a failed boot prints: `Cannot start: <message> (<FPK_ERR_… code>)`.
 * The stack follows only when DEBUG is set: an ordinary mistake needs no stack trace.
 */
export function bootFailureText (failure: unknown, env: NodeJS.ProcessEnv = process.env): string {
  // A model file compiled without experimentalDecorators fails at import, before the kit's loader can name the setting.
  const error = decoratorsConfigError(failure) ?? failure
  const message = oneLine(error instanceof Error ? error.message : String(error))
  const code = (error as { code?: unknown } | undefined)?.code
  const coded = typeof code === 'string' && code !== '' && !message.includes(`(${code})`) ? ` (${code})` : ''
  const line = `Cannot start: ${message.replace(/^Cannot start: /, '')}${coded}\n`
  if (env.DEBUG) return line + `${(failure as Error)?.stack ?? ''}\n`
  return typeof code === 'string' && code.startsWith('FPK_ERR_') ? line : line.replace(/\n$/, ' (set DEBUG=1 to see the stack)\n')
}

/** Runs a boot step (building the app, listening); a failure prints bootFailureText and exits with 1. */
export async function bootOrExit<T> (step: () => Promise<T>, write: (text: string) => void = (text) => process.stderr.write(text)): Promise<T> {
  try {
    return await step()
  } catch (error) {
    write(bootFailureText(error))
    process.exit(1)
  }
}

function oneLine (text: string): string {
  return text.split('\n').map((line) => line.trim()).filter(Boolean).join(' ')
}

// kitPlugin's `shutdown` option and the time a whole close may take. On close
// (SIGTERM through the server's close-with-grace, or app.close()) readiness
// answers 503 at once while the server keeps serving for drainDelayMs, so
// load balancers and Kubernetes take the instance out of rotation before it
// stops listening; running jobs get their grace in the same window.
import type { Server } from 'node:http'
import type { Static } from '@sinclair/typebox'
import { Type } from './typebox.js'

export const ShutdownOptionsSchema = Type.Object({
  /** How long the server keeps serving after close begins, readiness answering 503. Env SHUTDOWN_DRAIN_MS. Default 5000 in production, 0 otherwise. */
  drainDelayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000, problem: 'must be a whole number of milliseconds from 0 to 600000 (SHUTDOWN_DRAIN_MS or the option)' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be an object such as { drainDelayMs: 5000 }' })

export type ShutdownOptions = Static<typeof ShutdownOptionsSchema>

/** Two readiness probe periods of a load balancer checking every 2 s, and Kubernetes' endpoint removal. */
export const PRODUCTION_DRAIN_DELAY_MS = 5_000

/**
 * After the drain and the jobs' grace: the requests still in flight, then Parse
 * Server, Redis and the database closing. Beyond it the server's force exit fires.
 */
export const CLOSE_MARGIN_MS = 10_000

export interface ShutdownSettings {
  drainDelayMs: number
}

/** The option, else SHUTDOWN_DRAIN_MS, else the default for this environment; `invalid` builds the one-line error. */
export function resolveShutdown (input: ShutdownOptions | undefined, production: boolean, invalid: (problem: string) => Error, env: NodeJS.ProcessEnv = process.env): ShutdownSettings {
  if (input?.drainDelayMs !== undefined) return { drainDelayMs: input.drainDelayMs }
  const raw = env.SHUTDOWN_DRAIN_MS?.trim()
  if (raw) {
    const value = Number(raw)
    if (!/^\d+$/.test(raw) || value > 600_000) throw invalid(`must be a whole number of milliseconds from 0 to 600000 (SHUTDOWN_DRAIN_MS or the option; got ${JSON.stringify(raw)})`)
    return { drainDelayMs: value }
  }
  return { drainDelayMs: production ? PRODUCTION_DRAIN_DELAY_MS : 0 }
}

/**
 * The longest a close of this kit takes: the drain and the jobs' grace run side
 * by side, then CLOSE_MARGIN_MS for the rest. A server's force-exit timer
 * (close-with-grace's `delay`) set to this never cuts a close the kit would finish.
 */
export function shutdownBudgetMs (options: { shutdown: ShutdownSettings, jobs: { shutdownGraceMs: number } }): number {
  return Math.max(options.shutdown.drainDelayMs, options.jobs.shutdownGraceMs) + CLOSE_MARGIN_MS
}

/** The drain's wait (a kept timer: the close must not end early for want of work). */
export function drainPause (ms: number): Promise<void> {
  return new Promise((resolve) => { if (ms <= 0) resolve(); else setTimeout(resolve, ms) })
}

/**
 * From the end of the drain until the server has closed, idle keep-alive sockets are closed as
 * they go idle. Fastify closes the idle ones once, when listening stops; a socket busy with a
 * request then goes idle after it and would hold the close for keepAliveTimeout (72 s by
 * default), past the shutdown budget.
 */
export function closeIdleSocketsUntilClosed (server: Server, everyMs = 100): void {
  if (!server.listening) return
  const timer = setInterval(() => server.closeIdleConnections(), everyMs)
  timer.unref()
  server.once('close', () => clearInterval(timer))
}

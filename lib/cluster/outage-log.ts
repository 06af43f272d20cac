// One warning when the first Redis connection of this process is lost, one
// line when the last one is back: an outage is reported once, not once per
// client and reconnection attempt.
import { metricHooks } from '../metrics/hooks.js'

export interface OutageLogger {
  warn (message: string): void
  info (message: string): void
}

export interface OutageLog {
  /** A connection (named for the log) cannot reach Redis. */
  down (connection: string, error?: unknown): void
  /** That connection works again. */
  up (connection: string): void
  /** True while any connection is down. */
  readonly degraded: boolean
}

export function createOutageLog (log: OutageLogger, displayURL: string, consequences: string): OutageLog {
  const lost = new Set<string>()
  return {
    down (connection, error) {
      if (lost.has(connection)) return
      lost.add(connection)
      if (lost.size === 1) {
        metricHooks().redisReachable(false)
        const reason = error instanceof Error ? error.message : error === undefined ? 'connection closed' : String(error)
        log.warn(`[redis] lost ${displayURL} (${connection}: ${reason}). ${consequences} Reconnecting in the background.`)
      }
    },
    up (connection) {
      if (!lost.delete(connection) || lost.size > 0) return
      metricHooks().redisReachable(true)
      log.info(`[redis] reconnected to ${displayURL}: shared rate limits, caches, role evictions and LiveQuery events resume.`)
    },
    get degraded () { return lost.size > 0 }
  }
}

/** The URL with any password replaced by ***, for logs. */
export function redactRedisURL (url: string): string {
  return url.replace(/\/\/([^:/@]*):([^@]+)@/, '//$1:***@')
}

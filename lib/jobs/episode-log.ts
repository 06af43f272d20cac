// One line when trouble starts and one when it ends, instead of one per tick:
// a database outage under an every-second schedule, or a long run whose
// schedule keeps firing, would otherwise write a line a second per instance.
import type { JobLogger } from './request.js'

export interface Episode {
  /** Something went wrong again; only the first of an episode is logged (`level` decides how). */
  happened (line: string, error?: unknown): void
  /** Things work again: one line saying how many were folded into the episode, when there were any. */
  over (line: (count: number, seconds: number) => string): void
  readonly count: number
}

/** `quietMs`: a happening this long after the last one begins a new episode (its end was never seen here). */
export function episode (log: JobLogger, level: 'warn' | 'error', quietMs = Infinity): Episode {
  let count = 0
  let since = 0
  let last = 0
  return {
    happened (line, error) {
      const now = Date.now()
      if (count > 0 && now - last > quietMs) count = 0
      last = now
      if (count++ === 0) {
        since = now
        if (error === undefined) log[level](line)
        else log[level]({ err: error }, line)
      }
    },
    over (line) {
      if (count === 0) return
      log.info(line(count, Math.round((Date.now() - since) / 1000)))
      count = 0
    },
    get count () { return count }
  }
}

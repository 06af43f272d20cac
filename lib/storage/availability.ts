// Whether the database can be reached: an outage is noticed by the first
// adapter call that hits it (or by a readiness check), and the database is then
// probed in the background until it answers again — so the process recovers by
// itself, with one log line when the database goes and one when it is back.
import { describeOutage } from './unavailable.js'
import { metricHooks } from '../metrics/hooks.js'

export interface Readiness {
  ready: boolean
  /** Why not, in a few safe words (no hosts, no credentials). */
  reason?: string
}

export interface DatabaseAvailability {
  /** false from the first call that could not reach the database until a probe succeeds. */
  readonly reachable: boolean
  /** Probes the database now (shared by concurrent callers, bounded in time). */
  check (): Promise<Readiness>
  /** Called by the adapter wrapper: a call failed because the database cannot be reached. */
  noteOutage (error: unknown): void
  /**
   * Called by the adapter wrapper: a call got no answer within its bound. One slow statement on a
   * live connection fails alone: the database is probed now, and marked unreachable only if the
   * probe fails too.
   */
  suspect (error: unknown): void
  /**
   * Probes now, not relying on the last answer (shared with a probe already under way): a call that
   * found no free pooled connection asks whether the database answers before saying which it was.
   */
  recheck (): Promise<Readiness>
  /** Whether the database is up and a probe answered within the last `ms`. */
  answeredWithin (ms: number): boolean
  /** true while the probe a suspicion started is under way (the database may be gone). */
  readonly inDoubt: boolean
  /** Stops the background probe (at shutdown). */
  close (): void
}

export interface AvailabilityOptions {
  /**
   * Resolves once the database answered a trivial request; rejects with the driver's error otherwise.
   * On a connection of its own, not the pool requests share: a pool full of the instance's own work
   * must not read as a database that does not answer.
   */
  probe: () => Promise<unknown>
  onNotice: (line: string) => void
  /** How long a probe may take before the database counts as unreachable. */
  probeTimeoutMs?: number
  /** How often the database is probed while it is unreachable. */
  retryMs?: number
}

/** How long a successful probe answers readiness checks without asking the database again. */
const FRESH_MS = 1_000

export function watchAvailability (options: AvailabilityOptions): DatabaseAvailability {
  const timeoutMs = options.probeTimeoutMs ?? 2_000
  const retryMs = options.retryMs ?? 250
  let downSince: number | undefined
  let reason: string | undefined
  let inFlight: Promise<Readiness> | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  let lastAnswer = 0
  let doubts = 0

  const markDown = (error: unknown) => {
    reason = describeOutage(error)
    lastAnswer = 0
    if (downSince !== undefined) return
    downSince = Date.now()
    metricHooks().databaseOutage()
    options.onNotice(`[fastify-parse-kit] the database cannot be reached (${reason}); answering 503 until it is back`)
    schedule()
  }
  const markUp = () => {
    if (downSince === undefined) return
    options.onNotice(`[fastify-parse-kit] the database is reachable again after ${((Date.now() - downSince) / 1000).toFixed(1)} s`)
    downSince = undefined
    reason = undefined
  }
  const schedule = () => {
    if (closed || timer) return
    timer = setTimeout(() => {
      timer = undefined
      void check().then(({ ready }) => { if (!ready) schedule() })
    }, retryMs)
    timer.unref()
  }
  const check = (): Promise<Readiness> => {
    // An unauthenticated health endpoint must not turn into a query per request.
    if (downSince === undefined && Date.now() - lastAnswer < FRESH_MS) return Promise.resolve({ ready: true })
    inFlight ??= probeWithin(options.probe, timeoutMs).then(
      () => { lastAnswer = Date.now(); markUp(); return { ready: true } },
      (error: unknown) => { markDown(error); return { ready: false, reason } }
    ).finally(() => { inFlight = undefined })
    return inFlight
  }

  return {
    get reachable () { return downSince === undefined },
    check,
    noteOutage: markDown,
    suspect () {
      if (downSince !== undefined || closed) return
      lastAnswer = 0 // a fresh probe, not the last minute's answer
      doubts++
      void check().finally(() => { doubts-- })
    },
    recheck () {
      if (closed) return Promise.resolve(downSince === undefined ? { ready: true } : { ready: false, reason })
      lastAnswer = 0
      return check()
    },
    answeredWithin (ms: number) {
      return downSince === undefined && lastAnswer > 0 && Date.now() - lastAnswer < ms
    },
    get inDoubt () { return doubts > 0 },
    close () {
      closed = true
      if (timer) clearTimeout(timer)
    }
  }
}

async function probeWithin (probe: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const attempt = probe()
  attempt.catch(() => {}) // a probe that loses the race must not reject unhandled later
  try {
    await Promise.race([attempt, new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs)
    })])
  } finally {
    clearTimeout(timer)
  }
}

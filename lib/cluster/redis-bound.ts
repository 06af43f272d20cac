// Every Redis call on a request path waits at most `timeoutMs`. A Redis that
// keeps its connections open but stops answering (frozen, overloaded, a
// partition that keeps TCP up, a long fork pause) looks "ready" to both
// clients, so the connection state alone cannot tell: a call that runs out of
// time starts an outage. From then on Redis is bypassed (callers fall back as
// for a lost connection) until a PING answers within the bound again.
import type { OutageLog } from './outage-log.js'

/** The default bound of one Redis call on a request path. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000
/** Pause between probes while Redis is bypassed. */
const PROBE_PAUSE_MS = 250
/** The outage log's name for "connected but not answering". */
const NO_ANSWER = 'no answer'

export class RedisNoAnswerError extends Error {
  constructor (timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`)
    this.name = 'RedisNoAnswerError'
  }
}

export interface RedisBound {
  readonly timeoutMs: number
  /** True from a call that ran out of time until a probe answers. */
  readonly bypassed: boolean
  /** `call` within the bound; running out starts the bypass and rejects with RedisNoAnswerError. */
  within<T> (connection: string, call: Promise<T>): Promise<T>
  /** A client's own timeout (ioredis' commandTimeout) fired: the same as running out here. */
  noAnswer (connection: string): void
  /** Runs when a bypass starts (to stop trusting what Redis would have told). */
  onBypass (listener: () => void): void
  /** Runs after each bypass ends (to resend what was held back, to drop what may be stale). */
  onRecovery (listener: () => void): void
  close (): void
}

/** ioredis' commandTimeout error. */
export function isCommandTimeout (error: unknown): boolean {
  return error instanceof RedisNoAnswerError || (error instanceof Error && /command timed out/i.test(error.message))
}

export function boundRedis (settings: { timeoutMs: number, outage: OutageLog, ping: () => Promise<unknown> }): RedisBound {
  const { timeoutMs, outage } = settings
  const recovery: Array<() => void> = []
  const bypass: Array<() => void> = []
  let bypassed = false
  let closed = false
  let timer: NodeJS.Timeout | undefined

  const probe = () => {
    timer = undefined
    if (closed) return
    raceBound(settings.ping(), timeoutMs).then(() => {
      if (closed) return
      bypassed = false
      outage.up(NO_ANSWER)
      for (const listener of recovery) listener()
    }, () => {
      if (!closed) timer = setTimeout(probe, PROBE_PAUSE_MS).unref()
    })
  }
  const startBypass = (connection: string) => {
    if (bypassed || closed) return
    bypassed = true
    outage.down(NO_ANSWER, `${connection} waited ${timeoutMs} ms`)
    for (const listener of bypass) listener()
    timer = setTimeout(probe, PROBE_PAUSE_MS).unref()
  }
  return {
    timeoutMs,
    get bypassed () { return bypassed },
    async within (connection, call) {
      try {
        return await raceBound(call, timeoutMs)
      } catch (error) {
        if (error instanceof RedisNoAnswerError) startBypass(connection)
        throw error
      }
    },
    noAnswer: startBypass,
    onBypass (listener) { bypass.push(listener) },
    onRecovery (listener) { recovery.push(listener) },
    close () {
      closed = true
      if (timer) clearTimeout(timer)
    }
  }
}

async function raceBound<T> (call: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  call.catch(() => {}) // a call that loses the race must not reject unhandled later
  try {
    return await Promise.race([call, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new RedisNoAnswerError(timeoutMs)), timeoutMs)
    })])
  } finally {
    clearTimeout(timer)
  }
}

// One load at a time per key, shared with the requests that ask for the same
// thing while it runs: Parse's session lookup and role load, whose cache
// entries expire for every request in flight at once. A joiner's answer must
// stay the one Parse would give it, hence three limits:
// - revocations: Parse drops cache entries when access changes (a role
//   written, a session destroyed, a user's sessions on a password change:
//   SubCache#del / #clear). A load that started before the latest such drop
//   takes no joiners, so a request that begins after a revocation reads
//   afresh. (Parse drops the entry just before its write; a load started in
//   between reads what Parse's own would, and Parse caches that too.)
// - age: a load running for JOIN_MS takes no more joiners, and a joiner waits
//   at most that long before it loads for itself: one stuck query never holds
//   the requests that follow it.
// - failures: a joiner whose shared load failed loads for itself, unless the
//   failure is the answer itself (an unknown session token).
// test/shared-lookups.test.ts checks each.
import { parseInternals } from './internals.js'
import { fastPathsOn } from './fast-path-switch.js'

/** How long a running load takes joiners (a normal lookup takes milliseconds). */
export const JOIN_MS = 1000

const INSTALLED = Symbol.for('fastify-parse-kit.cache-drops')
let drops = 0

/** Idempotent: every drop of a Parse cache entry (SubCache#del, #clear) is counted, so older loads take no joiners. */
export function countCacheDrops (): void {
  const prototype = parseInternals().SubCache.prototype as unknown as Record<'del' | 'clear', (...args: unknown[]) => unknown> & Record<symbol, unknown>
  if (prototype[INSTALLED]) return
  for (const name of ['del', 'clear'] as const) {
    const drop = prototype[name]
    prototype[name] = function (this: unknown, ...args: unknown[]) {
      drops++
      return drop.apply(this, args)
    }
  }
  prototype[INSTALLED] = true
}

interface Running<T> { promise: Promise<T>, started: number, drops: number }

export class SharedLoads<T> {
  private readonly running = new Map<string, Running<T>>()
  /** Whether a failure of the shared load is every joiner's answer too (else each loads for itself). */
  private readonly failureIsTheAnswer: (error: unknown) => boolean

  constructor (failureIsTheAnswer: (error: unknown) => boolean = () => false) {
    this.failureIsTheAnswer = failureIsTheAnswer
  }

  /** Loads running now (for tests). */
  get size (): number {
    return this.running.size
  }

  /**
   * `load()` as the key's running load; or, when one that may be joined is
   * running, its result through `joined` (which makes the joiner's own copy).
   */
  async run (key: string, load: () => Promise<T>, joined: (result: T) => T | Promise<T>): Promise<T> {
    // fastPaths: false: every request loads for itself, as with Parse alone.
    if (!fastPathsOn()) return await load()
    const now = Date.now()
    const first = this.running.get(key)
    if (first && first.drops === drops && now - first.started < JOIN_MS) {
      const outcome = await settledWithin(first.promise, first.started + JOIN_MS - now)
      if (outcome.status === 'fulfilled' && first.drops === drops) return await joined(outcome.value)
      if (outcome.status === 'rejected' && this.failureIsTheAnswer(outcome.reason)) throw outcome.reason
    }
    // Nothing to join, or the one joined was too slow, failed, or a revocation came meanwhile: this
    // request loads for itself (it joins once at most, so its wait stays bounded), and others may join it.
    return await this.lead(key, load)
  }

  private async lead (key: string, load: () => Promise<T>): Promise<T> {
    const loading = load()
    const entry: Running<T> = { promise: loading, started: Date.now(), drops }
    this.running.set(key, entry)
    const forget = () => { if (this.running.get(key) === entry) this.running.delete(key) }
    loading.then(forget, forget)
    return await loading
  }
}

type Outcome<T> = { status: 'fulfilled', value: T } | { status: 'rejected', reason: unknown } | { status: 'late' }

/** The promise's outcome, or 'late' after `ms`. */
function settledWithin<T> (promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ status: 'late' }), Math.max(0, ms))
    timer.unref()
    promise.then(
      (value) => { clearTimeout(timer); resolve({ status: 'fulfilled', value }) },
      (reason: unknown) => { clearTimeout(timer); resolve({ status: 'rejected', reason }) }
    )
  })
}

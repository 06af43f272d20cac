// In-memory counters for the auth rate limits (auth-limits.ts) without Redis.
// A plain LRU of fixed size lets anyone evict a victim's counter with a flood
// of junk names (5,200 distinct emails did it to @fastify/rate-limit's 5,000-key
// store); these counters are bounded too, but when full they drop counters
// seen once before any counted more than once, oldest first. A counter over a
// limit has been hit more than once, so junk (one hit per name) only ever
// evicts other junk; forcing it out takes more than `capacity` names hit twice
// each, all within the window and within the per-address limit.

/** Counters one limiter keeps per kind (addresses, accounts): about 1.5 MB each when full. */
export const ATTEMPT_COUNTERS_CAPACITY = 10_000

export interface Counted { current: number, ttl: number }

interface Counter { count: number, resetAt: number }

export class AttemptCounters {
  /** Counters hit once, in the order their windows started. */
  private readonly once = new Map<string, Counter>()
  /** Counters hit more than once, in the order of their second hit. */
  private readonly repeated = new Map<string, Counter>()

  constructor (private readonly capacity = ATTEMPT_COUNTERS_CAPACITY) {}

  get size (): number {
    return this.once.size + this.repeated.size
  }

  /** Counts one attempt under `key` in a fixed window of `windowMs` from its first. */
  incr (key: string, windowMs: number, now = Date.now()): Counted {
    let counter = this.once.get(key) ?? this.repeated.get(key)
    if (counter && counter.resetAt <= now) {
      this.once.delete(key)
      this.repeated.delete(key)
      counter = undefined
    }
    if (!counter) {
      this.makeRoom(now)
      counter = { count: 1, resetAt: now + windowMs }
      this.once.set(key, counter)
    } else if (++counter.count === 2) {
      this.once.delete(key)
      this.repeated.set(key, counter)
    }
    return { current: counter.count, ttl: counter.resetAt - now }
  }

  private makeRoom (now: number): void {
    dropExpired(this.once, now)
    dropExpired(this.repeated, now)
    while (this.size >= this.capacity) {
      const victim = this.once.size > 0 ? this.once : this.repeated
      victim.delete(victim.keys().next().value as string)
    }
  }
}

/** Drops expired counters from the front (the oldest), stopping at the first live one. */
function dropExpired (counters: Map<string, Counter>, now: number): void {
  for (const [key, counter] of counters) {
    if (counter.resetAt > now) return
    counters.delete(key)
  }
}

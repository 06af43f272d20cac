// Issue 51: the memory comparison with the NestJS peer on the same load.
// A single reading after a load is one sample of where each process happens
// to be in its garbage-collection cycle (the same code read 0.98–1.65× the
// peer's across three runs), so the runner samples both servers' resident
// set from /proc all through the load instead and compares the medians.
import { readFileSync } from 'node:fs'
import { median, round } from './shared.js'

/**
 * The scenarios both servers serve, paired: the same request shape, run for
 * the same seconds at the same connections, interleaved. The peer's session
 * variants (N5s, N6s) and the kit's other scenarios run after the comparison
 * and are reported apart.
 */
export const MATCHED_LOAD: ReadonlyArray<{ kit: string, nest: string }> = [
  { kit: 'declared', nest: 'nestConstant' },
  { kit: 'listNotes', nest: 'nestListNotes' },
  { kit: 'createNote', nest: 'nestCreateNote' }
]

export const MATCHED_KEYS: ReadonlySet<string> = new Set(MATCHED_LOAD.flatMap((pair) => [pair.kit, pair.nest]))

/** RSS sampled while a load ran: the median and the range, MB. */
export interface RssSpread { medianMB: number, minMB: number, maxMB: number, samples: number }

/** A process's resident set from /proc, MB (what process.memoryUsage().rss reports), without a message to the process. */
export function residentMB (pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb === undefined ? undefined : Number(kb) / 1024
  } catch {
    return undefined
  }
}

/** Samples each named process's RSS every `everyMs` until stop(), which returns each one's spread. */
export function sampleResident<K extends string> (pids: Partial<Record<K, number>>, everyMs = 250): { stop: () => Partial<Record<K, RssSpread>> } {
  const readings = new Map<K, number[]>(Object.keys(pids).map((name) => [name as K, []]))
  const take = () => {
    for (const [name, values] of readings) {
      const mb = residentMB(pids[name]!)
      if (mb !== undefined) values.push(mb)
    }
  }
  take()
  const timer = setInterval(take, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      take()
      const spreads: Partial<Record<K, RssSpread>> = {}
      for (const [name, values] of readings) {
        if (values.length > 0) spreads[name] = { medianMB: round(median(values), 1), minMB: round(Math.min(...values), 1), maxMB: round(Math.max(...values), 1), samples: values.length }
      }
      return spreads
    }
  }
}

// The `idleCollection` option: give back the memory a busy period grew once
// the server has gone quiet. V8 grows the old generation under load (up to
// about 4× the live heap before it collects) and its memory reducer, which
// should shrink it again when the process idles, judges the allocation rate
// from the last busy stretch and can wait minutes: the bench server sat at
// +75 % RSS after 60 s idle with a live heap back at its boot size. A plain
// gc() does not shrink the heap either (it keeps the free pages for the next
// growth); V8's memory-reducing collection, reached through the inspector
// protocol's HeapProfiler.collectGarbage, compacts and releases them. No V8
// flag is needed and none is changed. See docs/guides/production.md.
import type { FastifyInstance } from 'fastify'
import { mountPrefix } from '../mount-prefix.js'
import { healthPathKind } from './health.js'

export interface IdleCollectionSettings {
  /** Quiet seconds (no request arrived) after a busy period before the collection runs. */
  afterSeconds: number
  /** Parse's mount: its health checks are probes, not work. */
  mountPath: string
  /** The metrics endpoint, when on: a scraper's calls are not work either. */
  metricsPath?: string
}

/** A balancer's or orchestrator's periodic call: health and metrics, which would otherwise keep a quiet server "busy" forever. */
function probeOf (settings: IdleCollectionSettings): (url: string) => boolean {
  const prefix = mountPrefix(settings.mountPath)
  const longest = Math.max(prefix.length + '/health/live/'.length, settings.metricsPath?.length ?? 0) + 32
  return (url) => url.length <= longest && (
    (url.startsWith(prefix) && healthPathKind(url.slice(prefix.length)) !== undefined) ||
    (settings.metricsPath !== undefined && url.split('?')[0] === settings.metricsPath))
}

export interface IdleCollectionResult { heapBeforeMB: number, heapAfterMB: number, ms: number }

/** One memory-reducing collection of this process's V8 heap (several GC passes, compacting; tens to hundreds of ms). */
export async function collectAllGarbage (): Promise<IdleCollectionResult> {
  const { Session } = await import('node:inspector')
  const before = process.memoryUsage().heapTotal
  const started = performance.now()
  const session = new Session()
  session.connect()
  try {
    await new Promise<void>((resolve, reject) => session.post('HeapProfiler.collectGarbage', (error) => error ? reject(error) : resolve()))
  } finally {
    // After the await, never inside post's callback: on Node 20 a disconnect there waits on a lock V8 still holds, and the event loop stops for good.
    session.disconnect()
  }
  const MB = (bytes: number) => Math.round(bytes / 2 ** 20 * 10) / 10
  return { heapBeforeMB: MB(before), heapAfterMB: MB(process.memoryUsage().heapTotal), ms: Math.round(performance.now() - started) }
}

/**
 * Counts arriving requests (an increment per request, and a length check:
 * nothing else on the request path) and checks on an unref'd timer: once
 * requests have arrived since the last collection and none for
 * `afterSeconds`, one collection runs. An idle server is never collected
 * again until it serves something; health checks and metrics scrapes do not
 * count. The timer stops when the server closes.
 */
export function collectWhenIdle (fastify: FastifyInstance, settings: IdleCollectionSettings, collect = collectAllGarbage): void {
  let arrived = 0
  let seen = 0
  let quietSince = performance.now()
  let busy = false
  let running = false
  const probe = probeOf(settings)
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!probe(request.url)) arrived++
    done()
  })
  const waitMs = settings.afterSeconds * 1000
  const check = () => {
    const now = performance.now()
    if (arrived !== seen) {
      seen = arrived
      quietSince = now
      busy = true
      return
    }
    if (!busy || running || now - quietSince < waitMs) return
    busy = false
    running = true
    collect().then(
      (result) => fastify.log.debug({ idleCollection: result }, 'idle: heap collected and given back'),
      (error: Error) => fastify.log.warn({ err: error }, 'idle collection failed')
    ).finally(() => { running = false })
  }
  // A quarter of the wait: the collection comes between afterSeconds and 1.25× of it after the last request.
  const timer = setInterval(check, Math.max(250, waitMs / 4))
  timer.unref()
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}

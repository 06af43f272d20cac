// What Parse runs for a declared job: the static method, with the kit's typed
// request, a time limit per attempt and retries with a doubling pause, all in
// one run (one _JobStatus row). Parse creates the row (running); the kit adds
// the params and the source, and writes the outcome.
import Parse from 'parse/node'
import type { JobOptions } from './options.js'
import { splitParams, type JobRequest, type ParseJobRequest } from './request.js'
import { currentJobRuns } from './runs.js'

export type JobMethod = (request: JobRequest) => unknown

/** A job the kit itself declares (the TTL sweep), beside the application's. */
export interface BuiltInJob { name: string, method: JobMethod, options: JobOptions }

export function jobHandler (name: string, method: JobMethod, options: JobOptions): (request: ParseJobRequest) => Promise<unknown> {
  return (parseRequest) => {
    const run = currentJobRuns().begin(parseRequest.jobId, name)
    void (async () => {
      let outcome: Outcome
      try {
        const value = await attempts(parseRequest, method, options, run.controller.signal)
        outcome = { status: 'succeeded', message: typeof value === 'string' ? value : undefined }
      } catch (error) {
        outcome = { status: 'failed', message: messageOf(error) }
      }
      // An interrupted run's row already says so.
      if (!run.interrupted) await recordOutcome(parseRequest.jobId, outcome).catch((error: unknown) => parseRequest.log.error(`[jobs] ${name}: could not record the end of run ${parseRequest.jobId}: ${messageOf(error)}`))
      run.finish()
    })()
    // The kit writes the final status itself (as Parse would: status, finishedAt,
    // the returned text or the error's message) and awaits it, so a shutdown can
    // wait for it. The promise Parse waits on never settles: Parse's own final
    // write, which nothing awaits, could otherwise land after the database closed.
    return new Promise(() => {})
  }
}

interface Outcome { status: 'succeeded' | 'failed', message?: string }

async function recordOutcome (jobId: string, outcome: Outcome): Promise<void> {
  const status = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
  await status.save({ status: outcome.status, finishedAt: new Date(), ...(outcome.message !== undefined ? { message: outcome.message } : {}) }, { useMasterKey: true })
}

async function attempts (parseRequest: ParseJobRequest, method: JobMethod, options: JobOptions, shutdown: AbortSignal): Promise<unknown> {
  const { params, scheduledAt, schedule } = splitParams(parseRequest.params, parseRequest.jobName)
  await recordRun(parseRequest.jobId, params, schedule)
  const retries = options.retries ?? 0
  const backoffMs = options.backoffMs ?? 1000
  const message = async (text: string) => { await parseRequest.message(text) }
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController()
    const stop = () => controller.abort(shutdown.reason)
    shutdown.addEventListener('abort', stop, { once: true })
    const request: JobRequest = {
      params,
      jobName: parseRequest.jobName,
      jobId: parseRequest.jobId,
      message,
      log: parseRequest.log,
      source: schedule ? 'schedule' : 'api',
      scheduledAt,
      attempt,
      signal: controller.signal
    }
    try {
      return await withinTime(() => method(request), options.timeoutMs, controller)
    } catch (error) {
      if (attempt > retries || shutdown.aborted) throw error
      const pause = backoffMs * 2 ** (attempt - 1)
      await message(`attempt ${attempt} of ${retries + 1} failed: ${messageOf(error)}; retrying in ${pause} ms`)
      await sleep(pause, shutdown)
    } finally {
      shutdown.removeEventListener('abort', stop)
    }
  }
}

/** The run's params (without the scheduler's own) and where it came from, on its _JobStatus row. */
async function recordRun (jobId: string, params: Record<string, unknown>, schedule: string | undefined): Promise<void> {
  const status = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
  await status.save({ params, ...(schedule ? { source: `schedule ${schedule}` } : {}) }, { useMasterKey: true })
}

async function withinTime (body: () => unknown, timeoutMs: number | undefined, controller: AbortController): Promise<unknown> {
  if (timeoutMs === undefined) return await body()
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${timeoutMs} ms`)
      controller.abort(error)
      reject(error)
    }, timeoutMs)
    timer.unref()
  })
  try {
    return await Promise.race([Promise.resolve().then(body), limit])
  } finally {
    clearTimeout(timer)
  }
}

function sleep (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    timer.unref()
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve() }, { once: true })
  })
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

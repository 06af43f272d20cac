// What Parse runs for a declared job: the static method, with the kit's typed
// request, a time limit per attempt and retries with a doubling pause, all in
// one run (one _JobStatus row). Parse creates the row (running); the kit adds
// the params and the source, and writes the outcome. Each run logs its start
// (debug), each retry (warn) and its failure (error, with the stack), counts in
// the job metrics and, with tracing on, is one span.
import Parse from 'parse/node'
import type { JobOptions } from './options.js'
import { queuedSource, splitParams, type JobLogger, type JobRequest, type ParseJobRequest } from './request.js'
import { currentJobRuns, INTERRUPTED_MESSAGE, markInterrupted } from './runs.js'
import { metricHooks, type JobRunStatus } from '../metrics/hooks.js'
import { inSpan } from '../tracing/spans.js'
import { endJobRun } from '../parse/parse-calls.js'
import { queuedDateReviver } from './queued-dates.js'
import { currentKitState } from '../kit-state.js'

export type JobMethod = (request: JobRequest) => unknown

/** A job the kit itself declares (the TTL sweep), beside the application's. */
export interface BuiltInJob { name: string, method: JobMethod, options: JobOptions }

/** How long a timed-out attempt may take to stop before a warning says its retry is waiting for it. */
const LATE_STOP_WARNING_MS = 1_000

export function jobHandler (name: string, method: JobMethod, options: JobOptions): (request: ParseJobRequest) => Promise<unknown> {
  const reviveDates = queuedDateReviver(options.params)
  return (parseRequest) => {
    const runs = currentJobRuns()
    const run = runs.begin(parseRequest.jobId, name)
    const log: JobLogger = runs.context?.log ?? parseRequest.log
    const jobId = parseRequest.jobId
    void (async () => {
      if (run.interrupted) {
        // Begun after close started: it never runs.
        const marked = await markInterrupted(jobId).then(() => true, () => false)
        metricHooks().jobRunEnded(name, 'interrupted', 0)
        log.warn(`[jobs] ${name}: run ${jobId} not started: ${INTERRUPTED_MESSAGE}`)
        run.finish({ status: 'failed', message: INTERRUPTED_MESSAGE, recorded: marked })
        return
      }
      let outcome: Outcome
      try {
        const value = await inSpan(`fpk.job ${name}`, { 'fpk.job.name': name, 'fpk.job.id': jobId }, () => attempts(parseRequest, name, method, options, run.controller.signal, log, reviveDates))
        outcome = { status: 'succeeded', message: typeof value === 'string' ? storable(value) : undefined }
      } catch (error) {
        outcome = { status: 'failed', message: messageOf(error), error }
      }
      const seconds = (Date.now() - run.startedAt) / 1000
      // An interrupted run's row already says so, and shutdown counted it.
      if (run.interrupted) return
      if (outcome.status === 'failed') log.error({ err: outcome.error }, `[jobs] ${name}: run ${jobId} failed: ${outcome.message}`)
      else log.debug?.(`[jobs] ${name}: run ${jobId} succeeded in ${Math.round(seconds * 1000)} ms`)
      const recorded = await recordOutcome(parseRequest, outcome).then(() => true, (error: unknown) => {
        log.error(`[jobs] ${name}: could not record the end of run ${jobId}: ${messageOf(error)}`)
        return false
      })
      // The lease goes once the row says how the run ended (else another instance reports it lost);
      // a lease its starter holds goes with its batch's.
      if (recorded && !parseRequest.leaseHeld) await runs.context?.leases.dropRun(jobId).catch(() => {})
      metricHooks().jobRunEnded(name, outcome.status as JobRunStatus, seconds)
      run.finish({ status: outcome.status, message: outcome.message, recorded })
    })()
    // The kit writes the final status itself (as Parse would: status, finishedAt,
    // the returned text or the error's message) and awaits it, so a shutdown can
    // wait for it. The promise Parse waits on never settles: Parse's own final
    // write, which nothing awaits, could otherwise land after the database closed.
    return new Promise(() => {})
  }
}

interface Outcome { status: 'succeeded' | 'failed', message?: string, error?: unknown }

/** The run's end, written as Parse writes a job's end (one update of its row). */
async function recordOutcome (parseRequest: ParseJobRequest, outcome: Outcome): Promise<void> {
  const end = { status: outcome.status, finishedAt: new Date(), message: outcome.message }
  if (parseRequest.recordEnd) await parseRequest.recordEnd(end)
  else await endJobRun(currentKitState().appId!, parseRequest.jobId, end)
}

async function attempts (parseRequest: ParseJobRequest, name: string, method: JobMethod, options: JobOptions, shutdown: AbortSignal, log: JobLogger, reviveDates?: (params: Record<string, unknown>) => Record<string, unknown>): Promise<unknown> {
  const { params: given, scheduledAt, schedule, firstAttempt, queued } = splitParams(parseRequest.params, parseRequest.jobName)
  const runs = currentJobRuns()
  const context = runs.context
  if (context && !parseRequest.leaseHeld) {
    const lease = { jobId: parseRequest.jobId, jobName: name, holder: context.holder, params: parseRequest.params ?? {}, attempt: firstAttempt }
    await context.leases.holdRun(lease, context.leaseMs).catch((error: unknown) => {
      runs.holdLater(lease)
      log.warn(`[jobs] ${name}: run ${parseRequest.jobId} could not take its lease yet (${messageOf(error)}): tried again with each renewal`)
    })
  }
  if (!parseRequest.rowComplete) await recordRun(parseRequest.jobId, given, queued ? queuedSource(queued) : schedule && `schedule ${schedule}`)
  // Checked against the declaration at enqueue, then written as JSON: the declared Dates are Dates again (a copy; the row keeps the text).
  const params = queued && reviveDates ? reviveDates(structuredClone(given)) : given
  // A queued run is one attempt: the queue retries it as a run of its own, on any instance.
  const retries = queued ? queued.attempts - 1 : options.retries ?? 0
  const backoffMs = options.backoffMs ?? 1000
  const message = async (text: string) => { await parseRequest.message(text) }
  log.debug?.(`[jobs] ${name}: run ${parseRequest.jobId} started (${queued ? `queue ${queued.id}` : schedule ? `schedule ${schedule}` : 'api'}, attempt ${firstAttempt} of ${retries + 1})`)
  for (let attempt = firstAttempt; ; attempt++) {
    if (attempt > firstAttempt && context) context.leases.attemptRun(parseRequest.jobId, attempt).catch(() => {})
    const controller = new AbortController()
    const stop = () => controller.abort(shutdown.reason)
    shutdown.addEventListener('abort', stop, { once: true })
    const request: JobRequest = {
      params,
      jobName: parseRequest.jobName,
      jobId: parseRequest.jobId,
      message,
      log: parseRequest.log,
      source: queued ? 'queue' : schedule ? 'schedule' : 'api',
      scheduledAt,
      attempt,
      signal: controller.signal
    }
    try {
      return await withinTime(() => method(request), options.timeoutMs, controller, () => {
        log.warn(`[jobs] ${name}: attempt ${attempt} of run ${parseRequest.jobId} timed out ${LATE_STOP_WARNING_MS} ms ago and is still going; what comes next waits for it (stop when request.signal aborts)`)
      })
    } catch (error) {
      if (queued || attempt > retries || shutdown.aborted) throw error
      const pause = backoffMs * 2 ** (attempt - 1)
      log.warn({ err: error }, `[jobs] ${name}: attempt ${attempt} of ${retries + 1} of run ${parseRequest.jobId} failed: ${messageOf(error)}; retrying in ${pause} ms`)
      await message(`attempt ${attempt} of ${retries + 1} failed: ${messageOf(error)}; retrying in ${pause} ms`)
      await sleep(pause, shutdown)
    } finally {
      shutdown.removeEventListener('abort', stop)
    }
  }
}

/** The run's params (without the scheduler's own) and where it came from, on its _JobStatus row. */
async function recordRun (jobId: string, params: Record<string, unknown>, source: string | undefined): Promise<void> {
  const status = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
  await status.save({ params, ...(source ? { source } : {}) }, { useMasterKey: true })
}

/**
 * Runs one attempt under its time limit. At the limit its signal aborts, and the
 * attempt counts as timed out once it has stopped: a retry never runs beside it.
 */
async function withinTime (body: () => unknown, timeoutMs: number | undefined, controller: AbortController, stillGoing: () => void): Promise<unknown> {
  const work = Promise.resolve().then(body)
  if (timeoutMs === undefined) return await work
  let timedOut: Error | undefined
  let late: NodeJS.Timeout | undefined
  const timer = setTimeout(() => {
    timedOut = new Error(`timed out after ${timeoutMs} ms`)
    controller.abort(timedOut)
    late = setTimeout(stillGoing, LATE_STOP_WARNING_MS)
    late.unref()
  }, timeoutMs)
  timer.unref()
  try {
    const value = await work
    if (timedOut) throw timedOut
    return value
  } catch (error) {
    throw timedOut ?? error
  } finally {
    clearTimeout(timer)
    clearTimeout(late)
  }
}

/** Longest delay a Node timer takes: a longer one fires at once (a retry's doubled pause past 24.8 days retried at once). */
const LONGEST_TIMER_MS = 2_147_483_647

function sleep (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout
    const wait = (left: number) => {
      timer = setTimeout(() => left > LONGEST_TIMER_MS ? wait(left - LONGEST_TIMER_MS) : resolve(), Math.min(left, LONGEST_TIMER_MS))
      timer.unref()
    }
    wait(ms)
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve() }, { once: true })
  })
}

/**
 * What a run ended with, as text its _JobStatus row can hold. A job may throw
 * anything: an object without a prototype (String() throws: the run's end was
 * never written and the rejection ended the process), an Error whose message
 * is not text or holds a NUL character (the row's save was refused: the row
 * said "running" until another instance reported the run lost and ran it again).
 */
function messageOf (error: unknown): string {
  try {
    const message = error instanceof Error ? error.message : error
    return storable(typeof message === 'string' ? message : String(message))
  } catch {
    return 'threw a value that cannot be written as text'
  }
}

/** PostgreSQL stores no NUL character: it becomes U+FFFD in a run's message. */
function storable (text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text
}

// Queued jobs: enqueue() puts a run of a declared @Job in the queue (inside a
// transaction, on the transaction's own connection: it commits or rolls back
// with it), and every instance's workers take them, each one a Parse job run
// with its own _JobStatus row, as a run started by hand. The queue retries a
// failed run (a run of its own, on any instance), keeps one that spent its
// retries as dead, and hands back a run whose instance died (lost-runs.ts).
import Parse from 'parse/node'
import { Value } from '../typebox.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'
import { JobUnknownError, QueueOffError } from '../errors.js'
import { afterCommit } from '../storage/transaction.js'
import { nulPath } from '../storage/nul.js'
import { COMPLETED, openQueueEngine, type DeadJob, type QueueEngine, type QueuedEnd, type QueuedJob } from '../storage/queue.js'
import type { Database } from '../storage/database.js'
import { declaredJobs, jobName, type JobDeclaration } from './registry.js'
import { QUEUED_PARAM, queuedSource, type JobLogger, type QueuedRun } from './request.js'
import { jobRunStarter, jobStatusWriter, type JobRunStarter, type JobStatusWriter } from '../parse/parse-calls.js'
import type { StartedRuns } from '../storage/job-lease.js'
import { jobRunsPart, type JobRuns, type RunEnd } from './runs.js'
import type { QueueSettings } from './settings.js'

export interface EnqueueOptions {
  /** Run no sooner than this many milliseconds from now. */
  delayMs?: number
  /** Run no sooner than this time. */
  runAt?: Date
  /** While a job with this key waits to run, enqueueing another with it does nothing (and says so). */
  dedupeKey?: string
  /** Higher runs first among the waiting jobs of this job name. Default 0. */
  priority?: number
  /** Runs after the first when one fails. Default: the @Job's `retries`. */
  retries?: number
  /** Pause before the first retry (whole seconds; each later one about twice as long). Default: the @Job's `backoffMs`. */
  backoffMs?: number
}

export interface Enqueued {
  /** The queue's id of the job (the runs' _JobStatus rows name it in `source`). */
  id: string
  /** True when a job with the same dedupeKey was already waiting: `id` is that one's, and nothing was added. */
  deduplicated: boolean
}

export interface QueueHost {
  /** This instance takes no more jobs; runs going on continue. */
  pause (): Promise<void>
  /** Stops the engine's workers (after the jobs' grace): runs still active are handed back, to be retried. enqueue still works. */
  stop (): Promise<void>
  /** The kit closes its database: enqueue answers FPK_ERR_QUEUE_OFF from now on. */
  release (): void
}

/** The running kit's queue engine, when it runs one. */
export const queuePart = statePart('queue', () => ({ engine: undefined as QueueEngine | undefined }))

/** Longest the engine lets a run stay active without a time limit before counting it stalled (its limit is 24 h). */
const NO_LIMIT_EXPIRY_SECONDS = 23 * 60 * 60
/** Margin over a run's timeoutMs before the engine counts it stalled (the run's lease usually says so first). */
const EXPIRY_MARGIN_SECONDS = 60

function declarationOf (name: string): JobDeclaration | undefined {
  return declaredJobs().find((declaration) => jobName(declaration) === name)
}

function backoffSeconds (ms: number | undefined): number {
  return Math.round((ms ?? 1000) / 1000)
}

/**
 * Queues a run of the declared job `name` with `params` (JSON: Dates arrive as
 * ISO text). Inside withTransaction / @Transactional it is part of the
 * transaction: a rolled-back or re-run body leaves no job behind.
 */
export async function enqueue (name: string, params: Record<string, unknown> = {}, given: EnqueueOptions | null = {}): Promise<Enqueued> {
  // null is no options, as undefined is (it was a bare TypeError reading delayMs of null).
  const options = given ?? {}
  const declaration = declarationOf(name)
  if (!declaration) throw new JobUnknownError(`enqueue("${name}"): no @Job declares a job named "${name}" (declared: ${declaredJobs().map(jobName).join(', ') || 'none'})`)
  const engine = currentKitState().get(queuePart).engine
  if (!engine) throw new QueueOffError(`enqueue("${name}"): the kit runs no queue: set kitPlugin option jobs: { queue: true } (PostgreSQL), and call enqueue once the kit has booted`)
  if (typeof options !== 'object' || Array.isArray(options)) throw new JobUnknownError(`enqueue("${name}"): options must be an object such as { delayMs: 1000 } (got ${Array.isArray(options) ? 'a list' : typeof options})`)
  checkParams(name, declaration, params)
  const startAfter = startOf(name, options)
  const retries = options.retries ?? declaration.options.retries ?? 0
  // The queue's columns are PostgreSQL integers: a value past them failed the statement (22003) as a bare error.
  if (!isInt32(retries) || retries < 0) throw new JobUnknownError(`enqueue("${name}"): option "retries" must be a whole number from 0 to ${INT32_MAX} (got ${shown(options.retries)})`)
  if (options.priority !== undefined && !isInt32(options.priority)) throw new JobUnknownError(`enqueue("${name}"): option "priority" must be a whole number from ${-INT32_MAX - 1} to ${INT32_MAX} (got ${shown(options.priority)})`)
  checkDedupeKey(name, options.dedupeKey)
  const backoffMs = options.backoffMs ?? declaration.options.backoffMs
  if (backoffMs !== undefined && !(typeof backoffMs === 'number' && backoffMs >= 0 && backoffSeconds(backoffMs) <= INT32_MAX)) {
    throw new JobUnknownError(`enqueue("${name}"): option "backoffMs" must be a number of milliseconds from 0 to ${INT32_MAX * 1000} (got ${shown(options.backoffMs)})`)
  }
  const queued = await engine.send(name, { params }, {
    startAfter,
    dedupeKey: options.dedupeKey,
    priority: options.priority,
    retries,
    backoffSeconds: backoffSeconds(backoffMs)
  })
  // This instance's idle workers look at once (after the commit, inside a transaction).
  if (!startAfter) await afterCommit(() => engine.wake(name))
  return queued
}

const INT32_MAX = 2_147_483_647
/** The first instant PostgreSQL cannot read from the ISO text the queue sends (year 10000: "+010000-…"). */
const LAST_START_MS = Date.UTC(10_000, 0, 1)
/** Longest dedupe key: the queue keeps it in a unique index, whose entries PostgreSQL bounds to about 2.7 kB. */
const DEDUPE_KEY_MAX = 512

function isInt32 (value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= -INT32_MAX - 1 && (value as number) <= INT32_MAX
}

/** An option's value in a refusal (BigInt and other values JSON cannot write included). */
function shown (value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return typeof value
  }
}

function checkDedupeKey (name: string, key: unknown): void {
  if (key === undefined) return
  if (typeof key !== 'string' || key === '' || key.length > DEDUPE_KEY_MAX || key.includes('\u0000')) {
    throw new JobUnknownError(`enqueue("${name}"): option "dedupeKey" must be a non-empty string of at most ${DEDUPE_KEY_MAX} characters without the NUL character (got ${typeof key === 'string' ? `${key.length} characters` : typeof key})`)
  }
}

function startOf (name: string, options: EnqueueOptions): Date | undefined {
  const { delayMs, runAt } = options
  if (delayMs !== undefined && (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || Date.now() + delayMs >= LAST_START_MS)) {
    throw new JobUnknownError(`enqueue("${name}"): option "delayMs" must be a number of milliseconds ≥ 0 that ends before the year 10000 (got ${shown(delayMs)})`)
  }
  if (runAt !== undefined && (!(runAt instanceof Date) || Number.isNaN(runAt.getTime()) || runAt.getTime() >= LAST_START_MS)) {
    throw new JobUnknownError(`enqueue("${name}"): option "runAt" must be a valid Date before the year 10000`)
  }
  if (delayMs !== undefined && runAt !== undefined) throw new JobUnknownError(`enqueue("${name}"): give "delayMs" or "runAt", not both`)
  // A time already past runs as soon as a worker looks (any year, as PostgreSQL reads it: now).
  if (runAt) return runAt.getTime() > Date.now() ? runAt : new Date()
  return delayMs ? new Date(Date.now() + delayMs) : undefined
}

/** The params against the job's declared `params`, if it has any: 142 naming the first one that does not fit. */
function checkParams (name: string, declaration: JobDeclaration, params: unknown): void {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${name}: params must be an object`)
  }
  checkJson(name, params)
  const schema = declaration.options.params
  if (!schema || Value.Check(schema, params)) return
  const first = Value.Errors(schema, params).First()
  const param = first?.path.replace(/^\//, '').replace(/\//g, '.') || '(params)'
  throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${name}: param ${param}: ${first?.message ?? 'does not fit the declaration'}`)
}

/** A NUL character as JSON writes it (\u0000), not the text "\u0000" (which JSON writes with its backslash escaped). */
const JSON_NUL = /(?<!\\)(?:\\\\)*\\u0000/

/**
 * The params as the queue will store them (jsonb): a BigInt or a cycle failed
 * the send with a bare error (a cycle only at the database's read timeout, 10 s
 * later), and PostgreSQL's jsonb takes no NUL character (22P05).
 */
function checkJson (name: string, params: object): void {
  let text: string
  try {
    text = JSON.stringify(params)
  } catch (error) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${name}: params must be JSON (${(error as Error)?.message?.split('\n')[0] ?? 'not serializable'})`)
  }
  if (JSON_NUL.test(text)) throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${name}: param ${nulPath(JSON.parse(text)) ?? '(params)'} must not contain the NUL character (\\u0000)`)
}

/** Whether enqueue() works in the running kit (jobs.queue on PostgreSQL, booted): code that also runs without a queue picks its way with it. */
export function queueRunning (): boolean {
  return currentKitState().get(queuePart).engine !== undefined
}

/** A dead job as listDeadJobs lists it. */
export interface DeadJobEntry { id: string, params: Record<string, unknown>, diedAt: Date }

export interface DeadJobsOptions {
  /** How many to list: 1 to 1000, default 100. */
  limit?: number
  /** The last entry of the page before (its id and diedAt): the list goes on after it, even once that job is re-run. */
  after?: Pick<DeadJobEntry, 'id' | 'diedAt'>
}

const DEAD_LIMIT = 100
const DEAD_LIMIT_MAX = 1000

/**
 * Jobs of `name` that used all their retries, oldest first: their id, params and when they died; a page of
 * `limit` (a dead-letter queue may hold many: all of them at once was one unbounded read into memory).
 */
export async function listDeadJobs (name: string, options: DeadJobsOptions = {}): Promise<DeadJobEntry[]> {
  const engine = runningEngine(name)
  const { limit = DEAD_LIMIT, after } = options ?? {}
  if (!Number.isInteger(limit) || limit < 1 || limit > DEAD_LIMIT_MAX) throw new JobUnknownError(`listDeadJobs("${name}"): option "limit" must be a whole number from 1 to ${DEAD_LIMIT_MAX} (got ${shown(limit)})`)
  if (after !== undefined && !(typeof after === 'object' && after !== null && typeof after.id === 'string' && after.diedAt instanceof Date && !Number.isNaN(after.diedAt.getTime()))) {
    throw new JobUnknownError(`listDeadJobs("${name}"): option "after" must be the last entry of the page before ({ id, diedAt })`)
  }
  // The queue's ids are UUIDs: after any other text nothing is listed (PostgreSQL refused it, 22P02).
  if (after !== undefined && !UUID.test(after.id)) return []
  const dead: DeadJob[] = await engine.dead(name, limit, after)
  return dead.map((job) => ({ id: job.id, params: (job.data.params ?? {}) as Record<string, unknown>, diedAt: job.diedAt }))
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Queues a dead job again, with its params and its full retries; undefined when no such dead job waits. */
export async function rerunDeadJob (name: string, id: string): Promise<Enqueued | undefined> {
  const engine = runningEngine(name)
  const again = await engine.rerun(name, id)
  if (!again) return undefined
  engine.wake(name)
  return { id: again, deduplicated: false }
}

function runningEngine (name: string): QueueEngine {
  if (!declarationOf(name)) throw new JobUnknownError(`no @Job declares a job named "${name}"`)
  const engine = currentKitState().get(queuePart).engine
  if (!engine) throw new QueueOffError('the kit runs no queue: set kitPlugin option jobs: { queue: true } (PostgreSQL)')
  return engine
}

/** Hands a run lost with its instance back to its queue (lost-runs.ts). */
export async function failQueuedRun (state: KitState, run: QueuedRun, message: string): Promise<void> {
  await state.get(queuePart).engine?.fail(run.queue, run.id, message)
}

/** Opens the queue at boot (plugin.ts, once Parse runs jobs): a queue per declared job, and this instance's workers. */
export async function startQueue (state: KitState, database: Database, settings: QueueSettings, log: JobLogger): Promise<QueueHost> {
  const engine = await openQueueEngine(database, settings, (error) => log.warn(`[queue] ${error.message}`))
  const part = state.get(queuePart)
  try {
    for (const declaration of declaredJobs()) {
      const { retries = 0, backoffMs, timeoutMs } = declaration.options
      await engine.define(jobName(declaration), {
        retries,
        backoffSeconds: backoffSeconds(backoffMs),
        // The engine takes less than 24 h: a longer limit (timeoutMs of a day) failed the boot with its assertion.
        expireSeconds: timeoutMs === undefined ? NO_LIMIT_EXPIRY_SECONDS : Math.min(Math.ceil(timeoutMs / 1000) + EXPIRY_MARGIN_SECONDS, NO_LIMIT_EXPIRY_SECONDS)
      })
    }
    part.engine = engine
    if (settings.workers) {
      for (const declaration of declaredJobs()) {
        const name = jobName(declaration)
        await engine.work(name, declaration.options.concurrency ?? 1, (jobs) => runQueuedBatch(state, name, jobs, log))
      }
    }
  } catch (error) {
    await engine.stop().catch(() => {})
    throw error
  }
  return {
    pause: () => engine.pause(),
    // Requests are still served while the kit drains, and a job they queue is kept for the next instance:
    // enqueue works until the database closes (it refused with FPK_ERR_QUEUE_OFF once the workers stopped).
    stop: () => engine.stop(),
    release () {
      if (part.engine === engine) part.engine = undefined
    }
  }
}

/**
 * One batch of queued jobs, each run as a Parse job run at once. Their leases
 * and "running" rows are written together (one statement on PostgreSQL), and
 * each run's end is written on its row with its lease dropped. Where the rows
 * cannot go with the leases (no _JobStatus yet), the leases go first, then the
 * rows, and the leases are dropped in one write once every run's end is on its
 * row. Answers each job's failure (the queue fails it: retried, or dead when
 * spent), COMPLETED for one that succeeded and whose end, written with its
 * row, completed its job in the queue, or undefined for another success (the
 * engine completes it).
 */
async function runQueuedBatch (state: KitState, name: string, jobs: QueuedJob[], log: JobLogger): Promise<QueuedEnd[]> {
  const runs = state.get(jobRunsPart)
  const context = runs.context
  const appId = state.appId!
  const starter = jobRunStarter(appId, name)
  const started = jobs.map((job) => {
    const marker: QueuedRun = { queue: name, id: job.id, attempt: job.attempt, attempts: job.attempts }
    const params = (job.data.params ?? {}) as Record<string, unknown>
    return { job, marker, params, runParams: { ...params, [QUEUED_PARAM]: marker }, jobId: starter.newId() }
  })
  let leaseHeld = false
  let together: StartedRuns | undefined
  if (context) {
    const starts = started.map((run) => ({ jobId: run.jobId, jobName: name, holder: context.holder, params: run.runParams, attempt: run.job.attempt, row: { params: run.params, source: queuedSource(run.marker) }, queued: { queue: name, id: run.job.id } }))
    leaseHeld = await context.leases.startRuns(starts, context.leaseMs)
      .then((written) => { together = written; return true }, (error: unknown) => {
        log.warn(`[jobs] ${name}: ${jobs.length} queued run(s) take their leases one by one (${(error as Error)?.message ?? String(error)})`)
        return false
      })
  }
  const ends = together ? await runStarted(runs, starter, started, together) : await startRows(runs, appId, name, started, leaseHeld)
  // A lease whose run's end is not on its row stays: another instance reports that run lost.
  if (leaseHeld && !together) await context!.leases.dropRuns(started.filter((_run, i) => ends[i].recorded).map((run) => run.jobId)).catch(() => {})
  return ends.map((end, i) => {
    if (end.status === 'succeeded') return together && end.recorded ? COMPLETED : undefined
    const { job } = started[i]
    if (job.attempt >= job.attempts) log.error(`[queue] ${name}: job ${job.id} failed on its last attempt (${job.attempt} of ${job.attempts}): kept as dead (listDeadJobs / rerunDeadJob)`)
    return new Error(end.message ?? 'failed')
  })
}

interface BatchRun { params: Record<string, unknown>, runParams: Record<string, unknown>, marker: QueuedRun, jobId: string }

/** Runs whose rows and leases are written: each one's end goes on its row with its lease dropped, in one write. */
async function runStarted (runs: JobRuns, starter: JobRunStarter, started: BatchRun[], together: StartedRuns): Promise<RunEnd[]> {
  return await Promise.all(started.map(({ runParams, jobId }): Promise<RunEnd> => {
    starter.run(runParams, jobId, (end) => together.end(jobId, end))
    // The run's end as this process wrote it on its _JobStatus row (no read back).
    return runs.finished(jobId)
  }))
}

/** Runs whose leases (if any) are written and rows are not: one writer writes the rows, the class's schema read once. */
async function startRows (runs: JobRuns, appId: string, name: string, started: BatchRun[], leaseHeld: boolean): Promise<RunEnd[]> {
  const writer: Promise<JobStatusWriter> = jobStatusWriter(appId)
  writer.catch(() => {})
  return await Promise.all(started.map(async ({ marker, params, runParams, jobId }): Promise<RunEnd> => {
    try {
      // Started here, its row written once with params and source (Parse's POST /jobs would cost a routed request and a second write).
      await (await writer).start(name, runParams, { params, source: queuedSource(marker), jobId, leaseHeld })
    } catch (error) {
      // Never began: the queue hears of it below, so its lease has nothing to report.
      return { status: 'failed', message: (error as Error)?.message ?? String(error), recorded: true }
    }
    return await runs.finished(jobId)
  }))
}

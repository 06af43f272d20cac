// Runs lost with their instance: a run holds a lease renewed while it goes on
// (runs.ts); when its instance dies (SIGKILL, a crash, a lost machine) the
// lease expires, and the first instance to find it marks the run's _JobStatus
// row failed "instance lost" and, when the job has retries left, starts it
// again with the same params, its first attempt continuing the count. A
// queued run is handed back to the queue instead (failed there: the queue
// retries it, or keeps it dead when its retries are spent).
//
// An instance can also die after Parse marked a run's row "running" and before
// the kit's handler wrote its lease (a few awaits later). Such a row, still
// "running" with no lease once this instance has seen it so for unleasedAfter()
// (on its own clock: the row's createdAt is another instance's), is reported the
// same way: the bound is far beyond any healthy lease write, so a run that is
// merely slow to take its lease is never reported.
//
// The row write of a report can answer an error and still land: the database
// bound ends the caller's wait, not a statement waiting on a lock. The lease,
// put back for a later look, says its taker began that write (marking), so the
// look that retakes it and finds the row failed "instance lost" finishes the
// report (its retry included) instead of taking the run for one that ended.
import Parse from 'parse/node'
import type { JobLeases, RunLease, UnleasedRun } from '../storage/job-lease.js'
import { metricHooks } from '../metrics/hooks.js'
import { QUEUED_PARAM, queuedFromSource, queuedRun, retryParams, splitParams, type JobLogger, type QueuedRun } from './request.js'
import { episode } from './episode-log.js'
import { dueUnleased, type UnleasedSightings } from './unleased-sightings.js'

export const LOST_MESSAGE = 'instance lost'

/** Expired leases (and runs without one) taken per look. */
const BATCH = 100

/** The shortest time a "running" row must have had no lease before it is reported lost. */
export const UNLEASED_MIN_MS = 60_000

/** How long a running run seen without a lease counts as lost: three lease periods, and at least a minute. */
export function unleasedAfter (leaseMs: number): number {
  return Math.max(3 * leaseMs, UNLEASED_MIN_MS)
}

export interface LostRunsOptions {
  log: JobLogger
  leaseMs: number
  retriesOf: (jobName: string) => number
  /** The jobs the kit's handler runs (each run takes a lease): a run of any other job never has one. */
  jobNames: string[]
  /** Hands a lost queued run back to its queue. */
  failQueued: (run: QueuedRun, message: string) => Promise<void>
  /** This instance's monotonic clock in ms (a test's own in unit tests). */
  now?: () => number
}

export function watchLostRuns (leases: JobLeases, options: LostRunsOptions): { stop (): void, look (): Promise<void> } {
  const { log } = options
  const failures = episode(log, 'error')
  const now = options.now ?? (() => performance.now())
  const sightings: UnleasedSightings = new Map()
  /** Runs reported whose lease could not be dropped yet: dropped at the next look, never reported again. */
  const reported = new Set<string>()
  let looking: Promise<void> | undefined
  const lookOnce = async () => {
    for (const jobId of reported) await leases.dropRun(jobId).then(() => reported.delete(jobId), () => {})
    let lost: RunLease[]
    try {
      // Held while it is reported: until its row says failed, another instance's look for running rows
      // without a lease would otherwise take the same run (and retry it from the row's params).
      lost = await leases.takeLostRuns(BATCH, unleasedAfter(options.leaseMs))
    } catch (error) {
      failures.happened(`[jobs] could not look for runs lost with their instance: ${(error as Error)?.message ?? String(error)} (later failures are counted until it works again)`)
      return
    }
    for (const taken of lost) {
      const lease = { ...taken }
      const report = reported.has(lease.jobId) ? Promise.resolve() : reportLost(lease, leases, options)
      await report.then(
        // Its row says how it ended: the lease goes (one that stays expires, and the next taker finds the row ended).
        () => leases.dropRun(lease.jobId).then(() => reported.delete(lease.jobId), () => { reported.add(lease.jobId) }),
        async (error: unknown) => {
          log.warn(`[jobs] ${lease.jobName}: run ${lease.jobId} lost its instance but could not be reported yet: ${(error as Error)?.message ?? String(error)}`)
          // Put back, already expired (marking, once its row write began): the next look tries again.
          await leases.holdRun(lease, 0).catch(() => {})
        })
    }
    let unleased: UnleasedRun[]
    try {
      const seen = await leases.findUnleasedRuns(options.jobNames, BATCH)
      const due = dueUnleased(sightings, seen, now(), unleasedAfter(options.leaseMs))
      unleased = due.length > 0 ? await leases.takeUnleasedRuns(due, LOST_MESSAGE) : []
    } catch (error) {
      failures.happened(`[jobs] could not look for running runs that never took a lease: ${(error as Error)?.message ?? String(error)} (later failures are counted until it works again)`)
      return
    }
    // Only once both looks work: a failing second look would otherwise end and begin an episode at every look.
    failures.over((count, seconds) => `[jobs] looking for lost runs works again (${count} look(s) failed over ${seconds} s)`)
    for (const run of unleased) {
      // Its row already says failed: what is left is the retry (or the queue's).
      await reportUnleased(run, options).catch((error: unknown) => {
        options.log.error(`[jobs] ${run.jobName}: run ${run.jobId} was marked failed "${LOST_MESSAGE}" but could not be retried: ${(error as Error)?.message ?? String(error)}`)
      })
    }
  }
  const look = () => { looking ??= lookOnce().finally(() => { looking = undefined }); return looking }
  const timer = setInterval(() => { void look() }, Math.max(500, Math.floor(options.leaseMs / 2)))
  timer.unref()
  return { stop: () => clearInterval(timer), look }
}

/** Reports a taken lease's run; `lease` is marked (and its hold renewed) before the row write, as the caller puts it back. */
async function reportLost (lease: RunLease, leases: JobLeases, options: LostRunsOptions): Promise<void> {
  const { jobId, jobName, holder, attempt } = lease
  const row = await new Parse.Query('_JobStatus').get(jobId, { useMasterKey: true }).catch((error: { code?: number }) => {
    if (error?.code === Parse.Error.OBJECT_NOT_FOUND) return undefined
    throw error
  })
  const status = row?.get('status')
  // An earlier taker's row write (this lease's, marked before it) landed after its caller had an error.
  const markedEarlier = lease.marking === true && status === 'failed' && row?.get('message') === LOST_MESSAGE
  // Its end was recorded (the lease outlived the write): nothing was lost.
  if (status !== 'running' && !markedEarlier) return
  if (!markedEarlier) {
    lease.marking = true
    await leases.holdRun(lease, unleasedAfter(options.leaseMs))
  }
  // First back to the queue (which fails only a job still active there), then the row: a failed write is tried again.
  const queued = queuedRun(lease.params?.[QUEUED_PARAM])
  if (queued) await options.failQueued(queued, `${LOST_MESSAGE} (${holder})`)
  if (!markedEarlier) await row!.save({ status: 'failed', message: LOST_MESSAGE, finishedAt: new Date() }, { useMasterKey: true })
  metricHooks().jobRunEnded(jobName, 'lost')
  if (queued) {
    options.log.warn(`[jobs] run ${jobId} of ${jobName} was lost with its instance (${holder}) during attempt ${queued.attempt} of ${queued.attempts}; marked failed "${LOST_MESSAGE}" and handed back to its queue`)
    return
  }
  const retries = options.retriesOf(jobName)
  const where = `run ${jobId} of ${jobName} was lost with its instance (${holder}) during attempt ${attempt} of ${retries + 1}; marked failed "${LOST_MESSAGE}"`
  if (attempt > retries) {
    options.log.error(`[jobs] ${where}${retries > 0 ? ', its retries spent' : ''}`)
    return
  }
  const retry = await Parse.Cloud.startJob(jobName, retryParams(lease.params, attempt + 1))
  options.log.warn(`[jobs] ${where}; retried as run ${String(retry)} (attempt ${attempt + 1} of ${retries + 1})`)
}

/** A run whose instance died before it took its lease: its row is already failed "instance lost" (takeUnleasedRuns). */
async function reportUnleased (run: UnleasedRun, options: LostRunsOptions): Promise<void> {
  const { jobId, jobName } = run
  metricHooks().jobRunEnded(jobName, 'lost')
  const noLease = `run ${jobId} of ${jobName} was lost with its instance before it took its lease (seen "running" without one for ${Math.round(unleasedAfter(options.leaseMs) / 1000)} s)`
  // A queued run's row holds its params without the queue's marker; its source names the queue's job.
  const queued = queuedRun(run.params[QUEUED_PARAM]) ?? queuedFromSource(run.source, jobName)
  if (queued) {
    await options.failQueued(queued, LOST_MESSAGE)
    options.log.warn(`[jobs] ${noLease} during attempt ${queued.attempt} of ${queued.attempts}; marked failed "${LOST_MESSAGE}" and handed back to its queue`)
    return
  }
  const { firstAttempt: attempt } = splitParams(run.params, jobName)
  const retries = options.retriesOf(jobName)
  const where = `${noLease} during attempt ${attempt} of ${retries + 1}; marked failed "${LOST_MESSAGE}"`
  if (attempt > retries) {
    options.log.error(`[jobs] ${where}${retries > 0 ? ', its retries spent' : ''}`)
    return
  }
  const retry = await Parse.Cloud.startJob(jobName, retryParams(run.params, attempt + 1))
  options.log.warn(`[jobs] ${where}; retried as run ${String(retry)} (attempt ${attempt + 1} of ${retries + 1})`)
}

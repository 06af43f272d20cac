// The job runs going on in this process, by _JobStatus id: the scheduler waits
// for the run it started, and shutdown waits for all of them, for a bounded
// time, then records the ones still going as failed "interrupted by shutdown".
// Each run holds a lease in the shared database, renewed while it goes on: when
// this instance dies, another one finds the lease expired and reports the run
// lost (start.ts).
import Parse from 'parse/node'
import { currentKitState, statePart } from '../kit-state.js'
import type { JobLeases, RunLease } from '../storage/job-lease.js'
import type { JobLogger } from './request.js'
import { metricHooks } from '../metrics/hooks.js'
import { episode } from './episode-log.js'

export const INTERRUPTED_MESSAGE = 'interrupted by shutdown'

/** How a run ended, as its _JobStatus row says. */
export interface RunEnd {
  status: 'succeeded' | 'failed'
  message?: string
  /** The row says how the run ended: its lease may go (else it stays, and another instance reports the run lost). */
  recorded?: boolean
}

interface Run {
  name: string
  controller: AbortController
  interrupted: boolean
  done: Promise<RunEnd>
  finish: (end: RunEnd) => void
  startedAt: number
}

/** What startJobs gives the runs once the kit runs: the leases, this instance's name in them, and the kit's logger. */
export interface RunsContext {
  leases: JobLeases
  holder: string
  leaseMs: number
  log: JobLogger
}

/** How many finished run ids are remembered for a waiter that comes late. */
const REMEMBERED = 1000

export class JobRuns {
  private readonly runs = new Map<string, Run>()
  private readonly waiting = new Map<string, (end: RunEnd) => void>()
  private readonly ended = new Map<string, RunEnd>()
  /** Runs whose lease could not be written when they began: written again on each renewal until it is. */
  private readonly unheld = new Map<string, Omit<RunLease, 'startedAt'>>()
  private renewal: NodeJS.Timeout | undefined
  /** Set by startJobs; unset before (and for a kit whose jobs never started). */
  context: RunsContext | undefined
  /** Close has begun: a run that begins now is interrupted at once. */
  closing = false

  attach (context: RunsContext): void {
    this.context = context
    clearInterval(this.renewal)
    const failures = episode(context.log, 'warn')
    this.renewal = setInterval(() => {
      if (this.runs.size === 0) return
      for (const [jobId, lease] of this.unheld) {
        context.leases.holdRun(lease, context.leaseMs).then(() => { this.unheld.delete(jobId) }, () => {})
      }
      context.leases.renewRuns(context.holder, context.leaseMs).then(
        () => failures.over((count, seconds) => `[jobs] the leases of the runs going on are renewed again (${count} renewal(s) failed over ${seconds} s)`),
        (error: unknown) => failures.happened(`[jobs] could not renew the leases of the runs going on: ${(error as Error)?.message ?? String(error)} (later failures are counted until it works again)`))
    }, Math.max(500, Math.floor(context.leaseMs / 3)))
    this.renewal.unref()
  }

  detach (): void {
    clearInterval(this.renewal)
  }

  /** A run begins (called by the job's wrapper, with Parse's _JobStatus id). */
  begin (jobId: string, name: string): Run {
    let finish = (_end: RunEnd) => {}
    const done = new Promise<RunEnd>((resolve) => { finish = resolve })
    const run: Run = { name, controller: new AbortController(), interrupted: this.closing, done, finish: () => {}, startedAt: Date.now() }
    run.finish = (end) => {
      this.runs.delete(jobId)
      this.unheld.delete(jobId)
      finish(end)
      const waiter = this.waiting.get(jobId)
      this.waiting.delete(jobId)
      if (waiter) return waiter(end)
      this.ended.set(jobId, end)
      if (this.ended.size > REMEMBERED) this.ended.delete(this.ended.keys().next().value!)
    }
    this.runs.set(jobId, run)
    return run
  }

  /** How the run with this id ended, once it has, even if it has not begun yet (Parse starts it on the next tick). */
  finished (jobId: string): Promise<RunEnd> {
    const run = this.runs.get(jobId)
    if (run) return run.done
    const end = this.ended.get(jobId)
    if (end) {
      this.ended.delete(jobId)
      return Promise.resolve(end)
    }
    return new Promise((resolve) => {
      const earlier = this.waiting.get(jobId)
      this.waiting.set(jobId, (ended) => { earlier?.(ended); resolve(ended) })
    })
  }

  /**
   * The run's lease could not be written: tried again with each renewal, so a
   * healthy run is not taken for one whose instance died before its lease.
   */
  holdLater (lease: Omit<RunLease, 'startedAt'>): void {
    if (this.runs.has(lease.jobId)) this.unheld.set(lease.jobId, lease)
  }

  /** Whether the run with this id is going on in this process. */
  running (jobId: string): boolean {
    return this.runs.has(jobId)
  }

  /**
   * Waits up to graceMs for the runs going on; each one still going is then
   * aborted and its _JobStatus row marked failed, and its outcome is ignored
   * (Parse's own final write would come after the database has closed).
   */
  async interrupt (graceMs: number): Promise<string[]> {
    this.closing = true
    if (this.runs.size === 0) return []
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); timer.unref() })
    await Promise.race([Promise.all([...this.runs.values()].map((run) => run.done)), grace])
    clearTimeout(timer)
    const stopped: string[] = []
    for (const [jobId, run] of [...this.runs]) {
      run.interrupted = true
      run.controller.abort(new Error(INTERRUPTED_MESSAGE))
      // A run whose row cannot be written keeps its lease: another instance reports it lost once that expires.
      const marked = await markInterrupted(jobId).then(() => true, () => false)
      if (marked) await this.context?.leases.dropRun(jobId).catch(() => {})
      metricHooks().jobRunEnded(run.name, 'interrupted', (Date.now() - run.startedAt) / 1000)
      run.finish({ status: 'failed', message: INTERRUPTED_MESSAGE })
      stopped.push(`${run.name} (${jobId})`)
    }
    return stopped
  }
}

export async function markInterrupted (jobId: string): Promise<void> {
  const status = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
  await status.save({ status: 'failed', message: INTERRUPTED_MESSAGE, finishedAt: new Date() }, { useMasterKey: true })
}

export const jobRunsPart = statePart('jobRuns', () => new JobRuns())

export function currentJobRuns (): JobRuns {
  return currentKitState().get(jobRunsPart)
}

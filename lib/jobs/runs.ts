// The job runs going on in this process, by _JobStatus id: the scheduler waits
// for the run it started, and shutdown waits for all of them, for a bounded
// time, then records the ones still going as failed "interrupted by shutdown".
import Parse from 'parse/node'
import { currentKitState, statePart } from '../kit-state.js'

export const INTERRUPTED_MESSAGE = 'interrupted by shutdown'

interface Run {
  name: string
  controller: AbortController
  interrupted: boolean
  done: Promise<void>
  finish: () => void
}

/** How many finished run ids are remembered for a waiter that comes late. */
const REMEMBERED = 1000

export class JobRuns {
  private readonly runs = new Map<string, Run>()
  private readonly waiting = new Map<string, () => void>()
  private readonly ended = new Set<string>()

  /** A run begins (called by the job's wrapper, with Parse's _JobStatus id). */
  begin (jobId: string, name: string): Run {
    let finish = () => {}
    const done = new Promise<void>((resolve) => { finish = resolve })
    const run: Run = { name, controller: new AbortController(), interrupted: false, done, finish: () => {} }
    run.finish = () => {
      this.runs.delete(jobId)
      finish()
      const waiter = this.waiting.get(jobId)
      this.waiting.delete(jobId)
      if (waiter) return waiter()
      this.ended.add(jobId)
      if (this.ended.size > REMEMBERED) this.ended.delete(this.ended.values().next().value!)
    }
    this.runs.set(jobId, run)
    return run
  }

  /** Settles when the run with this id has finished, even if it has not begun yet (Parse starts it on the next tick). */
  finished (jobId: string): Promise<void> {
    const run = this.runs.get(jobId)
    if (run) return run.done
    if (this.ended.delete(jobId)) return Promise.resolve()
    return new Promise((resolve) => {
      const earlier = this.waiting.get(jobId)
      this.waiting.set(jobId, () => { earlier?.(); resolve() })
    })
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
    if (this.runs.size === 0) return []
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); timer.unref() })
    await Promise.race([Promise.all([...this.runs.values()].map((run) => run.done)), grace])
    clearTimeout(timer)
    const stopped: string[] = []
    for (const [jobId, run] of [...this.runs]) {
      run.interrupted = true
      run.controller.abort(new Error(INTERRUPTED_MESSAGE))
      await markInterrupted(jobId).catch(() => {})
      run.finish()
      stopped.push(`${run.name} (${jobId})`)
    }
    return stopped
  }
}

async function markInterrupted (jobId: string): Promise<void> {
  const status = Parse.Object.fromJSON({ className: '_JobStatus', objectId: jobId })
  await status.save({ status: 'failed', message: INTERRUPTED_MESSAGE, finishedAt: new Date() }, { useMasterKey: true })
}

export const jobRunsPart = statePart('jobRuns', () => new JobRuns())

export function currentJobRuns (): JobRuns {
  return currentKitState().get(jobRunsPart)
}

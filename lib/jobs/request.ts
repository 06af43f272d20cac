// The request a job handler gets: Parse's job request, typed, plus what the
// kit adds (the tick a schedule ran it for, the attempt, an abort signal).

/** Parameters the scheduler adds to the runs it starts; taken out before the handler sees params. */
export const SCHEDULED_AT_PARAM = '__scheduledAt'
export const SCHEDULE_PARAM = '__schedule'
/** Added when a run lost with its instance is retried: the retry's first attempt continues the count. */
export const ATTEMPT_PARAM = '__attempt'
/** Added to a queued run (enqueue): the queue's job it runs, and which of its attempts this is. */
export const QUEUED_PARAM = '__queued'

/** What a queued run knows of the queue's job behind it. */
export interface QueuedRun { queue: string, id: string, attempt: number, attempts: number }

export interface JobLogger {
  debug? (...args: unknown[]): void
  info (...args: unknown[]): void
  warn (...args: unknown[]): void
  error (...args: unknown[]): void
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface JobRequest<P = Record<string, any>> {
  /** What the caller sent (POST body, startJob's data, the Dashboard's parameters, @Cron's params). */
  params: P
  jobName: string
  /** The objectId of this run's _JobStatus row. */
  jobId: string
  /** Progress text: sets _JobStatus.message (the Dashboard's Job Status page shows it). */
  message (text: string): Promise<void>
  /** Parse Server's logger. */
  log: JobLogger
  /** 'schedule' when a @Cron or a Dashboard schedule started the run, 'queue' for enqueue(), 'api' otherwise. */
  source: 'api' | 'schedule' | 'queue'
  /** The tick a schedule started this run for (undefined for runs started by hand). */
  scheduledAt?: Date
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number
  /** Aborted when this attempt times out or the server shuts down: stop early when it fires. */
  signal: AbortSignal
}

/** What Parse's FunctionsRouter.handleCloudJob passes a job function. */
export interface ParseJobRequest {
  params: Record<string, unknown>
  jobName: string
  jobId: string
  message: (text: string) => Promise<unknown>
  log: JobLogger
  /** The run's row already holds its params and source (a queued run, started by the kit). */
  rowComplete?: boolean
  /** The starter holds the run's lease and drops it once the run's end is recorded (a batch of queued runs). */
  leaseHeld?: boolean
  /** Writes the run's end on its row, when its starter offers a cheaper way than endJobRun (a batch of queued runs). */
  recordEnd?: (end: { status: string, finishedAt: Date, message?: string }) => Promise<void>
}

/** The source a queued run's _JobStatus row shows. */
export function queuedSource (run: QueuedRun): string {
  return `queue ${run.id} (attempt ${run.attempt} of ${run.attempts})`
}

/** The queued run a row's source names (queuedSource), the queue being the job's own. */
export function queuedFromSource (source: string | undefined, jobName: string): QueuedRun | undefined {
  const match = /^queue (\S+) \(attempt (\d+) of (\d+)\)$/.exec(source ?? '')
  return match ? { queue: jobName, id: match[1], attempt: Number(match[2]), attempts: Number(match[3]) } : undefined
}

/**
 * The caller's parameters without the scheduler's own, and what those said.
 * Parse Dashboard's "Run now" posts { jobName, input, when, description } to
 * POST /jobs: the job gets `input`, the parameters the Dashboard meant.
 */
export function splitParams (params: Record<string, unknown>, jobName: string): { params: Record<string, unknown>, scheduledAt?: Date, schedule?: string, firstAttempt: number, queued?: QueuedRun } {
  const { [SCHEDULED_AT_PARAM]: scheduledAt, [SCHEDULE_PARAM]: schedule, [ATTEMPT_PARAM]: attempt, [QUEUED_PARAM]: queued, ...rest } = params ?? {}
  const at = typeof scheduledAt === 'string' ? new Date(scheduledAt) : undefined
  const run = queuedRun(queued)
  if (run) return { params: rest, firstAttempt: run.attempt, queued: run }
  return {
    params: fromDashboard(rest, jobName) ?? rest,
    scheduledAt: at && !Number.isNaN(at.getTime()) ? at : undefined,
    schedule: typeof schedule === 'string' ? schedule : undefined,
    firstAttempt: typeof attempt === 'number' && Number.isInteger(attempt) && attempt > 1 ? attempt : 1
  }
}

/** The queue's job behind a run's params, when a queue started it. */
export function queuedRun (value: unknown): QueuedRun | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { queue, id, attempt, attempts } = value as Record<string, unknown>
  if (typeof queue !== 'string' || typeof id !== 'string' || typeof attempt !== 'number' || typeof attempts !== 'number') return undefined
  return { queue, id, attempt, attempts }
}

/** The params a retry of a lost run starts with: the lost run's own, the attempt it reached plus one. */
export function retryParams (params: Record<string, unknown>, nextAttempt: number): Record<string, unknown> {
  const { [ATTEMPT_PARAM]: _previous, ...rest } = params ?? {}
  return { ...rest, [ATTEMPT_PARAM]: nextAttempt }
}

const RUN_NOW_KEYS = new Set(['description,input,jobName,when', 'input,jobName,when'])

function fromDashboard (params: Record<string, unknown>, jobName: string): Record<string, unknown> | undefined {
  const { input } = params
  const runNow = RUN_NOW_KEYS.has(Object.keys(params).sort().join(',')) && params.jobName === jobName &&
    typeof input === 'object' && input !== null && !Array.isArray(input)
  return runNow ? input as Record<string, unknown> : undefined
}

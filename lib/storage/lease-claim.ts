// A leaf, so both databases' lease code and the neutral front can name these.
/** claimed: this instance runs the tick · taken: another instance has it · busy: the last run still holds the lease (skip). */
export type LeaseClaim = 'claimed' | 'taken' | 'busy'

/** A job run going on, held by one instance while it renews the lease; an expired one lost its instance. */
export interface RunLease {
  jobId: string
  jobName: string
  holder: string
  /** The params Parse gave the run (the scheduler's own included), so a retry gets the same. */
  params: Record<string, unknown>
  attempt: number
  startedAt: Date
  /**
   * A taker of the expired lease began writing the run's row failed: found so
   * again with the row failed, that write was its own and landed after its
   * caller had given up on it (the rest of the report is still owed).
   */
  marking?: boolean
}

/** A run whose _JobStatus row said "running" with no lease long after it began: taken (marked failed) to be reported lost. */
export interface UnleasedRun {
  jobId: string
  jobName: string
  /** The params on its row (Parse's, the scheduler's own included: the kit's handler never got to rewrite them). */
  params: Record<string, unknown>
  source?: string
}

/** A queued run about to begin: its lease, and the _JobStatus row written with it. */
export interface RunStart extends Omit<RunLease, 'startedAt'> {
  /** The row's params (without the queue's own) and source. */
  row: { params: Record<string, unknown>, source: string }
  /** The queue's job the run is an attempt of: a run that succeeds completes it with its end, in one write. */
  queued: { queue: string, id: string }
}

/** A run's end as its _JobStatus row takes it. */
export interface RunEndRow { status: string, finishedAt: Date, message?: string }

/** Runs whose rows were written with their leases: each one's end is written on its row with its lease dropped. */
export interface StartedRuns {
  end (jobId: string, end: RunEndRow): Promise<void>
}

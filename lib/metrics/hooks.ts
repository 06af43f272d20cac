// What the kit's parts report for the metrics endpoint: each calls one hook
// (`metricHooks().transactionRetried()`), and does not know whether metrics are
// on. With metrics off the hooks do nothing; with them on (metrics/prometheus.ts)
// they count. They belong to the running kit, like the rest of its state.
import { currentKitState, statePart } from '../kit-state.js'

export interface MetricHooks {
  /** A transaction body re-ran after a transient conflict. */
  transactionRetried (): void
  /** A transaction gave up after its attempts and answered CONFLICT (5001). */
  transactionConflicted (): void
  /** A declared function's rate limit refused a call (429). */
  rateLimited (functionName: string): void
  /** The role cache answered (hit) or had to read the role graph (miss). */
  roleCacheLookup (hit: boolean): void
  /** The database stopped answering (an outage began). */
  databaseOutage (): void
  /** Cluster mode: Redis became unreachable (false) or reachable again (true). */
  redisReachable (up: boolean): void
  /** A job run ended: succeeded, failed (its attempts spent), interrupted by shutdown, or lost with its instance; seconds when this instance ran it. */
  jobRunEnded (job: string, status: JobRunStatus, seconds?: number): void
}

export type JobRunStatus = 'succeeded' | 'failed' | 'interrupted' | 'lost'

/** What every hook does while metrics are off. */
export const IGNORED_HOOKS: MetricHooks = {
  transactionRetried () {},
  transactionConflicted () {},
  rateLimited () {},
  roleCacheLookup () {},
  databaseOutage () {},
  redisReachable () {},
  jobRunEnded () {}
}

export const metricHooksPart = statePart('metric hooks', () => ({ hooks: IGNORED_HOOKS }))

/** The running kit's hooks (no-ops unless its `metrics` option is on). */
export function metricHooks (): MetricHooks {
  return currentKitState().get(metricHooksPart).hooks
}

// The built-in sweep of expired sessions: Parse adds one _Session row per login
// with a one-year lifetime and never deletes one that expires unused, so the
// table grows with use. A built-in job, run by a built-in schedule (hourly
// unless jobs.sessionSweep says otherwise), deletes them in batches on either
// database. No Parse trigger runs (Parse allows only afterLogout on _Session,
// and an expiry is not a logout); LiveQuery is not told.
import { deleteExpiredSessions, SESSION_SWEEP_BATCH } from '../storage/session-sweep.js'
import type { KitState } from '../kit-state.js'
import type { BuiltInJob } from './handler.js'
import { pruneOwnStatus } from './ttl.js'

export const SESSION_SWEEP_JOB_NAME = 'kitExpireSessions'

export function sessionSweepJob (state: KitState): BuiltInJob {
  return {
    name: SESSION_SWEEP_JOB_NAME,
    options: { description: 'Deletes sessions whose expiresAt has passed, in batches' },
    method: async (request) => {
      const started = Date.now()
      let batches = 0
      const deleted = await deleteExpiredSessions(state, { signal: request.signal, batchSize: SESSION_SWEEP_BATCH, onBatch: () => { batches++ } })
      await pruneOwnStatus(SESSION_SWEEP_JOB_NAME)
      const text = deleted > 0 ? `deleted ${deleted} expired sessions in ${batches} batches of at most ${SESSION_SWEEP_BATCH} (${Date.now() - started} ms)` : 'no expired sessions'
      if (deleted > 0) request.log.info(`[jobs] ${SESSION_SWEEP_JOB_NAME}: ${text}`)
      return text
    }
  }
}

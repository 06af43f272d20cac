// ttlSeconds on a Date field: MongoDB expires such rows itself (a TTL index);
// on PostgreSQL the kit declares a built-in job that deletes them in batches,
// run by a built-in schedule (every minute unless jobs.ttlSweep says otherwise).
// The rows go by straight SQL, as MongoDB's TTL monitor removes documents: no
// Parse trigger (beforeDelete/afterDelete) runs for them, and LiveQuery is not told.
import Parse from 'parse/node'
import { allModels } from '../model/registry.js'
import { databaseExpiresRows, deleteExpiredRows } from '../storage/job-lease.js'
import type { KitState } from '../kit-state.js'
import type { BuiltInJob } from './handler.js'

export const TTL_JOB_NAME = 'kitExpireRows'
/** A sweep's own _JobStatus rows are kept this long (every minute would add 1440 a day). */
const OWN_STATUS_KEPT_MS = 86_400_000

interface ExpiringField { className: string, field: string, ttlSeconds: number }

function expiringFields (): ExpiringField[] {
  const fields: ExpiringField[] = []
  for (const model of allModels()) {
    for (const field of model.fields.values()) {
      if (field.ttlSeconds !== undefined) fields.push({ className: model.className, field: field.name, ttlSeconds: field.ttlSeconds })
    }
  }
  return fields
}

/** The sweep job, when some field has ttlSeconds and the database does not expire rows itself. */
export function ttlSweepJob (state: KitState): BuiltInJob | undefined {
  if (databaseExpiresRows(state) || expiringFields().length === 0) return undefined
  return {
    name: TTL_JOB_NAME,
    options: { description: 'Deletes rows whose ttlSeconds has passed (PostgreSQL)' },
    method: async () => {
      const counts: string[] = []
      for (const { className, field, ttlSeconds } of expiringFields()) {
        const deleted = await deleteExpiredRows(state, className, field, ttlSeconds)
        if (deleted > 0) counts.push(`${className}.${field}: ${deleted}`)
      }
      await pruneOwnStatus(TTL_JOB_NAME)
      return counts.length > 0 ? `deleted expired rows (${counts.join(', ')})` : 'no expired rows'
    }
  }
}

/** A built-in job's own _JobStatus rows older than a day go (the sweeps run often; nobody reads old runs). */
export async function pruneOwnStatus (jobName: string): Promise<void> {
  const old = await new Parse.Query('_JobStatus').equalTo('jobName', jobName)
    .lessThan('createdAt', new Date(Date.now() - OWN_STATUS_KEPT_MS)).limit(1000).find({ useMasterKey: true })
  if (old.length > 0) await Parse.Object.destroyAll(old, { useMasterKey: true })
}

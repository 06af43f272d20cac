// Runs whose _JobStatus document says "running" but that hold no lease, on
// MongoDB (see ../postgres/unleased-runs.ts): they are listed through a
// partial index on the running documents, and each due one is marked failed by
// a findOneAndUpdate that still requires "running", so one instance reports it.
import type { Db } from 'mongodb'
import type { UnleasedRun } from '../lease-claim.js'

const INDEX = 'fpk_job_status_running'

interface JobStatusDocument { _id: string, jobName: string, status: string, params?: Record<string, unknown>, source?: string, _created_at: Date }

function statuses (db: Db) {
  return db.collection<JobStatusDocument>('_JobStatus')
}

export async function ensureMongoRunningIndex (db: Db): Promise<void> {
  await statuses(db).createIndex({ _created_at: 1 }, { name: INDEX, partialFilterExpression: { status: 'running' } })
}

/** Up to `limit` running documents of these jobs with no lease, oldest first: only their ids (nothing is taken). */
export async function findUnleasedMongoRuns (db: Db, jobNames: string[], limit: number): Promise<string[]> {
  if (jobNames.length === 0) return []
  const running = await statuses(db).find({ status: 'running', jobName: { $in: jobNames } }, { projection: { _id: 1 } })
    .sort({ _created_at: 1 }).limit(limit).toArray()
  const ids = running.map(({ _id: id }) => id)
  const leased = await leasedAmong(db, ids)
  return ids.filter((id) => !leased.has(id))
}

/** Marks failed and returns those of these runs whose document still says "running" with no lease. */
export async function takeUnleasedMongoRuns (db: Db, jobIds: string[], message: string): Promise<UnleasedRun[]> {
  const leased = await leasedAmong(db, jobIds)
  const taken: UnleasedRun[] = []
  for (const id of jobIds) {
    if (leased.has(id)) continue
    const now = new Date()
    const row = await statuses(db).findOneAndUpdate({ _id: id, status: 'running' }, { $set: { status: 'failed', message, finishedAt: now, _updated_at: now } })
    if (row) taken.push({ jobId: id, jobName: row.jobName, params: row.params ?? {}, source: row.source })
  }
  return taken
}

async function leasedAmong (db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const leases = await db.collection<{ _id: string }>('fpk_job_run_leases').find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()
  return new Set(leases.map(({ _id: id }) => id))
}

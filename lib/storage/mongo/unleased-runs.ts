// Runs whose _JobStatus document says "running" but that hold no lease, on
// MongoDB (see ../postgres/unleased-runs.ts): the old ones are found through a
// partial index on the running documents, and each is marked failed by a
// findOneAndUpdate that still requires "running", so one instance reports it.
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

export async function takeUnleasedMongoRuns (db: Db, jobNames: string[], olderThanMs: number, limit: number, message: string): Promise<UnleasedRun[]> {
  if (jobNames.length === 0) return []
  const old = await statuses(db).find({ status: 'running', _created_at: { $lt: new Date(Date.now() - olderThanMs) }, jobName: { $in: jobNames } }, { projection: { _id: 1 } })
    .sort({ _created_at: 1 }).limit(limit).toArray()
  if (old.length === 0) return []
  const ids = old.map(({ _id: id }) => id)
  const leased = new Set((await db.collection<{ _id: string }>('fpk_job_run_leases').find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map(({ _id: id }) => id))
  const taken: UnleasedRun[] = []
  for (const id of ids) {
    if (leased.has(id)) continue
    const now = new Date()
    const row = await statuses(db).findOneAndUpdate({ _id: id, status: 'running' }, { $set: { status: 'failed', message, finishedAt: now, _updated_at: now } })
    if (row) taken.push({ jobId: id, jobName: row.jobName, params: row.params ?? {}, source: row.source })
  }
  return taken
}

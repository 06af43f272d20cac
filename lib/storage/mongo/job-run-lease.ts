// Run leases on MongoDB: one document per job run going on, renewed by the
// instance running it. findOneAndUpdate takes an expired one atomically, so a
// lost run is reported by one instance only.
import type { Db } from 'mongodb'
import type { RunLease } from '../lease-claim.js'

const COLLECTION = 'fpk_job_run_leases'

interface RunLeaseDocument { _id: string, jobName: string, holder: string, params: Record<string, unknown>, attempt: number, startedAt: Date, leaseUntil: Date, marking?: boolean }

function runs (db: Db) {
  return db.collection<RunLeaseDocument>(COLLECTION)
}

export async function holdMongoRun (db: Db, lease: Omit<RunLease, 'startedAt'>, leaseMs: number): Promise<void> {
  await runs(db).updateOne({ _id: lease.jobId }, {
    $set: { jobName: lease.jobName, holder: lease.holder, params: lease.params ?? {}, attempt: lease.attempt, leaseUntil: new Date(Date.now() + leaseMs), marking: lease.marking === true },
    $setOnInsert: { startedAt: new Date() }
  }, { upsert: true })
}

export async function holdMongoRuns (db: Db, leases: Array<Omit<RunLease, 'startedAt'>>, leaseMs: number): Promise<void> {
  for (const lease of leases) await holdMongoRun(db, lease, leaseMs)
}

export async function renewMongoRuns (db: Db, holder: string, leaseMs: number): Promise<void> {
  await runs(db).updateMany({ holder }, { $set: { leaseUntil: new Date(Date.now() + leaseMs) } })
}

export async function attemptMongoRun (db: Db, jobId: string, attempt: number): Promise<void> {
  await runs(db).updateOne({ _id: jobId }, { $set: { attempt } })
}

export async function dropMongoRun (db: Db, jobId: string): Promise<void> {
  await runs(db).deleteOne({ _id: jobId })
}

export async function dropMongoRuns (db: Db, jobIds: string[]): Promise<void> {
  if (jobIds.length > 0) await runs(db).deleteMany({ _id: { $in: jobIds } })
}

/** Takes expired leases for their report: each held holdMs more (one taker), dropped once reported. */
export async function takeLostMongoRuns (db: Db, limit: number, holdMs: number): Promise<RunLease[]> {
  const taken: RunLease[] = []
  while (taken.length < limit) {
    const found = await runs(db).findOneAndUpdate({ leaseUntil: { $lt: new Date() } }, { $set: { leaseUntil: new Date(Date.now() + holdMs) } })
    if (!found) break
    const { _id: jobId } = found
    taken.push({ jobId, jobName: found.jobName, holder: found.holder, params: found.params, attempt: found.attempt, startedAt: found.startedAt, marking: found.marking === true })
  }
  return taken
}

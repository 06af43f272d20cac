// Schedule leases on MongoDB: one document per schedule in a collection of the
// kit's own, claimed with findOneAndUpdate, which matches and writes as one
// atomic step, so one tick is claimed once however many instances try.
import type { Db } from 'mongodb'
import type { LeaseClaim } from '../lease-claim.js'

const COLLECTION = 'fpk_job_leases'

interface LeaseDocument { _id: string, lastTick: Date, holder?: string, leaseUntil?: Date | null }

function leases (db: Db) {
  return db.collection<LeaseDocument>(COLLECTION)
}

export async function claimMongoTick (db: Db, key: string, tick: Date, holder: string, leaseMs: number): Promise<LeaseClaim> {
  await leases(db).updateOne({ _id: key }, { $setOnInsert: { lastTick: new Date(0) } }, { upsert: true })
    .catch((error: { code?: number }) => { if (error.code !== 11000) throw error })
  const now = new Date()
  const claimed = await leases(db).findOneAndUpdate(
    { _id: key, lastTick: { $lt: tick }, $or: [{ leaseUntil: null }, { leaseUntil: { $lt: now } }] },
    { $set: { lastTick: tick, holder, leaseUntil: new Date(now.getTime() + leaseMs) } })
  if (claimed) return 'claimed'
  const skipped = await leases(db).findOneAndUpdate({ _id: key, lastTick: { $lt: tick } }, { $set: { lastTick: tick } })
  return skipped ? 'busy' : 'taken'
}

export async function renewMongoLease (db: Db, key: string, holder: string, leaseMs: number): Promise<void> {
  await leases(db).updateOne({ _id: key, holder, leaseUntil: { $ne: null } }, { $set: { leaseUntil: new Date(Date.now() + leaseMs) } })
}

export async function releaseMongoLease (db: Db, key: string, holder: string): Promise<void> {
  await leases(db).updateOne({ _id: key, holder }, { $set: { leaseUntil: null } })
}

export async function lastMongoTick (db: Db, key: string): Promise<Date | undefined> {
  const found = await leases(db).findOne({ _id: key })
  return found && found.lastTick.getTime() > 0 ? found.lastTick : undefined
}

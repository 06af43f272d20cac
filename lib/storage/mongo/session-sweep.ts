// One batch of the expired-session sweep on MongoDB: the ids of at most
// `batchSize` expired sessions, then one deleteMany of those ids (still
// expired, in case one was renewed in between). Documents with no expiresAt
// (expireInactiveSessions: false) never match.
import type { Db } from 'mongodb'

export async function deleteExpiredMongoSessions (db: Db, batchSize: number): Promise<number> {
  const sessions = db.collection<{ _id: string, expiresAt?: Date }>('_Session')
  const expired = { expiresAt: { $lt: new Date() } }
  const ids = (await sessions.find(expired, { projection: { _id: 1 }, limit: batchSize }).toArray()).map(({ _id: id }) => id)
  if (ids.length === 0) return 0
  const { deletedCount } = await sessions.deleteMany({ _id: { $in: ids }, ...expired })
  return deletedCount
}

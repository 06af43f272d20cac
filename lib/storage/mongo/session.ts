// A MongoDB transaction is opened on the server by its first command, and the
// driver counts it as open as soon as that command is sent. Commands sent at
// once inside a transaction (Parse.Object.saveAll, a transactional /batch) go
// out on several pooled connections; one that reaches the server before the
// first fails with NoSuchTransaction (251), which Parse reports as an opaque
// "Database error". Opening the transaction with one small read, before the
// session is handed out, leaves nothing to race.

import type { MongoAdapter, MongoTransactionalSession } from '../../parse/internals.js'
import { mongoCollectionPrefix } from '../../parse/adapter-internals.js'

export async function openOnServer (adapter: object, opened: unknown): Promise<void> {
  const { database } = adapter as MongoAdapter
  const session = opened as MongoTransactionalSession
  try {
    // _SCHEMA exists once Parse has started; the transaction never writes to it.
    await database.collection(`${mongoCollectionPrefix(adapter)}_SCHEMA`).findOne({}, { session, projection: { _id: 1 } })
  } catch (error) {
    await session.abortTransaction().catch(() => {})
    await session.endSession().catch(() => {})
    throw error
  }
}

/**
 * Before Parse aborts a transaction. The driver ignores a failed
 * abortTransaction (as the MongoDB specifications say) and returns the
 * session's server session to its pool; after a network error it drops that
 * server session itself, after a timeout (timeoutMS) it does not. A server
 * that stopped answering may then still hold the old transaction open on it
 * when it is back, and the next transaction there would meet it. Marked
 * dirty, the server session is dropped instead (aborts are rare: failures and
 * conflicts).
 */
export function dropAfterAbort (opened: unknown): void {
  const session = opened as MongoTransactionalSession
  if (session.hasEnded) return
  session.serverSession.isDirty = true
}

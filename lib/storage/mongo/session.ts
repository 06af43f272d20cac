// A MongoDB transaction is opened on the server by its first command, and the
// driver counts it as open as soon as that command is sent. Commands sent at
// once inside a transaction (Parse.Object.saveAll, a transactional /batch) go
// out on several pooled connections; one that reaches the server before the
// first fails with NoSuchTransaction (251), which Parse reports as an opaque
// "Database error". Opening the transaction with one small read, before the
// session is handed out, leaves nothing to race.

import type { MongoAdapter, MongoTransactionalSession } from '../../parse/internals.js'

export async function openOnServer (adapter: object, opened: unknown): Promise<void> {
  const { database, _collectionPrefix } = adapter as MongoAdapter
  const session = opened as MongoTransactionalSession
  try {
    // _SCHEMA exists once Parse has started; the transaction never writes to it.
    await database.collection(`${_collectionPrefix ?? ''}_SCHEMA`).findOne({}, { session, projection: { _id: 1 } })
  } catch (error) {
    await session.abortTransaction().catch(() => {})
    await session.endSession().catch(() => {})
    throw error
  }
}

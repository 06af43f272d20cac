// A MongoDB transaction is opened on the server by its first command, and the
// driver counts it as open as soon as that command is sent. Commands sent at
// once inside a transaction (Parse.Object.saveAll, a transactional /batch) go
// out on several pooled connections; one that reaches the server before the
// first fails with NoSuchTransaction (251), which Parse reports as an opaque
// "Database error". Opening the transaction with one small read, before the
// session is handed out, leaves nothing to race.

interface Session {
  abortTransaction (): Promise<unknown>
  endSession (): Promise<unknown>
}
interface Adapter {
  database: { collection (name: string): { findOne (filter: object, options: object): Promise<unknown> } }
  _collectionPrefix?: string
}

export async function openOnServer (adapter: object, session: unknown): Promise<void> {
  const { database, _collectionPrefix } = adapter as Adapter
  try {
    // _SCHEMA exists once Parse has started; the transaction never writes to it.
    await database.collection(`${_collectionPrefix ?? ''}_SCHEMA`).findOne({}, { session, projection: { _id: 1 } })
  } catch (error) {
    const open = session as Session
    await open.abortTransaction().catch(() => {})
    await open.endSession().catch(() => {})
    throw error
  }
}

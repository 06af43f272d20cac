// A PostgreSQL transaction for Parse's adapter, with the shape Parse's own
// commit and abort expect ({t, batch, resolve, result}). Parse's version keeps
// the tx() promise in `result` with no handler and only resolves once BEGIN
// has run: when the database is gone, BEGIN fails, `result` rejects unhandled
// (Node exits) and the returned promise never settles (the caller hangs).
// Here the failure of BEGIN rejects the returned promise, and `result` is
// always handled (commit and abort still hand its outcome to their callers).

import type { PostgresTransactionalSession } from '../../parse/internals.js'
import { pgDatabase } from '../../parse/adapter-internals.js'

export function openTransaction (adapter: object): Promise<PostgresTransactionalSession> {
  const client = pgDatabase(adapter)!
  return new Promise((resolve, reject) => {
    const session = { batch: [] as unknown[] } as unknown as PostgresTransactionalSession
    session.result = client.tx((t) => {
      session.t = t
      session.promise = new Promise((settle) => { session.resolve = settle }) // eslint-disable-line promise/param-names -- resolve names the outer promise's
      resolve(session)
      return session.promise
    })
    // Before BEGIN succeeded this settles the caller; afterwards commit/abort report it.
    session.result.catch(reject)
  })
}

// Inside a transaction, PostgreSQL reads must run on the transaction's own
// connection (to see its writes). Rows of versioned classes are also locked
// (SELECT … FOR UPDATE) until commit: concurrent transactions then queue on
// the row instead of failing the version check.

interface PgTx { any (query: string, values?: unknown): Promise<unknown> }

/** `this` for a Parse adapter method, with its queries sent to the transaction. */
export function onTransaction (adapter: object, session: unknown, lockRows: boolean): object {
  const tx = (session as { t: PgTx }).t
  const client = lockRows
    ? new Proxy(tx, {
      get (target, property, receiver) {
        if (property !== 'any') return Reflect.get(target, property, receiver)
        return (query: string, values?: unknown) => target.any(/^\s*SELECT\b/i.test(query) ? `${query} FOR UPDATE` : query, values)
      }
    })
    : tx
  return Object.create(adapter, { _client: { value: client } })
}

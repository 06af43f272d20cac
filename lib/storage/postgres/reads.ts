// Inside a transaction, PostgreSQL reads must run on the transaction's own
// connection (to see its writes). Rows a find returns from a versioned class
// are also locked (SELECT … FOR UPDATE) until commit: concurrent transactions
// then queue on the row instead of failing the version check.
//
// Two rules keep the lock safe:
// - only a plain find locks: PostgreSQL refuses FOR UPDATE on SELECT DISTINCT
//   and grouped aggregates (what Parse builds for distinct and aggregate), and
//   counting locks nothing;
// - rows are locked in objectId order (PostgreSQL locks rows in the order the
//   query emits them), so two transactions taking the same rows in another
//   order queue instead of deadlocking.

import type { PostgresTransactionalSession } from '../../parse/internals.js'
import { withPgQueries } from '../../parse/adapter-internals.js'

/** `this` for a Parse adapter method, with its queries sent to the transaction. */
export function onTransaction (adapter: object, session: unknown, lockRows: boolean): object {
  const tx = (session as PostgresTransactionalSession).t
  const client = lockRows
    ? new Proxy(tx, {
      get (target, property, receiver) {
        if (property !== 'any') return Reflect.get(target, property, receiver)
        return (query: string, values?: unknown) => target.any(lockingQuery(query), values)
      }
    })
    : tx
  return withPgQueries(adapter, client)
}

// Parse's find: SELECT {columns} FROM $1:name [WHERE …] [ORDER BY …] [LIMIT $n] [OFFSET $n]
const PLAIN_SELECT = /^\s*SELECT\s+(?!DISTINCT\b)/i
const TAIL = /(\s+LIMIT\s+\$\d+)?(\s+OFFSET\s+\$\d+)?\s*$/i
const ORDER_BY = /\sORDER\s+BY\s/i

/** The find with FOR UPDATE, its rows taken in objectId order (after the caller's own sort, if any). */
export function lockingQuery (query: string): string {
  if (!PLAIN_SELECT.test(query) || /\bGROUP\s+BY\b/i.test(query)) return query
  const tail = TAIL.exec(query)!
  const head = query.slice(0, tail.index)
  const order = ORDER_BY.test(head) ? `${head}, "objectId"` : `${head} ORDER BY "objectId"`
  return `${order}${tail[0]} FOR UPDATE`
}

// The ambient transaction: one per @Transactional / withTransaction call,
// carried by AsyncLocalStorage into every async step its body starts.
import { AsyncLocalStorage } from 'node:async_hooks'

export interface TransactionScope {
  /** The storage adapter's own transactional session (pg-promise tx handle, or MongoDB ClientSession). */
  session: unknown
  /** Work to do once the transaction has committed (never for a rolled-back attempt). */
  afterCommit: Array<() => unknown>
  /** Set when a statement of this transaction hit a deadlock or serialization failure: the run is lost, whatever the body answers. */
  conflict?: Error
}

export const transactionScope = new AsyncLocalStorage<TransactionScope>()

/** Parse's bookkeeping classes never join a transaction. */
export const NEVER_JOIN = new Set(['_SCHEMA', '_Idempotency', '_Hooks', '_JobStatus', '_JobSchedule', '_GlobalConfig', '_PushStatus', '_Audience', '_GraphQLConfig'])

export function sessionFor (className: string): unknown {
  if (NEVER_JOIN.has(className)) return undefined
  return transactionScope.getStore()?.session
}

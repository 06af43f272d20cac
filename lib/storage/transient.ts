// Which failures are worth re-running a transaction body for: deadlocks,
// serialization failures and MongoDB's transient transaction errors. Parse
// rewraps all of them as its generic code 1, so the storage adapter wrapper
// asks this where the adapter raises them (lib/storage/adapter.ts).

const POSTGRES_TRANSIENT = new Set([
  '40001', // serialization_failure
  '40P01' // deadlock_detected
])
const MONGO_TRANSIENT_CODES = new Set([112, 251]) // WriteConflict, NoSuchTransaction

/** The database could not be reached: not a conflict between transactions, and no re-run helps. */
const MONGO_UNREACHABLE = /^Mongo(Network|NetworkTimeout|ServerSelection|WaitQueueTimeout|OperationTimeout)Error$/

export function isTransient (error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { name?: unknown, code?: unknown, hasErrorLabel?: (label: string) => boolean, errorLabels?: string[], underlyingError?: unknown, cause?: unknown, first?: unknown }
    if (typeof candidate.name === 'string' && MONGO_UNREACHABLE.test(candidate.name)) return false
    if (typeof candidate.code === 'string' && POSTGRES_TRANSIENT.has(candidate.code)) return true
    if (typeof candidate.code === 'number' && MONGO_TRANSIENT_CODES.has(candidate.code) && typeof candidate.hasErrorLabel === 'function') return true
    if (typeof candidate.hasErrorLabel === 'function' && candidate.hasErrorLabel('TransientTransactionError')) return true
    if (Array.isArray(candidate.errorLabels) && candidate.errorLabels.includes('TransientTransactionError')) return true
    // pg-promise reports a failed batch (the transaction's writes, awaited at commit) by its first error.
    current = candidate.underlyingError ?? candidate.cause ?? candidate.first
  }
  return false
}

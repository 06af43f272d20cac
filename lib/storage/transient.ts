// Which failures are worth re-running a transaction body for. Parse maps
// MongoDB's transient errors to its generic code 1, so we look underneath.

const POSTGRES_TRANSIENT = new Set([
  '40001', // serialization_failure
  '40P01' // deadlock_detected
])
const MONGO_TRANSIENT_CODES = new Set([112 /* WriteConflict */, 251 /* NoSuchTransaction */])

export function isTransient (error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { code?: unknown, hasErrorLabel?: (label: string) => boolean, errorLabels?: string[], underlyingError?: unknown, cause?: unknown }
    if (typeof candidate.code === 'string' && POSTGRES_TRANSIENT.has(candidate.code)) return true
    if (typeof candidate.code === 'number' && MONGO_TRANSIENT_CODES.has(candidate.code) && typeof candidate.hasErrorLabel === 'function') return true
    if (typeof candidate.hasErrorLabel === 'function' && candidate.hasErrorLabel('TransientTransactionError')) return true
    if (Array.isArray(candidate.errorLabels) && candidate.errorLabels.includes('TransientTransactionError')) return true
    current = candidate.underlyingError ?? candidate.cause
  }
  return false
}

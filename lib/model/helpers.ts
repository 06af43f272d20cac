// Small helpers handlers use every day.

/** The most rows one list endpoint returns; larger limits are clamped to it. */
export const MAX_QUERY_LIMIT = 1000

/**
 * A list endpoint's `limit` parameter as a whole number from 0 to
 * MAX_QUERY_LIMIT: `fallback` (clamped the same way) when absent, empty or not
 * a number ('abc'); a fraction is rounded down.
 */
export function clampLimit (requested: unknown, fallback = 100): number {
  const number = typeof requested === 'string' && requested.trim() === '' ? Number.NaN : Number(requested ?? Number.NaN)
  const chosen = Number.isFinite(number) ? number : Number.isFinite(fallback) ? fallback : 100
  return Math.min(Math.max(Math.floor(chosen), 0), MAX_QUERY_LIMIT)
}

/** Resolves to [error, undefined] or [undefined, result] instead of rejecting. */
export async function catchError<T, E = unknown> (promise: PromiseLike<T>): Promise<[E, undefined] | [undefined, T]> {
  try {
    return [undefined, await promise]
  } catch (error) {
    return [error as E, undefined]
  }
}

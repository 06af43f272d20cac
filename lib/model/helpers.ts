// Small helpers handlers use every day.

/** The most rows one list endpoint returns; larger limits are clamped to it. */
export const MAX_QUERY_LIMIT = 1000

/** A list endpoint's `limit` parameter: `fallback` when absent, never below 0 nor above MAX_QUERY_LIMIT. */
export function clampLimit (requested: unknown, fallback = 100): number {
  return Math.min(Math.max(Number(requested ?? fallback), 0), MAX_QUERY_LIMIT)
}

/** Resolves to [error, undefined] or [undefined, result] instead of rejecting. */
export async function catchError<T, E = unknown> (promise: PromiseLike<T>): Promise<[E, undefined] | [undefined, T]> {
  try {
    return [undefined, await promise]
  } catch (error) {
    return [error as E, undefined]
  }
}

// Small helpers handlers use every day.

/** The most rows one list endpoint returns; larger limits are clamped to it. */
export const MAX_QUERY_LIMIT = 1000

/** Resolves to [error, undefined] or [undefined, result] instead of rejecting. */
export async function catchError<T, E = unknown> (promise: PromiseLike<T>): Promise<[E, undefined] | [undefined, T]> {
  try {
    return [undefined, await promise]
  } catch (error) {
    return [error as E, undefined]
  }
}

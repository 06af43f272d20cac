// The shape checks of parsed JSON (a where, a pipeline, a save, a subscription)
// ask one question of a value: is it a JSON object, not null and not a list.

/** Whether a parsed JSON value is an object (not null, not a list). */
export function isJsonObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

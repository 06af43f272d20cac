// Parse Server walks a request body recursively (its keyword scan, its
// transforms): a save nested a few thousand levels deep overflows its stack and
// answers 500, inside a /batch "Maximum call stack size exceeded". The mount
// refuses such bodies first. 64 levels is also as deep as the NUL check looks
// (storage/nul.ts), so every string of a body Parse is given has been checked.

/** Levels of objects and arrays a body under the mount may have (the body itself is level 1). */
export const MAX_BODY_DEPTH = 64

/** True when `value` has objects or arrays nested more than `limit` levels deep. */
export function nestedDeeperThan (value: unknown, limit: number = MAX_BODY_DEPTH): boolean {
  return deeper(value, 1, limit)
}

function deeper (value: unknown, level: number, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false
  if (level > limit) return true
  if (Array.isArray(value)) {
    for (const item of value) if (deeper(item, level + 1, limit)) return true
    return false
  }
  for (const key in value) {
    if (deeper((value as Record<string, unknown>)[key], level + 1, limit)) return true
  }
  return false
}

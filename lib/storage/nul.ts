// PostgreSQL cannot store the NUL character (U+0000) in text or jsonb and
// fails the whole statement ("invalid message format"); MongoDB refuses it in
// field names. The kit refuses it everywhere, on both databases, as bad input.
import Parse from 'parse/node'

const NUL = '\u0000'
const MAX_DEPTH = 64

/** The path of the first string (or key) in `value` holding a NUL character, if any. */
export function nulPath (value: unknown, path = '', depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path || 'value' : undefined
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return undefined
  if (value instanceof Date || ArrayBuffer.isView(value)) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = childPath(value[i], path, i, depth)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    if (key.includes(NUL)) return join(path, key.replaceAll(NUL, '\\u0000'))
    const found = childPath((value as Record<string, unknown>)[key], path, key, depth)
    if (found !== undefined) return found
  }
  return undefined
}

/** A member's path is only spelled out when it is needed: strings (most members) are checked in place. */
function childPath (child: unknown, path: string, key: string | number, depth: number): string | undefined {
  if (typeof child === 'string') return child.includes(NUL) ? join(path, key) : undefined
  if (child === null || typeof child !== 'object') return undefined
  return nulPath(child, join(path, key), depth + 1)
}

/** Segments joined by "/", as input validation names a field (`lines/0/product`). */
function join (path: string, key: string | number): string {
  return path === '' ? String(key) : `${path}/${key}`
}

/** Throws 142 naming the field when any string in `value` holds a NUL character. */
export function refuseNul (value: unknown, prefix = ''): void {
  const path = nulPath(value, prefix)
  if (path !== undefined) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${path} must not contain the NUL character (\\u0000)`)
  }
}

/**
 * `value` with every NUL character in its strings made U+FFFD (a copy, only
 * where one is found): for Parse's own job bookkeeping, whose writes nothing
 * catches, where a refusal would leave a run "running" (see adapter.ts).
 */
export function replaceNul (value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.includes(NUL) ? value.replaceAll(NUL, '\uFFFD') : value
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || value instanceof Date || ArrayBuffer.isView(value)) return value
  if (nulPath(value) === undefined) return value
  if (Array.isArray(value)) return value.map((item) => replaceNul(item, depth + 1))
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replaceAll(NUL, '\uFFFD'), replaceNul(item, depth + 1)]))
}

// PostgreSQL keeps the first 63 bytes of an identifier and silently drops the
// rest. A name the kit gives longer than that would be stored cut short, and
// the next boot, not finding its own name, would drop the object and make it
// again. Long names are shortened here instead, the same way at every boot:
// a readable start, then a short hash of the whole name (two long names that
// share their first 54 bytes still differ).
import { createHash } from 'node:crypto'

/** NAMEDATALEN - 1. */
export const PG_NAME_BYTES = 63
const HASH_CHARS = 8

/** The name as the kit gives it in PostgreSQL: unchanged when it fits `room` bytes. */
export function pgIdentifier (name: string, room = PG_NAME_BYTES): string {
  if (Buffer.byteLength(name) <= room) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_CHARS)
  return `${leadingBytes(name, room - HASH_CHARS - 1)}_${hash}`
}

/** The longest start of `text` that fits `bytes` bytes of UTF-8, never splitting a character (as PostgreSQL cuts a long name). */
export function leadingBytes (text: string, bytes: number): string {
  let used = 0
  let end = 0
  for (const char of text) {
    const size = Buffer.byteLength(char)
    if (used + size > bytes) break
    used += size
    end += char.length
  }
  return text.slice(0, end)
}

/** The kit's name for the CHECK constraint of a field's rules. */
export function checkConstraintName (className: string, field: string): string {
  return pgIdentifier(`${className}_${field}_check`)
}

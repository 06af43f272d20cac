// The opaque cursor of a keyset page: the last row's sort value and objectId,
// signed with an HMAC keyed from the master key and bound to the list it came
// from (class, sort field and direction, the query's own conditions). A cursor
// edited by hand, cut short, or taken from another list or filter does not
// verify, and the list refuses it as bad input.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { getKitConfig } from '../config.js'

/** The last row's position: its sort value (a Date as its ISO text) and objectId. */
export interface CursorPosition {
  kind: 'date' | 'number' | 'string'
  value: string | number
  objectId: string
}

const KINDS = { d: 'date', n: 'number', s: 'string' } as const
const LETTERS = { date: 'd', number: 'n', string: 's' } as const
const MAC_BYTES = 16

/** What a cursor is bound to: the same list gives the same text. */
export function cursorBinding (className: string, sortBy: string, descending: boolean, where: unknown): string {
  const conditions = createHash('sha256').update(canonicalJSON(where ?? {})).digest('base64url')
  return `${className}\n${sortBy}\n${descending ? 'desc' : 'asc'}\n${conditions}`
}

export function encodeCursor (position: CursorPosition, binding: string): string {
  const payload = Buffer.from(JSON.stringify([LETTERS[position.kind], position.value, position.objectId])).toString('base64url')
  return `${payload}.${mac(payload, binding).toString('base64url')}`
}

/** The position a cursor carries, or undefined when it is not one this list issued. */
export function decodeCursor (token: string, binding: string): CursorPosition | undefined {
  const dot = token.indexOf('.')
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined
  const payload = token.slice(0, dot)
  const given = Buffer.from(token.slice(dot + 1), 'base64url')
  const expected = mac(payload, binding)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(decoded) || decoded.length !== 3) return undefined
  const [letter, value, objectId] = decoded as [unknown, unknown, unknown]
  const kind = typeof letter === 'string' && Object.hasOwn(KINDS, letter) ? KINDS[letter as keyof typeof KINDS] : undefined
  if (kind === undefined || typeof objectId !== 'string' || objectId === '') return undefined
  if (kind === 'number' ? typeof value !== 'number' || !Number.isFinite(value) : typeof value !== 'string') return undefined
  if (kind === 'date' && Number.isNaN(Date.parse(value as string))) return undefined
  return { kind, value: value as string | number, objectId }
}

function mac (payload: string, binding: string): Buffer {
  return createHmac('sha256', cursorKey()).update(`${binding}\n${payload}`).digest().subarray(0, MAC_BYTES)
}

/** The signing key, derived from the master key once per master key (not per page). */
let derived: { masterKey: string, key: Buffer } | undefined
function cursorKey (): Buffer {
  const masterKey = getKitConfig().masterKey
  if (!masterKey) throw new Error('pageRows: no master key is configured, and cursors are signed with a key derived from it')
  if (derived?.masterKey !== masterKey) derived = { masterKey, key: createHmac('sha256', masterKey).update('fastify-parse-kit page cursor').digest() }
  return derived.key
}

/** JSON with object keys in order, so equal conditions hash alike however they were built. */
function canonicalJSON (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJSON((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

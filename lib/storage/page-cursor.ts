// The opaque cursor of a keyset page: the last row's sort value and objectId,
// sealed (AES-256-GCM) with a key derived from the master key and bound to
// the list it came from (class, sort field and direction, the query's own
// conditions). Sealed, not only signed: the sort value may be a field the
// list does not answer (its `returns` or `keys` leave it out), and a cursor
// travels in URLs and their logs. A cursor edited by hand, cut short, or
// taken from another list or filter does not open, and the list refuses it
// as bad input.
import { createCipheriv, createDecipheriv, createHash, createHmac } from 'node:crypto'
import { getKitConfig } from '../config.js'

/** The last row's position: its sort value (a Date as its ISO text) and objectId. */
export interface CursorPosition {
  kind: 'date' | 'number' | 'string'
  value: string | number
  objectId: string
  /** A Date held to the millisecond that a row next to it shares: the list reads it as stored (to the microsecond) when the cursor is used. */
  shared?: true
}

const KINDS = { d: 'date', n: 'number', s: 'string' } as const
const LETTERS = { date: 'd', number: 'n', string: 's' } as const
/** The letter of a date position another row shares its millisecond with. */
const SHARED_DATE = 'D'
const IV_BYTES = 12
const TAG_BYTES = 16

/** What a cursor is bound to: the same list gives the same text. */
export function cursorBinding (className: string, sortBy: string, descending: boolean, where: unknown): string {
  const conditions = createHash('sha256').update(canonicalJSON(where ?? {})).digest('base64url')
  return `${className}\n${sortBy}\n${descending ? 'desc' : 'asc'}\n${conditions}`
}

export function encodeCursor (position: CursorPosition, binding: string): string {
  const plain = Buffer.from(JSON.stringify([position.shared ? SHARED_DATE : LETTERS[position.kind], position.value, position.objectId]))
  const keys = cursorKeys()
  // The nonce is a MAC of what it seals: the same page gives the same cursor, and two positions never share one.
  const iv = createHmac('sha256', keys.nonce).update(binding).update('\n').update(plain).digest().subarray(0, IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keys.seal, iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(binding))
  const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final()])
  return `${sealed.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`
}

/** The position a cursor carries, or undefined when it is not one this list issued. */
export function decodeCursor (token: string, binding: string): CursorPosition | undefined {
  const dot = token.indexOf('.')
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined
  const sealed = Buffer.from(token.slice(0, dot), 'base64url')
  const tag = Buffer.from(token.slice(dot + 1), 'base64url')
  if (sealed.length <= IV_BYTES || tag.length !== TAG_BYTES) return undefined
  let decoded: unknown
  try {
    const decipher = createDecipheriv('aes-256-gcm', cursorKeys().seal, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(binding)).setAuthTag(tag)
    const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES)), decipher.final()])
    decoded = JSON.parse(plain.toString('utf8'))
  } catch {
    return undefined // not sealed by this list (final() checks the tag), or not JSON
  }
  if (!Array.isArray(decoded) || decoded.length !== 3) return undefined
  const [letter, value, objectId] = decoded as [unknown, unknown, unknown]
  const shared = letter === SHARED_DATE
  const kind = shared ? 'date' : typeof letter === 'string' && Object.hasOwn(KINDS, letter) ? KINDS[letter as keyof typeof KINDS] : undefined
  if (kind === undefined || typeof objectId !== 'string' || objectId === '') return undefined
  if (kind === 'number' ? typeof value !== 'number' || !Number.isFinite(value) : typeof value !== 'string') return undefined
  if (kind === 'date' && Number.isNaN(Date.parse(value as string))) return undefined
  return { kind, value: value as string | number, objectId, ...(shared ? { shared } : {}) }
}

/** The sealing key and the nonce key, derived from the master key once per master key (not per page). */
let derived: { masterKey: string, seal: Buffer, nonce: Buffer } | undefined
function cursorKeys (): { seal: Buffer, nonce: Buffer } {
  const masterKey = getKitConfig().masterKey
  if (!masterKey) throw new Error('pageRows: no master key is configured, and cursors are sealed with a key derived from it')
  if (derived?.masterKey !== masterKey) {
    derived = {
      masterKey,
      seal: createHmac('sha256', masterKey).update('fastify-parse-kit page cursor').digest(),
      nonce: createHmac('sha256', masterKey).update('fastify-parse-kit page cursor nonce').digest()
    }
  }
  return derived
}

/** JSON with object keys in order, so equal conditions hash alike however they were built. */
function canonicalJSON (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJSON((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

// Errors keep Parse's wire shape {code, error} and its status mapping.
import Parse from 'parse/node'

/** A version-checked save found a stale version. */
export const CONFLICT = 5001
/** The database cannot be reached (answered 503 with Retry-After; see storage/unavailable.ts). */
export const DATABASE_UNAVAILABLE = 5003
export const CONFLICT_MESSAGE = 'Someone else changed this record while you were working on it. Reload it and try again.'

export interface ParseErrorBody { code: number, error: string }

/** Parse's own mapping (middlewares.handleParseErrors): internal → 500, not found → 404, the rest → 400. */
export function statusForParseCode (code: number): number {
  if (code === Parse.Error.INTERNAL_SERVER_ERROR) return 500
  if (code === Parse.Error.OBJECT_NOT_FOUND) return 404
  if (code === CONFLICT) return 409
  if (code === DATABASE_UNAVAILABLE) return 503
  return 400
}

export function isParseError (error: unknown): error is { code: number, message: string } {
  return typeof error === 'object' && error !== null &&
    typeof (error as { code?: unknown }).code === 'number' &&
    typeof (error as { message?: unknown }).message === 'string'
}

export function parseError (code: number, message: string): InstanceType<typeof Parse.Error> {
  return new Parse.Error(code, message)
}

/** A Parse error whose HTTP status is not Parse's default mapping (e.g. 429 for a rate limit). */
export class KitError extends Parse.Error {
  readonly statusCode: number
  constructor (code: number, message: string, statusCode: number) {
    super(code, message)
    this.statusCode = statusCode
  }
}

export function statusForError (error: { code: number, statusCode?: unknown }): number {
  return typeof error.statusCode === 'number' ? error.statusCode : statusForParseCode(error.code)
}

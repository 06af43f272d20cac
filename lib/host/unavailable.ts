// Parse routes while the database cannot be reached: refused at once with 503
// (Parse itself would answer 500, or worse, e.g. "invalid session token"), and
// a request already inside Parse when the database went answers 503 too.
import type { FastifyReply } from 'fastify'
import type { DatabaseAvailability } from '../storage/availability.js'
import { DATABASE_BUSY, DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE, RETRY_AFTER_SECONDS } from '../storage/unavailable.js'
import { CONFLICT } from '../errors.js'

export function refuseWhileUnavailable (availability: DatabaseAvailability) {
  return async (_request: unknown, reply: FastifyReply) => {
    if (availability.reachable) return
    return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS))
      .send({ code: DATABASE_UNAVAILABLE, error: DATABASE_UNAVAILABLE_MESSAGE })
  }
}

interface ExpressResponse {
  json (body: unknown): unknown
  status (code: number): unknown
  set (name: string, value: string): unknown
}

/**
 * Express middleware in front of Parse's app: Parse maps every error code but
 * 1 and 101 to 400, so an error answer carrying DATABASE_UNAVAILABLE or
 * DATABASE_BUSY gets its 503 here, and CONFLICT its 409 (as on declared
 * endpoints). Only error answers: a row with a field named `code` is data.
 */
export function unavailableAs503 (_request: unknown, response: ExpressResponse, next: () => void): void {
  response.json = function (this: ExpressResponse & { json?: unknown, statusCode: number }, body: unknown) {
    const code = this.statusCode === 400 ? (body as { code?: unknown } | null)?.code : undefined
    if (code === DATABASE_UNAVAILABLE || code === DATABASE_BUSY) {
      this.status(503)
      this.set('Retry-After', String(RETRY_AFTER_SECONDS))
    }
    if (code === CONFLICT) this.status(409)
    // Parse's own json(), from the prototype its Express app gave the response.
    delete (this as { json?: unknown }).json
    return this.json(body)
  }
  next()
}

interface ExpressFileRequest { method: string, url: string }
interface ExpressEndingResponse extends ExpressResponse {
  statusCode: number
  headersSent: boolean
  end (...args: unknown[]): unknown
}

/**
 * Express middleware in front of Parse's app: Parse answers any failed file
 * read `404 File not found.`, also when the files adapter could not reach the
 * database (it reported the outage). Such a read answers 503 {code, error}.
 */
export function failedFileReadsAs503 (availability: DatabaseAvailability) {
  return (request: ExpressFileRequest, response: ExpressEndingResponse, next: () => void): void => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.url.includes('/files/')) return next()
    const end = response.end
    response.end = function (this: ExpressEndingResponse, ...args: unknown[]) {
      this.end = end
      // Headers already gone (a ranged read that failed midway): nothing left to change.
      // A read that ran out of time fails before the probe it started has decided: in doubt counts too.
      const unavailable = !availability.reachable || availability.inDoubt
      if (this.statusCode !== 404 || !unavailable || this.headersSent) return this.end(...args)
      this.status(503)
      this.set('Retry-After', String(RETRY_AFTER_SECONDS))
      this.set('Content-Type', 'application/json; charset=utf-8')
      return this.end(JSON.stringify({ code: DATABASE_UNAVAILABLE, error: DATABASE_UNAVAILABLE_MESSAGE }))
    }
    next()
  }
}

// HTTP details shared by the Parse mount and the declared endpoints.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Parse from 'parse/node'
import { isParseError, statusForError } from '../errors.js'
import { DatabaseUnavailableError, isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../storage/unavailable.js'

/** Parse SDKs send JSON with Content-Type text/plain; parse it as JSON, and keep plain text as text. */
export function acceptTextPlainJson (scope: FastifyInstance): void {
  scope.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim()
    if (text === '') return done(null, undefined)
    if (text.startsWith('{') || text.startsWith('[')) {
      try {
        return done(null, JSON.parse(text))
      } catch {
        return done(invalidJson(), undefined)
      }
    }
    done(null, body)
  })
}

function invalidJson (): FastifyError {
  return Object.assign(new Error('Invalid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY', name: 'FastifyError' }) as FastifyError
}

/** Every error leaves as {code, error}: Parse errors with Parse's status, Fastify's client errors as 4xx, the rest as a bare 500. */
export function replyWithParseShape (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    reply.code(400).send({ code: Parse.Error.VALIDATION_ERROR, error: error.message })
    return
  }
  if (!isParseError(error) && isDatabaseUnavailable(error)) error = new DatabaseUnavailableError(error)
  if (isParseError(error)) {
    const status = statusForError(error)
    if (status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
    reply.code(status).send({ code: error.code, error: error.message })
    return
  }
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
      ? Parse.Error.INVALID_JSON
      : Parse.Error.INVALID_QUERY
    reply.code(status).send({ code, error: error.message })
    return
  }
  request.log.error({ err: error }, 'unhandled error')
  reply.code(500).send({ code: Parse.Error.INTERNAL_SERVER_ERROR, error: 'Internal server error' })
}

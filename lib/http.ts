// HTTP details shared by the Parse mount and the declared endpoints.
import { errorCodes, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { parse as parseQueryString } from 'node:querystring'
import Parse from 'parse/node'
import { isParseError, statusForError } from './errors.js'
import { DatabaseUnavailableError, isDatabaseUnavailable, RETRY_AFTER_SECONDS } from './storage/unavailable.js'

/**
 * Parse SDKs send JSON with Content-Type text/plain: parse it with Fastify's own JSON
 * parser (which refuses __proto__ / constructor.prototype poisoning), and keep plain text as text.
 */
export function acceptTextPlainJson (scope: FastifyInstance): void {
  const json = explainedJsonParser(scope)
  scope.removeContentTypeParser('application/json')
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, json)
  scope.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => textPlainBody(json, request, body as string, done))
}

type JsonParser = ReturnType<FastifyInstance['getDefaultJsonParser']>
type ParserDone = NonNullable<Parameters<JsonParser>[2]>

export const POISONED_BODY_MESSAGE = 'Body refused on purpose: it is valid JSON, but it has a "__proto__" key or a "constructor" key holding "prototype", ' +
  'which could change the prototype of every object the server builds from it. Rename that key.'

/**
 * Fastify's JSON parser (which refuses __proto__ and constructor.prototype keys), saying
 * so when that is why a body was refused, instead of calling valid JSON invalid.
 */
function explainedJsonParser (scope: FastifyInstance): JsonParser {
  const json = scope.getDefaultJsonParser('error', 'error')
  return (request, body, done) => json(request, body, (error, value) => {
    if (error && isValidJson(body)) return done(Object.assign(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), { message: POISONED_BODY_MESSAGE }), undefined)
    done(error, value)
  })
}

function isValidJson (text: string | Buffer): boolean {
  try {
    JSON.parse(text.toString())
    return true
  } catch {
    return false
  }
}

function textPlainBody (json: JsonParser, request: FastifyRequest, body: string, done: ParserDone): unknown {
  const text = body.trim()
  if (text === '') return done(null, undefined)
  if (text.startsWith('{') || text.startsWith('[')) return json(request, text, done)
  done(null, body)
}

/**
 * Parse's Express app parses urlencoded bodies, and every other body but
 * multipart as JSON, whatever its type (or none), and honours `_method` in all of
 * them. The mount parses them the same way first, under Fastify's body limit, so
 * the gate sees what Parse will act on (Parse then receives that object and does
 * not parse again); text/plain keeps the SDKs' JSON-in-text (acceptTextPlainJson).
 * Multipart bodies, and uploads of any type, stay unread for Parse: every parser in
 * the scope is the mount's own, because a body read here would leave Parse's files
 * router waiting for a stream already consumed. An upload whose headers carry no
 * application id (the JavaScript SDK sends its credentials and the file's base64 in
 * a JSON body) is read whole, under the same limit, and handed to Parse as the
 * bytes Parse would have read (`upload` answers 'raw' for it).
 */
export type UploadBody = 'unread' | 'raw' | undefined

export function readBodyAsParseDoes (scope: FastifyInstance, upload: (request: FastifyRequest) => UploadBody): void {
  const json = explainedJsonParser(scope)
  const limit = scope.initialConfig.bodyLimit ?? 1024 * 1024
  const raw = (request: FastifyRequest, payload: NodeJS.ReadableStream, done: ParserDone) =>
    readLimited(payload, limit, request.headers['content-length'], (error, bytes) => done(error, error ? undefined : bytes))
  const unlessUpload = (parse: (request: FastifyRequest, text: string, done: ParserDone) => unknown) =>
    (request: FastifyRequest, payload: NodeJS.ReadableStream, done: ParserDone) => {
      const kind = upload(request)
      if (kind === 'unread') return done(null)
      if (kind === 'raw') return raw(request, payload, done)
      readLimited(payload, limit, request.headers['content-length'], (error, bytes) => {
        if (error) return done(error, undefined)
        parse(request, bytes!.toString('utf8'), done)
      })
    }
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('application/json', unlessUpload(json))
  scope.addContentTypeParser('text/plain', unlessUpload((request, text, done) => textPlainBody(json, request, text, done)))
  scope.addContentTypeParser('application/x-www-form-urlencoded', unlessUpload((_request, text, done) => {
    // A plain object (querystring gives a null-prototype one); repeated keys become arrays, as in Parse.
    done(null, Object.fromEntries(Object.entries(parseQueryString(text))))
  }))
  scope.addContentTypeParser('multipart/form-data', (request, payload, done) => upload(request) === 'raw' ? raw(request, payload, done) : done(null))
  scope.addContentTypeParser('*', unlessUpload((request, text, done) => {
    if (text.trim() === '') return done(null, undefined)
    json(request, text, done)
  }))
}

function readLimited (payload: NodeJS.ReadableStream, limit: number, declared: string | undefined, done: (error: FastifyError | null, bytes?: Buffer) => void): void {
  if (declared !== undefined && Number(declared) > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
  const chunks: Buffer[] = []
  let received = 0
  let finished = false
  const finish = (error: FastifyError | null, bytes?: Buffer) => {
    if (finished) return
    finished = true
    payload.removeListener('data', onData)
    done(error, bytes)
  }
  const onData = (chunk: Buffer) => {
    received += chunk.length
    if (received > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
    chunks.push(chunk)
  }
  payload.on('data', onData)
  // A stream that breaks off (the client aborted) is a body that did not match its length.
  payload.on('error', () => finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH()))
  payload.on('end', () => {
    if (declared !== undefined && Number(declared) !== received) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH())
    finish(null, Buffer.concat(chunks))
  })
}

/**
 * Every error leaves as {code, error}: Parse errors with Parse's status, Fastify's client errors as 4xx, the rest as a bare 500.
 * A declared function's customErrorMessage replaces the text of its validation refusals too (the code stays 142).
 */
export function replyWithParseShape (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  // A handler's `throw null`: reading it failed here, and Fastify answered its own 500 shape with this file's TypeError.
  if (error === null || error === undefined) error = new Error(`a handler threw ${String(error)}`)
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    const config = request.routeOptions.config
    const custom = (config.cloudFunction ?? config.cloudFunctionOf?.(request.params))?.options.customErrorMessage
    reply.code(400).send({ code: Parse.Error.VALIDATION_ERROR, error: custom ?? validationMessage(fastifyError) })
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

interface ValidationIssue { keyword: string, instancePath: string, params: Record<string, unknown>, message?: string }

/**
 * Fastify's message ("body/title must be string"), but an enum refusal names the
 * values it allows instead of "must be equal to one of the allowed values".
 */
function validationMessage (error: FastifyError): string {
  const issue = (error.validation as ValidationIssue[] | undefined)?.[0]
  const allowed = issue?.keyword === 'enum' ? issue.params.allowedValues : undefined
  if (!Array.isArray(allowed)) return error.message
  const where = `${error.validationContext ?? 'body'}${issue!.instancePath}`
  return `${where} must be one of ${allowed.map((value) => typeof value === 'string' ? value : JSON.stringify(value)).join(', ')}`
}

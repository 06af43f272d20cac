// A declared function's parameters arrive as one JSON object. Any other body
// (an array, a string, a number, null) is refused rather than read as no
// parameters; no body at all is no parameters.
import type { preHandlerHookHandler } from 'fastify'
import Parse from 'parse/node'
import { KitError } from '../errors.js'

export const bodyIsAnObject: preHandlerHookHandler = (request, _reply, done) => {
  const body = request.body
  if (body === undefined) {
    request.body = {}
    return done()
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return done()
  done(new KitError(Parse.Error.VALIDATION_ERROR, `The request body must be a JSON object of parameters (got ${kindOf(body)})`, 400))
}

function kindOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? 'text' : `a ${typeof value}`
}

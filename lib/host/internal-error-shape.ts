// Parse answers an error it did not expect (a throw that is no Parse.Error: a
// failing pages handler, a module that could not load at its first use) with
// {code: 1, message}; every other answer, Parse's and the kit's, says `error`
// (docs/reference/http-answers.md), which is what the Parse SDKs read.
import Parse from 'parse/node'

interface ExpressResponse {
  json (body: unknown): unknown
}

/** Express middleware in front of Parse's app: its internal-error answer in the {code, error} shape. */
export function internalErrorAsKitShape (_request: unknown, response: ExpressResponse, next: () => void): void {
  // The json() in place before this one (unavailable.ts's, or Express's own).
  const json = response.json
  response.json = function (this: ExpressResponse, body: unknown) {
    const answer = body as { code?: unknown, message?: unknown, error?: unknown } | null
    if (answer?.code === Parse.Error.INTERNAL_SERVER_ERROR && answer.error === undefined && typeof answer.message === 'string') {
      return json.call(this, { code: answer.code, error: answer.message })
    }
    return json.call(this, body)
  }
  next()
}

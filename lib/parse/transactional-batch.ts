// Parse's transactional /batch (`transaction: true`) rejects with the plain
// object `{ response: results }` when an inner request fails; its error
// middleware knows only Parse.Error, so the client gets an opaque
// `500 {"code":1}` for what is a client mistake (a 141 from a function, a 142
// from validation). Without `transaction` the same batch answers 200 with the
// inner error in place. This wraps the /batch route of the router Parse's app
// mounts: the first inner failure is answered as the Parse.Error it was (so
// 101 → 404, every other code → 400, code 1 → 500, as Parse maps them).
// test/parse-contract.test.ts pins the shape it relies on.
import Parse from 'parse/node'
import { parseInternals, type PromiseRoute } from './internals.js'

const INSTALLED = Symbol.for('fastify-parse-kit.transactional-batch-errors')

interface InnerResult { error?: { code?: unknown, error?: unknown } }

/** The first inner failure of a rejected transactional batch, as a Parse.Error; undefined for any other rejection. */
export function innerFailure (rejection: unknown): Parse.Error | undefined {
  const results = (rejection as { response?: unknown } | null)?.response
  if (!Array.isArray(results) || rejection instanceof Error) return undefined
  const failed = (results as InnerResult[]).find((result) => typeof result?.error === 'object' && result.error !== null)
  if (!failed?.error) return undefined
  const code = typeof failed.error.code === 'number' ? failed.error.code : Parse.Error.INTERNAL_SERVER_ERROR
  const message = typeof failed.error.error === 'string' ? failed.error.error : 'A request in the batch failed.'
  return new Parse.Error(code, message)
}

function wrapBatchRoute (route: PromiseRoute): void {
  const handler = route.handler
  route.handler = async (request) => {
    try {
      return await handler(request)
    } catch (error) {
      throw innerFailure(error) ?? error
    }
  }
}

/** Idempotent; before a server's app is built (its router is made then). */
export function installTransactionalBatchErrors (): void {
  const { ParseServerClass } = parseInternals()
  const server = ParseServerClass as unknown as Record<symbol, unknown> & typeof ParseServerClass
  if (server[INSTALLED]) return
  const promiseRouter = ParseServerClass.promiseRouter.bind(ParseServerClass)
  ParseServerClass.promiseRouter = (options) => {
    const router = promiseRouter(options)
    const batch = router.routes.find((route) => route.method === 'POST' && route.path === '/batch')
    if (batch) wrapBatchRoute(batch)
    return router
  }
  server[INSTALLED] = true
}

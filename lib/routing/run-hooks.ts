// Runs a list of route hooks inside one hook, the way Fastify runs a route's
// own list: in order, callback or promise style, and a hook that answered ends
// the run (the rest of the request never runs, as in Fastify).
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'

export function runHooks (hooks: preHandlerHookHandler[], instance: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  let index = 0
  const next = (error?: Error): void => {
    if (error) return done(error)
    if (index === hooks.length) return done()
    if (reply.sent) return
    const hook = hooks[index++]
    let result: unknown
    try {
      result = hook.call(instance, request, reply, next as never)
    } catch (thrown) {
      return done(thrown as Error)
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(() => next(), (rejected: Error | undefined) => done(rejected ?? new Error('a route hook rejected without an error')))
    }
  }
  next()
}

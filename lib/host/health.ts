// {mount}/health is readiness: 200 {"status":"ok"} (Parse's own answer, which
// the SDKs and Parse Dashboard read) only while the database answers; otherwise
// 503 with the reason, so a load balancer or Kubernetes takes the instance out
// of rotation, and 503 from the moment close begins (the drain: the server
// still serves, but a balancer should stop sending). {mount}/health/live is
// liveness: the process serves requests, whatever the database does
// (restarting the process would not bring it back).
import type { FastifyReply } from 'fastify'
import type { DatabaseAvailability } from '../storage/availability.js'
import { DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS } from '../storage/unavailable.js'

/** Which health question a path under the mount asks, if any. */
export function healthPathKind (path: string): 'ready' | 'live' | undefined {
  const bare = path.split('?')[0]!.replace(/\/+$/, '').toLowerCase()
  if (bare === '/health') return 'ready'
  if (bare === '/health/live') return 'live'
  return undefined
}

/** The readiness answer's code while the server drains before it closes. */
export const SHUTTING_DOWN = 5004

export async function answerHealth (kind: 'ready' | 'live', reply: FastifyReply, availability: DatabaseAvailability, draining = false): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store')
  if (kind === 'live') return reply.code(200).send({ status: 'ok' })
  if (draining) {
    return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send({
      status: 'shutting down',
      code: SHUTTING_DOWN,
      error: 'This instance is shutting down: send requests to another one.'
    })
  }
  const { ready, reason } = await availability.check()
  if (ready) return reply.code(200).send({ status: 'ok' })
  return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send({
    status: 'unavailable',
    code: DATABASE_UNAVAILABLE,
    error: `The database cannot be reached: ${reason}`
  })
}

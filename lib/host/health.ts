// {mount}/health is readiness: 200 {"status":"ok"} (Parse's own answer, which
// the SDKs and Parse Dashboard read) only while the database answers; otherwise
// 503 with the reason, so a load balancer or Kubernetes takes the instance out
// of rotation. {mount}/health/live is liveness: the process serves requests,
// whatever the database does (restarting the process would not bring it back).
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

export async function answerHealth (kind: 'ready' | 'live', reply: FastifyReply, availability: DatabaseAvailability): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store')
  if (kind === 'live') return reply.code(200).send({ status: 'ok' })
  const { ready, reason } = await availability.check()
  if (ready) return reply.code(200).send({ status: 'ok' })
  return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send({
    status: 'unavailable',
    code: DATABASE_UNAVAILABLE,
    error: `The database cannot be reached: ${reason}`
  })
}

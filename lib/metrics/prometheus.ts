// The `metrics` option: a Prometheus endpoint (prom-client's registry and text
// format) with what an operator of this service watches — each declared
// function's calls by status and their latency, the database's availability,
// transaction re-runs and conflicts, rate-limit refusals, the role cache,
// LiveQuery connections, job runs and, in cluster mode, Redis.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { KitState } from '../kit-state.js'
import { secretDigest, secretsEqual } from '../secret-compare.js'
import { IGNORED_HOOKS, metricHooksPart, type MetricHooks } from './hooks.js'

export interface MetricsSettings {
  /** Where the endpoint answers; never under the mount path. */
  path: string
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string
  /** prom-client's process and Node.js metrics (memory, CPU, event loop lag). */
  defaultMetrics: boolean
}

export interface MetricsSources {
  databaseReachable: () => boolean
  /** Set once LiveQuery runs. */
  liveQuery?: () => { connections: number, subscriptions: number } | undefined
  /** Cluster mode. */
  redis: boolean
}

export interface KitMetrics {
  registry: Registry
  /** Adds the endpoint and the per-function response hook; call before the declared routes are registered. */
  register (fastify: FastifyInstance): Promise<void>
  /** Stops counting (at close): the hooks fall back to no-ops. */
  close (): void
}

export function openMetrics (state: KitState, settings: MetricsSettings, sources: MetricsSources): KitMetrics {
  const registry = new Registry()
  if (settings.defaultMetrics) collectDefaultMetrics({ register: registry })
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers: [registry] })

  const requests = counter('fpk_function_requests_total', 'Calls of each declared function (both of its routes), by HTTP status; refusals (401, 403, 429, 400) included.', ['function', 'status'])
  const duration = new Histogram({
    name: 'fpk_function_duration_seconds',
    help: 'Time from request to response of each declared function, refusals included.',
    labelNames: ['function'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })
  const outages = counter('fpk_database_outages_total', 'Times the database stopped answering (each outage counted once, however many calls it refused).')
  const gauge = (name: string, help: string, read: () => number) => new Gauge({ name, help, registers: [registry], collect () { this.set(read()) } })
  gauge('fpk_database_up', '1 while the database answers, 0 during an outage (calls then answer 503).', () => sources.databaseReachable() ? 1 : 0)
  const retries = counter('fpk_transaction_retries_total', 'Transaction bodies re-run after a transient conflict.')
  const conflicts = counter('fpk_transaction_conflicts_total', 'Transactions that gave up after their attempts and answered CONFLICT (5001).')
  const refusals = counter('fpk_rate_limit_refusals_total', 'Calls a declared function\'s rate limit refused (429).', ['function'])
  const roleLookups = counter('fpk_role_cache_lookups_total', 'Role checks answered from the role cache (hit) or by reading the role graph (miss).', ['result'])
  const jobRuns = counter('fpk_job_runs_total', 'Job runs that ended, by job and status: succeeded, failed (attempts spent), interrupted (by shutdown), lost (its instance died; counted by the instance that found it).', ['job', 'status'])
  const jobDuration = new Histogram({
    name: 'fpk_job_duration_seconds',
    help: 'Time from start to end of each job run on this instance, all its attempts together.',
    labelNames: ['job', 'status'],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry]
  })
  const jobLastSuccess = new Gauge({ name: 'fpk_job_last_success_timestamp_seconds', help: 'When a run of each job last succeeded on this instance (Unix time): alert when it grows too old.', labelNames: ['job'], registers: [registry] })
  if (sources.liveQuery) {
    const stats = sources.liveQuery
    gauge('fpk_live_query_connections', 'Open LiveQuery WebSocket connections.', () => stats()?.connections ?? 0)
    gauge('fpk_live_query_subscriptions', 'LiveQuery subscriptions across the open connections.', () => stats()?.subscriptions ?? 0)
  }
  let redisUp = 1
  let redisOutages: Counter | undefined
  if (sources.redis) {
    redisOutages = counter('fpk_redis_outages_total', 'Times Redis (cluster mode) became unreachable.')
    gauge('fpk_redis_up', '1 while Redis (cluster mode) is reachable, 0 while any connection to it is lost.', () => redisUp)
  }

  const hooks: MetricHooks = {
    transactionRetried: () => retries.inc(),
    transactionConflicted: () => conflicts.inc(),
    rateLimited: (name) => refusals.inc({ function: name }),
    roleCacheLookup: (hit) => roleLookups.inc({ result: hit ? 'hit' : 'miss' }),
    databaseOutage: () => outages.inc(),
    redisReachable: (up) => {
      if (!up && redisUp === 1) redisOutages?.inc()
      redisUp = up ? 1 : 0
    },
    jobRunEnded: (job, status, seconds) => {
      jobRuns.inc({ job, status })
      if (seconds !== undefined) jobDuration.observe({ job, status }, seconds)
      if (status === 'succeeded') jobLastSuccess.set({ job }, Date.now() / 1000)
    }
  }
  const part = state.get(metricHooksPart)
  part.hooks = hooks

  return {
    registry,
    async register (fastify) {
      fastify.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
        const config = request.routeOptions.config
        const declared = config?.cloudFunction ?? config?.cloudFunctionOf?.(request.params)
        if (!declared) return
        requests.inc({ function: declared.name, status: String(reply.statusCode) })
        duration.observe({ function: declared.name }, reply.elapsedTime / 1000)
      })
      const carriesToken = settings.token === undefined ? undefined : bearerCheck(settings.token)
      // For the scraper, never for a page: no CORS grant, whatever the instance's CORS (mountPath '/' included).
      fastify.get(settings.path, { logLevel: 'warn', config: { cors: false } as object }, async (request, reply) => {
        if (carriesToken && !carriesToken(request.headers.authorization)) {
          return reply.code(401).header('www-authenticate', 'Bearer').send({ code: 119, error: 'Metrics need Authorization: Bearer <the metrics token>.' })
        }
        return reply.type(registry.contentType).send(await registry.metrics())
      })
    },
    close () {
      part.hooks = IGNORED_HOOKS
      registry.clear()
    }
  }
}

/** Whether an Authorization header carries the token, compared as digests in constant time (length and content leak nothing). */
function bearerCheck (token: string): (header: string | undefined) => boolean {
  const allowed = secretDigest(token)
  return (header) => {
    const match = /^Bearer\s+(.+)$/i.exec(header ?? '')
    return match !== null && secretsEqual(match[1].trim(), token, allowed)
  }
}

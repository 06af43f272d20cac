// kitPlugin's `metrics` option: true (at /metrics) or { path, token, defaultMetrics }; off by default.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { dottedName, optionChecker, type OptionProblem } from '../option-schema.js'
import { normaliseMountPath } from '../config.js'

/** The metrics endpoint: where, who may scrape it, and whether prom-client's process metrics come along. */
export const MetricsOptionsSchema = Type.Object({
  /** Default /metrics; never under the mount path. */
  path: Type.Optional(Type.String({ pattern: '^/', problem: "must be a path starting with '/', e.g. '/metrics'" })),
  /** A scrape must send Authorization: Bearer <token>. Env METRICS_TOKEN. Unset: open to whoever reaches the port. */
  token: Type.Optional(Type.String({ minLength: 16, problem: 'must be a string of at least 16 characters', secret: true })),
  /** prom-client's process and Node.js metrics. Default true. */
  defaultMetrics: Type.Optional(Type.Boolean({ problem: 'must be true or false' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: "must be true, false or { path: '/metrics', token?: '…', defaultMetrics?: true }" })

export type MetricsOptions = Static<typeof MetricsOptionsSchema>
const checkMetrics = optionChecker(MetricsOptionsSchema)

export interface ResolvedMetrics { path: string, token?: string, defaultMetrics: boolean }

/** The endpoint's settings, or undefined when off; METRICS_TOKEN stands in for the token. */
export function resolveMetricsOption (value: boolean | MetricsOptions | undefined, mountPath: string, fail: (option: string, problem: string, kind?: OptionProblem['kind']) => Error): ResolvedMetrics | undefined {
  if (value === undefined || value === false) return undefined
  const given = value === true ? {} : value
  const shape = typeof given === 'object' && given !== null && !Array.isArray(given)
    ? checkMetrics(given)
    : { kind: 'invalid' as const, path: [], problem: "must be true, false or { path: '/metrics', token?: '…', defaultMetrics?: true }" }
  if (shape) throw fail(shape.path.length ? `metrics.${dottedName(shape.path)}` : 'metrics', shape.problem, shape.kind)
  const path = normaliseMountPath(given.path ?? '/metrics')
  // Everything under the mount path is the public API (and the gate's): operators expect metrics beside it, not in it.
  if (mountPath !== '/' && (path === mountPath || path.startsWith(`${mountPath}/`))) {
    throw fail('metrics.path', `is under the mount path ${mountPath}, the public API; choose a path outside it, e.g. /metrics`)
  }
  const token = given.token ?? (process.env.METRICS_TOKEN || undefined)
  if (token !== undefined && token.length < 16) throw fail('metrics.token', 'must be a string of at least 16 characters (from the option or METRICS_TOKEN)')
  return { path, token, defaultMetrics: given.defaultMetrics ?? true }
}

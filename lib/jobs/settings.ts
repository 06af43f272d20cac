// kitPlugin's `jobs` option: how this instance takes part in schedules.
import { Type, type Static } from '@sinclair/typebox'
import { cronPattern } from './options.js'

const ms = (min: number, problem: string) => Type.Integer({ minimum: min, problem })

export const JobsOptionsSchema = Type.Object({
  /** Run @Cron and Dashboard schedules on this instance (each tick still runs once across instances). Default true. */
  schedules: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  /** At close (SIGTERM), how long a running job may go on before it is marked failed "interrupted by shutdown". Default 10000. */
  shutdownGraceMs: Type.Optional(ms(0, 'must be a whole number of milliseconds ≥ 0')),
  /** How often _JobSchedule (Parse Dashboard's schedules) is read. Default 10000. */
  dashboardPollMs: Type.Optional(ms(100, 'must be a whole number of milliseconds ≥ 100')),
  /** How long a tick's lease lasts without renewal: a crashed instance's schedule is taken over after this. Default 60000. */
  leaseMs: Type.Optional(ms(1000, 'must be a whole number of milliseconds ≥ 1000')),
  /** Cron expression of the built-in TTL sweep on PostgreSQL, or false for none. Default '* * * * *' (every minute). */
  ttlSweep: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Literal(false)], { problem: "must be a cron expression such as '*/5 * * * *', or false" })),
  /** Cron expression of the built-in sweep of expired sessions (both databases), or false for none. Default '0 * * * *' (hourly). */
  sessionSweep: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Literal(false)], { problem: "must be a cron expression such as '0 * * * *', or false" }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be an object such as { shutdownGraceMs: 10000 }' })

export type JobsOptions = Static<typeof JobsOptionsSchema>

export interface JobsSettings {
  schedules: boolean
  shutdownGraceMs: number
  dashboardPollMs: number
  leaseMs: number
  ttlSweep: string | false
  sessionSweep: string | false
}

export function resolveJobsOptions (input: JobsOptions = {}): JobsSettings {
  if (typeof input.ttlSweep === 'string') cronPattern('kitPlugin option "jobs.ttlSweep"', input.ttlSweep)
  if (typeof input.sessionSweep === 'string') cronPattern('kitPlugin option "jobs.sessionSweep"', input.sessionSweep)
  return {
    schedules: input.schedules ?? true,
    shutdownGraceMs: input.shutdownGraceMs ?? 10_000,
    dashboardPollMs: input.dashboardPollMs ?? 10_000,
    leaseMs: input.leaseMs ?? 60_000,
    ttlSweep: input.ttlSweep ?? '* * * * *',
    sessionSweep: input.sessionSweep ?? '0 * * * *'
  }
}

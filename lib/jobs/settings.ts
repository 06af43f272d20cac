// kitPlugin's `jobs` option: how this instance takes part in schedules.
import type { Static } from '@sinclair/typebox'
import { Type } from '../typebox.js'
import { cronPattern } from './options.js'

const ms = (min: number, problem: string) => Type.Integer({ minimum: min, problem })

const seconds = (min: number) => Type.Number({ minimum: min, problem: `must be a number of seconds ≥ ${min}` })
const wholeSeconds = (min: number) => Type.Integer({ minimum: min, problem: `must be a whole number of seconds ≥ ${min}` })

export const QueueOptionsSchema = Type.Object({
  /** Run queued jobs on this instance (false: it only enqueues). Default true. */
  workers: Type.Optional(Type.Boolean({ problem: 'must be true or false' })),
  /** How often an idle worker looks for jobs. Default 2. */
  pollingIntervalSeconds: Type.Optional(seconds(0.5)),
  /** How often stalled runs, retention and dead letters are looked after. Default 60. */
  maintenanceIntervalSeconds: Type.Optional(wholeSeconds(1)),
  /** How long a finished job (completed or failed) stays in the queue's tables before it is archived. Default 43200 (12 h). */
  keepFinishedSeconds: Type.Optional(wholeSeconds(1)),
  /** How long an archived job is kept before it is deleted. Default 604800 (7 days). */
  deleteAfterSeconds: Type.Optional(wholeSeconds(1)),
  /** How long a dead job (all its retries used) waits to be re-run before it is dropped. Default 14. */
  deadLetterDays: Type.Optional(Type.Integer({ minimum: 1, problem: 'must be a whole number of days ≥ 1' }))
}, { additionalProperties: false, unknownKey: 'unknown option', problem: 'must be true, false or an object such as { pollingIntervalSeconds: 2 }' })

export type QueueOptions = Static<typeof QueueOptionsSchema>

export interface QueueSettings {
  workers: boolean
  pollingIntervalSeconds: number
  maintenanceIntervalSeconds: number
  keepFinishedSeconds: number
  deleteAfterSeconds: number
  deadLetterDays: number
}

export const JobsOptionsSchema = Type.Object({
  /** Queued jobs (enqueue) on PostgreSQL: true, or the queue's settings. Off by default; refused on MongoDB. */
  queue: Type.Optional(Type.Union([Type.Boolean(), QueueOptionsSchema], { problem: 'must be true, false or an object such as { pollingIntervalSeconds: 2 }' })),
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
  /** Undefined when the kit runs no queue. */
  queue: QueueSettings | undefined
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
    sessionSweep: input.sessionSweep ?? '0 * * * *',
    queue: resolveQueue(input.queue)
  }
}

function resolveQueue (input: boolean | QueueOptions | undefined): QueueSettings | undefined {
  if (input === undefined || input === false) return undefined
  const given = input === true ? {} : input
  return {
    workers: given.workers ?? true,
    pollingIntervalSeconds: given.pollingIntervalSeconds ?? 2,
    maintenanceIntervalSeconds: given.maintenanceIntervalSeconds ?? 60,
    keepFinishedSeconds: given.keepFinishedSeconds ?? 12 * 60 * 60,
    deleteAfterSeconds: given.deleteAfterSeconds ?? 7 * 24 * 60 * 60,
    deadLetterDays: given.deadLetterDays ?? 14
  }
}

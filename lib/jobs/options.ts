// What @Job and @Cron accept, checked when the decorator runs (at import), so a
// mistake fails before the server starts, naming the method and the option.
import { Cron as CronPattern } from 'croner'
import type { TObject } from '@sinclair/typebox'
import { Kind } from '../typebox.js'
import { CronExpressionError, CronTimezoneError, JobDeclarationError } from '../errors.js'

export interface JobOptions {
  /** The job's name in Parse (POST {mount}/jobs/{name}, the Dashboard). Default: the method's name. */
  name?: string
  /** Shown beside the job in the kit's logs and docs; Parse's Dashboard lists jobs by name. */
  description?: string
  /** Longest one attempt may run; it then fails with "timed out after N ms" (and may be retried). Default: no limit. */
  timeoutMs?: number
  /** Attempts after the first when one throws or times out, all in the same run (one _JobStatus row). Default 0. */
  retries?: number
  /** Pause before the first retry; each later one waits twice as long as the one before. Default 1000. */
  backoffMs?: number
  /** Queued runs of this job one instance runs at once (jobs.queue). Default 1. */
  concurrency?: number
  /** The params a queued run takes, as a TypeBox object: enqueue refuses others with 142 naming the param. */
  params?: TObject
}

export interface CronOptions {
  /** The job's name, when @Cron declares it alone. Default: the method's name. */
  name?: string
  /** IANA timezone the expression is read in, e.g. 'Europe/Paris'. Default UTC. */
  timezone?: string
  /** When every instance was down at a tick: run the last missed tick once at start. Default false (missed ticks are not replayed). */
  catchUp?: boolean
  /** Parameters each scheduled run gets as request.params. */
  params?: Record<string, unknown>
}

const JOB_KEYS = ['name', 'description', 'timeoutMs', 'retries', 'backoffMs', 'concurrency', 'params']
const CRON_KEYS = ['name', 'timezone', 'catchUp', 'params']
const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/

function knownKeys (where: string, options: object, known: string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new JobDeclarationError(`${where}: option "${key}" is not supported (known: ${known.join(', ')})`)
  }
}

/** A PostgreSQL integer: the queue keeps retries (and the pause, in seconds) in such columns, and refused more at boot. */
const INT32_MAX = 2_147_483_647

function wholeNumber (where: string, option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new JobDeclarationError(`${where}: option "${option}" must be a whole number ≥ ${min} (got ${JSON.stringify(value)})`)
  }
  if (value > max) throw new JobDeclarationError(`${where}: option "${option}" must be at most ${max} (got ${value})`)
}

export function checkName (where: string, name: unknown): void {
  if (name === undefined) return
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new JobDeclarationError(`${where}: option "name" must be letters, digits, "_" or "-", starting with a letter or "_" (got ${JSON.stringify(name)})`)
  }
}

export function checkJobOptions (where: string, options: unknown): JobOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new JobDeclarationError(`${where}: options must be an object such as { retries: 2, timeoutMs: 60000 }`)
  knownKeys(where, options, JOB_KEYS)
  const value = options as JobOptions
  checkName(where, value.name)
  if (value.description !== undefined && typeof value.description !== 'string') throw new JobDeclarationError(`${where}: option "description" must be a string`)
  // A timer takes at most 2^31-1 ms (24.8 days): a longer one fired at once, and every attempt timed out.
  wholeNumber(where, 'timeoutMs', value.timeoutMs, 1, INT32_MAX)
  wholeNumber(where, 'retries', value.retries, 0, INT32_MAX)
  wholeNumber(where, 'backoffMs', value.backoffMs, 0, INT32_MAX * 1000)
  wholeNumber(where, 'concurrency', value.concurrency, 1)
  if (value.params !== undefined && (value.params as { [Kind]?: unknown, type?: unknown })[Kind] !== 'Object') {
    throw new JobDeclarationError(`${where}: option "params" must be a TypeBox object such as Type.Object({ orderId: Type.String() })`)
  }
  return value
}

export function checkCronOptions (where: string, options: unknown): CronOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new JobDeclarationError(`${where}: options must be an object such as { timezone: 'Europe/Paris' }`)
  knownKeys(where, options, CRON_KEYS)
  const value = options as CronOptions
  checkName(where, value.name)
  if (value.catchUp !== undefined && typeof value.catchUp !== 'boolean') throw new JobDeclarationError(`${where}: option "catchUp" must be true or false`)
  if (value.params !== undefined && (typeof value.params !== 'object' || value.params === null || Array.isArray(value.params))) {
    throw new JobDeclarationError(`${where}: option "params" must be an object`)
  }
  if (value.timezone !== undefined) checkTimezone(where, value.timezone)
  return value
}

function checkTimezone (where: string, timezone: unknown): void {
  let known = typeof timezone === 'string' && timezone !== ''
  if (known) {
    try { new Intl.DateTimeFormat('en-US', { timeZone: timezone as string }) } catch { known = false } // eslint-disable-line no-new
  }
  if (!known) throw new CronTimezoneError(`${where}: timezone ${JSON.stringify(timezone)} is not an IANA timezone this Node.js knows; write one such as 'UTC', 'Europe/Paris' or 'America/New_York'`)
}

/** A pattern croner reads as five fields (minute first) or six (second first); the reason it gives otherwise. */
export function cronPattern (where: string, expression: unknown, timezone?: string): CronPattern {
  if (typeof expression !== 'string') throw new CronExpressionError(`${where}: the expression must be a string such as '0 3 * * *' (03:00 every day)`)
  try {
    return new CronPattern(expression, { paused: true, timezone: timezone ?? 'UTC', mode: '5-or-6-parts' })
  } catch (error) {
    throw new CronExpressionError(`${where}: "${expression}" is not a cron expression (${(error as Error).message}); write five fields (minute hour day month weekday, e.g. '0 3 * * *') or six with seconds first (e.g. '*/10 * * * * *')`)
  }
}

// When a schedule's ticks fall: @Cron expressions through croner, and the rows
// Parse Dashboard writes to _JobSchedule (start after, repeat minutes from a
// time of day, days of the week), which Parse stores but never runs.
import { Cron as CronPattern } from 'croner'

/** The first tick strictly after `after`, or undefined when there is none. */
export type NextTick = (after: Date) => Date | undefined

export function cronTicks (expression: string, timezone: string): { next: NextTick, previous: (before: Date) => Date | undefined } {
  const pattern = new CronPattern(expression, { paused: true, timezone, mode: '5-or-6-parts' })
  return {
    next: (after) => pattern.nextRun(after) ?? undefined,
    previous: (before) => pattern.previousRuns(1, before)[0]
  }
}

/** A _JobSchedule row as Parse Dashboard writes it (POST /cloud_code/jobs). */
export interface DashboardSchedule {
  objectId: string
  jobName: string
  params?: string
  startAfter?: string
  /** Minutes between runs within a day, from timeOfDay; 1440 is "every day". Unset: the job runs once, at startAfter. */
  repeatMinutes?: number
  /** 'HH:MM:SS.sssZ' (UTC): the first run of each day. Default midnight. */
  timeOfDay?: string
  /** Seven flags, Sunday first: the days it runs on. Default every day. */
  daysOfWeek?: Array<number | boolean>
}

const DAY_MS = 86_400_000
const MIN_STEP_MS = 1000

/** The ticks of a Dashboard schedule. A one-off schedule's single tick may lie in the past (it has not run yet). */
export function dashboardTicks (schedule: DashboardSchedule): NextTick {
  const startAfter = schedule.startAfter ? Date.parse(schedule.startAfter) : 0
  const start = Number.isNaN(startAfter) ? 0 : startAfter
  const repeat = Number(schedule.repeatMinutes)
  if (!(repeat > 0)) return (after) => start > after.getTime() ? new Date(start) : undefined
  // At most one tick a second: a row written with 0.0001 (the Dashboard offers whole minutes) ticked every few
  // milliseconds on every instance, each tick a lease claim (about 0.4 CPU-s a second measured).
  const stepMs = Math.max(MIN_STEP_MS, repeat * 60_000)
  const offsetMs = timeOfDayMs(schedule.timeOfDay)
  const onDay = (day: number) => {
    const flags = schedule.daysOfWeek
    return !Array.isArray(flags) || flags.length !== 7 || Boolean(flags[new Date(day).getUTCDay()])
  }
  return (after) => {
    const from = Math.max(after.getTime() + 1, start)
    let day = Math.floor(from / DAY_MS) * DAY_MS
    // A week of days covers any set of weekdays; a schedule with none never runs.
    for (let i = 0; i < 8; i++, day += DAY_MS) {
      if (!onDay(day)) continue
      const first = day + offsetMs
      const k = Math.max(0, Math.ceil((from - first) / stepMs))
      const tick = first + k * stepMs
      if (tick < day + DAY_MS) return new Date(tick)
    }
    return undefined
  }
}

function timeOfDayMs (value: string | undefined): number {
  const match = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?/.exec(value ?? '')
  if (!match) return 0
  const [, hours, minutes, seconds = '0', millis = '0'] = match
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Number(millis.padEnd(3, '0'))
}

// Schedules made in Parse Dashboard: the _JobSchedule rows are read every
// pollMs (any instance may have written them) and each becomes a scheduler
// entry with the same exactly-once lease as @Cron. A row edited is planned
// again; a row deleted is dropped, and a tick is checked against the row
// before it is claimed, so a deletion stops it even between polls.
import Parse from 'parse/node'
import type { Scheduler } from './scheduler.js'
import { dashboardTicks, type DashboardSchedule } from './ticks.js'
import type { JobLogger } from './request.js'
import { episode } from './episode-log.js'

const PREFIX = 'dashboard:'

export interface DashboardWatch { stop (): void, poll (): Promise<void> }

export function watchDashboardSchedules (scheduler: Scheduler, options: { pollMs: number, log: JobLogger, jobNames: Set<string> }): DashboardWatch {
  const versions = new Map<string, string>()
  const warned = new Set<string>()
  const unread = episode(options.log, 'warn')
  let polling: Promise<void> | undefined
  const poll = async () => {
    let rows: DashboardSchedule[]
    try {
      const found = await new Parse.Query('_JobSchedule').limit(10_000).find({ useMasterKey: true })
      rows = found.map((row) => ({ ...(row.toJSON() as unknown as DashboardSchedule), objectId: row.id! }))
    } catch (error) {
      unread.happened(`[jobs] could not read _JobSchedule: ${(error as Error).message} (later failures are counted until it works again)`)
      return
    }
    unread.over((count, seconds) => `[jobs] _JobSchedule is read again (${count} read(s) failed over ${seconds} s)`)
    const present = new Set<string>()
    for (const row of rows) {
      const key = PREFIX + row.objectId
      present.add(key)
      const version = JSON.stringify(row)
      if (versions.get(key) === version && scheduler.has(key)) continue
      versions.set(key, version)
      if (!options.jobNames.has(row.jobName)) {
        if (!warned.has(key)) options.log.warn(`[jobs] _JobSchedule ${row.objectId} names job "${row.jobName}", which is not declared here; it is left alone`)
        warned.add(key)
        scheduler.remove(key)
        continue
      }
      const oneOff = !(Number(row.repeatMinutes) > 0)
      scheduler.add({
        key,
        jobName: row.jobName,
        params: paramsOf(row, options.log),
        next: dashboardTicks(row),
        stillWanted: () => exists(row.objectId)
      }, oneOff ? new Date(0) : new Date())
    }
    for (const key of scheduler.keys()) {
      if (key.startsWith(PREFIX) && !present.has(key)) { scheduler.remove(key); versions.delete(key) }
    }
  }
  const once = () => {
    polling ??= poll().finally(() => { polling = undefined })
    return polling
  }
  const timer = setInterval(() => { void once() }, options.pollMs)
  timer.unref()
  void once()
  return { stop: () => clearInterval(timer), poll: once }
}

function paramsOf (row: DashboardSchedule, log: JobLogger): Record<string, unknown> {
  if (!row.params) return {}
  try {
    const value: unknown = JSON.parse(row.params)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {}
  log.warn(`[jobs] _JobSchedule ${row.objectId}: params are not a JSON object; the job runs with none`)
  return {}
}

async function exists (objectId: string): Promise<boolean> {
  try {
    await new Parse.Query('_JobSchedule').get(objectId, { useMasterKey: true })
    return true
  } catch (error) {
    if ((error as { code?: number }).code === Parse.Error.OBJECT_NOT_FOUND) return false
    throw error
  }
}

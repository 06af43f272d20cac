// The jobs side of a running kit: started by plugin.ts once Parse is up,
// stopped first at close. Stopping ends the timers, lets running jobs finish
// within shutdownGraceMs, marks the rest failed and releases their leases.
// Every instance also looks for runs whose instance died (their lease expired)
// and reports them lost, retrying them when the job has retries left.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { KitState } from '../kit-state.js'
import { openJobLeases } from '../storage/job-lease.js'
import { declaredJobs, jobName } from './registry.js'
import type { JobLogger } from './request.js'
import { jobRunsPart } from './runs.js'
import { Scheduler, type ScheduleEntry } from './scheduler.js'
import type { JobsSettings } from './settings.js'
import { cronTicks } from './ticks.js'
import { TTL_JOB_NAME, ttlSweepJob } from './ttl.js'
import { SESSION_SWEEP_JOB_NAME } from './session-sweep.js'
import { watchDashboardSchedules } from './dashboard-schedules.js'
import { watchLostRuns } from './lost-runs.js'
import { failQueuedRun } from './queue.js'
import { kitJobNames } from './register.js'

export interface JobsHost { stop (): Promise<void> }

export async function startJobs (state: KitState, settings: JobsSettings, log: JobLogger): Promise<JobsHost> {
  const runs = state.get(jobRunsPart)
  const leases = await openJobLeases(state)
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  runs.attach({ leases, holder, leaseMs: settings.leaseMs, log })
  const retries = new Map(declaredJobs().map((declaration) => [jobName(declaration), declaration.options.retries ?? 0]))
  const lost = watchLostRuns(leases, { log, leaseMs: settings.leaseMs, retriesOf: (name) => retries.get(name) ?? 0, jobNames: kitJobNames(state), failQueued: (run, message) => failQueuedRun(state, run, message) })
  const interrupt = async () => {
    lost.stop()
    const stopped = await runs.interrupt(settings.shutdownGraceMs)
    if (stopped.length > 0) log.warn(`[jobs] interrupted by shutdown after ${settings.shutdownGraceMs} ms: ${stopped.join(', ')}`)
    runs.detach()
  }
  if (!settings.schedules) return { stop: once(interrupt) }

  const scheduler = new Scheduler(leases, runs, { leaseMs: settings.leaseMs, log })
  const names = new Set<string>()
  for (const declaration of declaredJobs()) {
    const name = jobName(declaration)
    names.add(name)
    for (const cron of declaration.crons) {
      const ticks = cronTicks(cron.expression, cron.timezone)
      const entry: ScheduleEntry = { key: `cron:${name}:${cron.expression}@${cron.timezone}`, jobName: name, params: cron.params, next: ticks.next }
      scheduler.add(entry)
      if (cron.catchUp) await catchUp(scheduler, entry, ticks.previous, leases.lastTick).catch((error: unknown) => log.warn(`[jobs] ${name}: could not check for a missed tick to catch up: ${(error as Error).message}`))
    }
  }
  const sweep = ttlSweepJob(state)
  if (sweep) names.add(TTL_JOB_NAME)
  if (sweep && settings.ttlSweep !== false) {
    scheduler.add({ key: `cron:${TTL_JOB_NAME}`, jobName: TTL_JOB_NAME, params: {}, next: cronTicks(settings.ttlSweep, 'UTC').next })
  }
  names.add(SESSION_SWEEP_JOB_NAME)
  if (settings.sessionSweep !== false) {
    scheduler.add({ key: `cron:${SESSION_SWEEP_JOB_NAME}`, jobName: SESSION_SWEEP_JOB_NAME, params: {}, next: cronTicks(settings.sessionSweep, 'UTC').next })
  }
  const dashboard = watchDashboardSchedules(scheduler, { pollMs: settings.dashboardPollMs, log, jobNames: names })
  return {
    stop: once(async () => {
      dashboard.stop()
      scheduler.stop()
      await interrupt()
      await scheduler.settled()
    })
  }
}

/** Stopping twice (preClose, then onClose) waits on the first stop. */
function once (work: () => Promise<void>): () => Promise<void> {
  let started: Promise<void> | undefined
  return () => { started ??= work(); return started }
}

/** The last tick missed while no instance ran it, run once now; a schedule that never ran has nothing to catch up. */
async function catchUp (scheduler: Scheduler, entry: ScheduleEntry, previous: (before: Date) => Date | undefined, lastTick: (key: string) => Promise<Date | undefined>): Promise<void> {
  const missed = previous(new Date())
  const last = await lastTick(entry.key)
  if (missed && last && last.getTime() < missed.getTime()) scheduler.runNow(entry, missed)
}

// Runs schedules: a timer per schedule (unref'd: it never keeps the process
// alive) fires at each tick; the instance that claims the tick's lease in the
// shared database starts the job through Parse (Parse.Cloud.startJob, so
// _JobStatus records it) and holds the lease until the run ends. Every other
// instance sees the tick taken; a tick that comes while the last run still
// holds the lease is skipped and logged (once per run that holds it). Ticks
// missed while no instance ran are not replayed (see catch-up in start.ts). A
// database outage logs one error when ticks start failing and one line when
// they work again.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import Parse from 'parse/node'
import type { JobLeases } from '../storage/job-lease.js'
import { SCHEDULE_PARAM, SCHEDULED_AT_PARAM, type JobLogger } from './request.js'
import type { JobRuns } from './runs.js'
import type { NextTick } from './ticks.js'
import { episode, type Episode } from './episode-log.js'

export interface ScheduleEntry {
  /** The lease key: one per schedule, the same on every instance. */
  key: string
  jobName: string
  params: Record<string, unknown>
  next: NextTick
  /** Asked before each tick is claimed: false drops the tick (a Dashboard schedule deleted since the last poll). */
  stillWanted?: () => Promise<boolean>
}

export interface SchedulerSettings {
  leaseMs: number
  log: JobLogger
}

/** How often a run that is not going on in this process is looked up in _JobStatus. */
const ELSEWHERE_POLL_MS = 5_000

function pause (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/** setTimeout's longest delay; a later tick is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1

export class Scheduler {
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly entries = new Map<string, { entry: ScheduleEntry, timer?: NodeJS.Timeout }>()
  private readonly ticking = new Set<Promise<void>>()
  private stopped = false
  /** Ticks skipped while a schedule's last run goes on, per schedule. */
  private readonly skips = new Map<string, Episode>()
  /** Ticks that could not run (the database away): one episode for the whole scheduler. */
  private readonly failures: Episode

  constructor (private readonly leases: JobLeases, private readonly runs: JobRuns, private readonly settings: SchedulerSettings) {
    this.failures = episode(settings.log, 'error')
  }

  has (key: string): boolean {
    return this.entries.has(key)
  }

  keys (): string[] {
    return [...this.entries.keys()]
  }

  /** Plans the schedule's first tick after `after` (now, unless a past one-off tick is still due). */
  add (entry: ScheduleEntry, after = new Date()): void {
    this.remove(entry.key)
    this.entries.set(entry.key, { entry })
    this.plan(entry.key, entry.next(after))
  }

  remove (key: string): void {
    clearTimeout(this.entries.get(key)?.timer)
    this.entries.delete(key)
    this.skips.delete(key)
  }

  /** Runs one tick now (catch-up), claimed like any other. */
  runNow (entry: ScheduleEntry, tick: Date): void {
    this.track(this.runTick(entry, tick))
  }

  stop (): void {
    this.stopped = true
    for (const key of [...this.entries.keys()]) this.remove(key)
  }

  /** Settles when every tick being handled has released its lease. */
  async settled (): Promise<void> {
    while (this.ticking.size > 0) await Promise.allSettled([...this.ticking])
  }

  private plan (key: string, tick: Date | undefined): void {
    const slot = this.entries.get(key)
    if (!slot || !tick || this.stopped) return
    const delay = Math.min(Math.max(0, tick.getTime() - Date.now()), MAX_DELAY_MS)
    slot.timer = setTimeout(() => this.fire(key, tick), delay)
    slot.timer.unref()
  }

  private fire (key: string, tick: Date): void {
    const slot = this.entries.get(key)
    if (!slot || this.stopped) return
    // Timers may wake a little early, and long delays come in steps.
    if (Date.now() < tick.getTime()) return this.plan(key, tick)
    this.plan(key, slot.entry.next(tick))
    this.track(this.runTick(slot.entry, tick))
  }

  private track (work: Promise<void>): void {
    this.ticking.add(work)
    void work.finally(() => this.ticking.delete(work))
  }

  /**
   * The run started here ends in this process (directAccess, the default). With
   * directAccess off, startJob goes over HTTP and the run may land on another
   * instance: its _JobStatus row then says when it ends.
   */
  private async runEnds (jobId: string): Promise<void> {
    const local = { ended: false }
    const ends = this.runs.finished(jobId).then(() => { local.ended = true })
    // A local run keeps its lease until it ends, through a shutdown's grace too.
    while (!local.ended) {
      await Promise.race([ends, pause(ELSEWHERE_POLL_MS)])
      if (local.ended || this.runs.running(jobId)) continue
      if (this.stopped) return
      const row = await new Parse.Query('_JobStatus').get(jobId, { useMasterKey: true }).catch(() => undefined)
      if (row?.get('status') !== 'running') return
    }
  }

  private async runTick (entry: ScheduleEntry, tick: Date): Promise<void> {
    const { log, leaseMs } = this.settings
    const at = tick.toISOString()
    try {
      if (entry.stillWanted && !(await entry.stillWanted())) return
      const claim = await this.leases.claim(entry.key, tick, this.holder, leaseMs)
      this.failures.over((count, seconds) => `[jobs] schedules run again: ${count} tick(s) could not run over ${seconds} s`)
      let skips = this.skips.get(entry.key)
      if (!skips) this.skips.set(entry.key, skips = episode(log, 'warn', leaseMs))
      if (claim === 'busy') skips.happened(`[jobs] ${entry.jobName}: skipped the tick of ${at} (${entry.key}): the previous run is still going (later skips while it goes on are counted, not logged)`)
      if (claim !== 'claimed') return
      skips.over((count) => `[jobs] ${entry.jobName}: ${count} tick(s) of ${entry.key} skipped while the previous run went on`)
      const renew = setInterval(() => { this.leases.renew(entry.key, this.holder, leaseMs).catch((error: unknown) => log.warn(`[jobs] ${entry.jobName}: could not renew its lease: ${String(error)}`)) }, Math.max(1000, Math.floor(leaseMs / 3)))
      renew.unref()
      try {
        const jobId = await Parse.Cloud.startJob(entry.jobName, { ...entry.params, [SCHEDULED_AT_PARAM]: at, [SCHEDULE_PARAM]: entry.key })
        await this.runEnds(String(jobId))
      } finally {
        clearInterval(renew)
        await this.leases.release(entry.key, this.holder)
      }
    } catch (error) {
      this.failures.happened(`[jobs] ${entry.jobName}: the tick of ${at} (${entry.key}) could not run: ${(error as Error)?.message ?? String(error)} (until schedules run again, later failures are counted, not logged)`)
    }
  }
}

// The built-in job that re-runs dead queued jobs (all their retries used):
// POST {mount}/jobs/kitRerunDeadJobs with the master key, or the Dashboard's
// "Run now", with { job: 'name' } to re-run every dead job of that name,
// { job, id } for one, and { job, dryRun: true } to list them in the run's
// message without re-running any.
import type { BuiltInJob } from './handler.js'
import { listDeadJobs, rerunDeadJob, type DeadJobEntry } from './queue.js'

export const RERUN_DEAD_JOB_NAME = 'kitRerunDeadJobs'

/** How many dead jobs one message lists. */
const LISTED = 20
/** Dead jobs read at a time. */
const PAGE = 500

export function rerunDeadJobsJob (): BuiltInJob {
  return {
    name: RERUN_DEAD_JOB_NAME,
    options: { description: 'Re-runs dead queued jobs: { job, id? }, or lists them with { job, dryRun: true }' },
    method: async (request) => {
      const { job, id, dryRun } = request.params as { job?: unknown, id?: unknown, dryRun?: unknown }
      if (typeof job !== 'string' || job === '') throw new Error('give the queued job\'s name: { "job": "sendOrderConfirmation" } (and "id" for one dead job, "dryRun": true to list them)')
      // A dryRun of "true" (text, as a Dashboard parameter may be typed) re-ran every dead job it was meant to list.
      if (dryRun !== undefined && typeof dryRun !== 'boolean') throw new Error(`"dryRun" must be true or false (got ${JSON.stringify(dryRun)}): nothing was re-run`)
      if (id !== undefined && typeof id !== 'string') throw new Error(`"id" must be a dead job's id, as text (got ${JSON.stringify(id)}): nothing was re-run`)
      // Page by page, keeping only the entries the message lists: a dead-letter queue may hold many.
      // A re-run that dies again during the walk is not re-run twice: the walk stops at the jobs dead since it began.
      const began = Date.now()
      const shown: DeadJobEntry[] = []
      let found = 0
      let rerun = 0
      let after: DeadJobEntry | undefined
      for (;;) {
        const page = (await listDeadJobs(job, { limit: PAGE, after })).filter((entry) => entry.diedAt.getTime() <= began)
        for (const entry of page) {
          if (id !== undefined && entry.id !== id) continue
          found++
          if (shown.length < LISTED) shown.push(entry)
          if (dryRun !== true && await rerunDeadJob(job, entry.id)) rerun++
        }
        if (page.length < PAGE) break
        after = page.at(-1)
      }
      if (found === 0) return id === undefined ? `no dead jobs of ${job}` : `no dead job ${String(id)} of ${job}`
      const listed = shown.map((entry) => `${entry.id} ${JSON.stringify(entry.params)}`).join('; ')
      const more = found > LISTED ? ` and ${found - LISTED} more` : ''
      if (dryRun === true) return `${found} dead job(s) of ${job}: ${listed}${more}`
      return `re-ran ${rerun} dead job(s) of ${job}: ${listed}${more}`
    }
  }
}

// Registers the declared jobs with Parse.Cloud.job at boot, so Parse's own job
// machinery runs them: POST {mount}/jobs/{name}, Parse.Cloud.startJob, the
// Dashboard's "Run now" and the kit's scheduler all go through it.
import { declaredJobs, jobName } from './registry.js'
import { jobHandler, type BuiltInJob, type JobMethod } from './handler.js'
import { ttlSweepJob } from './ttl.js'
import { sessionSweepJob } from './session-sweep.js'
import { rerunDeadJobsJob } from './dead-jobs.js'
import { currentKitState, type KitState } from '../kit-state.js'

type Cloud = Record<string, (...args: unknown[]) => unknown>

/** The application's jobs, and the kit's own: the expired-session sweep, the re-run of dead queued jobs, and the TTL sweep on PostgreSQL when needed. */
export function registerJobs (cloud: Cloud, state: KitState = currentKitState()): void {
  const builtIn = builtInJobs(state)
  for (const declaration of declaredJobs()) {
    const owner = declaration.owner as Record<string, JobMethod>
    const method: JobMethod = (request) => owner[declaration.method](request)
    const name = jobName(declaration)
    cloud.job(name, jobHandler(name, method, declaration.options))
  }
  for (const job of builtIn) cloud.job(job.name, jobHandler(job.name, job.method, job.options))
}

function builtInJobs (state: KitState): BuiltInJob[] {
  const sweep = ttlSweepJob(state)
  return [sessionSweepJob(state), rerunDeadJobsJob(), ...(sweep ? [sweep] : [])]
}

/** The names of the jobs the kit's handler runs (each run holds a lease): a job registered with Parse.Cloud.job directly has none. */
export function kitJobNames (state: KitState): string[] {
  return [...declaredJobs().map(jobName), ...builtInJobs(state).map((job) => job.name)]
}

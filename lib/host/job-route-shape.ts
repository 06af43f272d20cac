// Parse's routes that start and schedule jobs with the master key (POST /jobs,
// the Dashboard's "Run now"; POST /cloud_code/jobs and PUT /cloud_code/jobs/:id,
// its schedules) read the job's name and the schedule without checking their
// shape: a jobName that is not text, a job_schedule missing or not an object,
// each was a 500 (a TypeError inside Parse), and so was a schedule naming a
// job Parse does not have (its "Cannot Schedule a job that is not deployed", code 1).
import { isJsonObject } from './json-object.js'
import { jobRegistered } from '../parse/parse-calls.js'

const RUN_PATH = /^\/jobs\/?$/i
const SCHEDULE_PATH = /^\/cloud_code\/jobs(?:\/[^/]+)?\/?$/i

/** Why Parse's job routes cannot take this body, or undefined. */
export function jobRouteProblem (method: string, path: string, body: unknown): string | undefined {
  if (method === 'POST' && RUN_PATH.test(path)) {
    const name = isJsonObject(body) ? body.jobName : undefined
    return typeof name === 'string' ? undefined : `jobName must be the name of a job, as text (got ${shapeOf(name)})`
  }
  if ((method === 'POST' || method === 'PUT') && SCHEDULE_PATH.test(path)) {
    const schedule = isJsonObject(body) ? body.job_schedule : undefined
    if (!isJsonObject(schedule)) return `job_schedule must be an object such as {"jobName": "…"} (got ${shapeOf(schedule)})`
    if (schedule.jobName !== undefined && typeof schedule.jobName !== 'string') return `job_schedule.jobName must be the name of a job, as text (got ${shapeOf(schedule.jobName)})`
  }
  return undefined
}

function shapeOf (value: unknown): string {
  if (value === undefined) return 'none'
  if (value === null) return 'null'
  return Array.isArray(value) ? 'a list' : typeof value
}

/** A Dashboard schedule (POST /cloud_code/jobs, PUT /cloud_code/jobs/:id) naming a job Parse does not have for `appId`: its name, or undefined. */
export function unknownScheduledJob (method: string, path: string, body: unknown, appId: string): string | undefined {
  if ((method !== 'POST' && method !== 'PUT') || !SCHEDULE_PATH.test(path) || !isJsonObject(body) || !isJsonObject(body.job_schedule)) return undefined
  const name = body.job_schedule.jobName
  return typeof name === 'string' && !jobRegistered(appId, name) ? name : undefined
}

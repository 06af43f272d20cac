// Reads _JobStatus rows and the kit's run leases straight from PostgreSQL, and starts a Parse job over
// HTTP with the master key (the jobs' shutdown and lost-instance tests).
import type { Test } from 'tap'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { MASTER_KEY, APP_ID, httpRequest } from './kit.js'

const headers = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }

interface StatusRow { objectId: string, status: string, message: string | null, finishedAt: Date | null }

export async function jobStatuses (t: Test, databaseURI: string) {
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  return {
    one: async (id: string) => (await client.query<StatusRow>('SELECT "objectId", status, message, "finishedAt" FROM "_JobStatus" WHERE "objectId" = $1', [id])).rows[0],
    of: async (jobName: string) => (await client.query<StatusRow>('SELECT "objectId", status, message, "finishedAt" FROM "_JobStatus" WHERE "jobName" = $1 ORDER BY "createdAt"', [jobName])).rows,
    /** Whether the run holds its lease in the kit's lease table (the table is made with the first run). */
    leased: async (id: string) => {
      const table = (await client.query('SELECT to_regclass(\'fpk_job_run_leases\') AS name')).rows[0].name
      return table !== null && (await client.query('SELECT 1 FROM fpk_job_run_leases WHERE job_id = $1', [id])).rowCount === 1
    },
    /** A row as Parse writes it when a run starts ("running", Parse's params), begun `ageMs` ago, with no lease: its instance died before the kit's handler ran. */
    insertRunning: async (jobName: string, params: Record<string, unknown>, ageMs: number) => {
      const id = randomBytes(5).toString('hex')
      await client.query(`INSERT INTO "_JobStatus" ("objectId", "createdAt", "updatedAt", "jobName", source, status, params)
        VALUES ($1, now() - $2 * interval '1 millisecond', now() - $2 * interval '1 millisecond', $3, 'api', 'running', $4::jsonb)`, [id, ageMs, jobName, JSON.stringify(params)])
      return id
    },
    /** The run's lease as the kit's handler writes it, held by `holder` for an hour (the lease table must exist). */
    hold: async (id: string, jobName: string, holder: string) => {
      await client.query(`INSERT INTO fpk_job_run_leases (job_id, job_name, holder, params, attempt, lease_until)
        VALUES ($1, $2, $3, '{}'::jsonb, 1, now() + interval '1 hour')`, [id, jobName, holder])
    }
  }
}

export async function startJob (t: Test, origin: string, name: string): Promise<string> {
  const response = await httpRequest(origin, 'POST', `/parse/jobs/${name}`, { headers, body: {} })
  t.equal(response.status, 200, `${name} started`)
  return response.headers.get('x-parse-job-status-id')!
}

// Reads _JobStatus rows straight from PostgreSQL, and starts a Parse job over HTTP with the master key
// (the jobs' shutdown and lost-instance tests).
import type { Test } from 'tap'
import pg from 'pg'
import { MASTER_KEY, APP_ID, httpRequest } from './kit.js'

const headers = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }

interface StatusRow { objectId: string, status: string, message: string | null, finishedAt: Date | null }

export async function jobStatuses (t: Test, databaseURI: string) {
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  return {
    one: async (id: string) => (await client.query<StatusRow>('SELECT "objectId", status, message, "finishedAt" FROM "_JobStatus" WHERE "objectId" = $1', [id])).rows[0],
    of: async (jobName: string) => (await client.query<StatusRow>('SELECT "objectId", status, message, "finishedAt" FROM "_JobStatus" WHERE "jobName" = $1 ORDER BY "createdAt"', [jobName])).rows
  }
}

export async function startJob (t: Test, origin: string, name: string): Promise<string> {
  const response = await httpRequest(origin, 'POST', `/parse/jobs/${name}`, { headers, body: {} })
  t.equal(response.status, 200, `${name} started`)
  return response.headers.get('x-parse-job-status-id')!
}

// The {{jobName}} job, run as Parse runs it: POST /parse/jobs/{{jobName}} with
// the master key, then its _JobStatus row (written by fpk g job {{Name}}).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildApp } from '{{appImport}}'
import { testApp } from './harness.js'

const api = testApp(buildApp, '{{kebab}}-job')

async function runJob (params: Record<string, unknown>): Promise<{ status: string, message?: string }> {
  const app = api.app
  const headers = { 'x-parse-application-id': app.kit.options.appId, 'x-parse-master-key': app.kit.options.masterKey }
  const started = await app.inject({ method: 'POST', url: '/parse/jobs/{{jobName}}', headers, payload: params })
  assert.equal(started.statusCode, 200, started.body)
  const id = started.headers['x-parse-job-status-id']
  assert.ok(id, 'Parse answers the run\'s _JobStatus id')
  const deadline = Date.now() + 60_000
  for (;;) {
    const row = (await app.inject({ method: 'GET', url: `/parse/classes/_JobStatus/${id}`, headers })).json()
    if (row.status === 'succeeded' || row.status === 'failed') return row
    assert.ok(Date.now() < deadline, 'the job finishes within a minute')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

test('{{jobName}} runs and succeeds', async () => {
  const run = await runJob({ dryRun: true })
  assert.equal(run.status, 'succeeded', run.message)
  assert.match(run.message ?? '', /^dry run:/)
})

test('{{jobName}} is refused without the master key', async () => {
  const app = api.app
  const answer = await app.inject({ method: 'POST', url: '/parse/jobs/{{jobName}}', headers: { 'x-parse-application-id': app.kit.options.appId }, payload: {} })
  assert.notEqual(answer.statusCode, 200)
})

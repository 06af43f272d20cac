// The {{jobName}} job, run as Parse runs it: POST /parse/jobs/{{jobName}} with
// the master key, then its _JobStatus row (written by fpk g job {{Name}}).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildApp } from '{{appImport}}'
import { testApp } from './harness.js'

const api = testApp(buildApp, '{{kebab}}-job')

/** A request to the listening app, as a client with the master key would send it. */
async function master (method: string, path: string, body?: unknown, withKey = true): Promise<{ status: number, headers: Headers, json: any }> {
  const app = api.app
  const { port } = app.server.address() as { port: number }
  const headers: Record<string, string> = { 'X-Parse-Application-Id': app.kit.options.appId, 'Content-Type': 'application/json' }
  if (withKey) headers['X-Parse-Master-Key'] = app.kit.options.masterKey
  const response = await fetch(`http://127.0.0.1:${port}/parse${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined }
}

async function runJob (params: Record<string, unknown>): Promise<{ status: string, message?: string }> {
  const started = await master('POST', '/jobs/{{jobName}}', params)
  assert.equal(started.status, 200, JSON.stringify(started.json))
  const id = started.headers.get('x-parse-job-status-id')
  assert.ok(id, 'Parse answers the run\'s _JobStatus id')
  const deadline = Date.now() + 60_000
  for (;;) {
    const row = (await master('GET', `/classes/_JobStatus/${id}`)).json
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
  const answer = await master('POST', '/jobs/{{jobName}}', {}, false)
  assert.notEqual(answer.status, 200)
})

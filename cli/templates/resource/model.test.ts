// The {{Name}} model in the database: its class, its fields and its rules,
// through the whole application (test/harness.ts); written by fpk g model {{Name}}.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildApp } from '{{appImport}}'
import { testApp } from './harness.js'

const api = testApp(buildApp, '{{prefix}}-model')

/** A call with the master key: Parse's own routes are closed to clients, open to it from this machine. */
async function asMaster (method: string, url: string, body?: unknown): Promise<{ status: number, json: any }> {
  const { port } = api.app.server.address() as { port: number }
  const { appId, masterKey } = api.app.kit.options
  const headers: Record<string, string> = { 'X-Parse-Application-Id': appId, 'X-Parse-Master-Key': masterKey }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(`http://127.0.0.1:${port}/parse${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: response.status, json: await response.json() }
}

test('{{Name}} is a class with its declared fields', async () => {
  const schema = await asMaster('GET', '/schemas/{{Name}}')
  assert.equal(schema.status, 200, JSON.stringify(schema.json))
  assert.equal(schema.json.fields.name.type, 'String')
  assert.equal(schema.json.fields.description.type, 'String')
})

test('{{Name}} stores a row with a name and refuses one without', async () => {
  const stored = await asMaster('POST', '/classes/{{Name}}', { name: 'First', description: 'made by the test' })
  assert.equal(stored.status, 201, JSON.stringify(stored.json))
  const refused = await asMaster('POST', '/classes/{{Name}}', { description: 'no name' })
  assert.equal(refused.status, 400)
  assert.equal(refused.json.code, 142, 'name is required')
})

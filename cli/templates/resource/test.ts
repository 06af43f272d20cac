// The {{Name}} endpoints over HTTP: the whole application on a throwaway
// embedded PostgreSQL, called as a client would (written by fpk g resource {{Name}}).
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '{{appImport}}'

const APP_ID = '{{prefix}}-test-app'
const dataDir = mkdtempSync(path.join(tmpdir(), '{{prefix}}-test-'))
chmodSync(dataDir, 0o755) // run as root, PostgreSQL runs as the OS user postgres, which must reach it
let app: FastifyInstance
let base: string
let token: string | undefined

before(async () => {
  process.env.APP_ID = APP_ID
  process.env.MASTER_KEY = '{{prefix}}-test-master-key'
  process.env.SEED_ON_BOOT = 'true' // the demo user's session token
  process.env.ADMIN_PASSWORD = '{{prefix}}-test-admin-password'
  delete process.env.DATABASE_URI // always the embedded database, never a real one
  app = await buildApp({
    fastify: { logger: { level: process.env.TEST_LOG_LEVEL || 'warn' } },
    kit: { dataDir: path.join(dataDir, 'postgres'), ephemeralDatabase: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  base = `http://127.0.0.1:${port}/parse/{{prefix}}`
  token = app.demoToken
})

after(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function call (method: string, url: string, options: { token?: string, body?: unknown } = {}) {
  const headers: Record<string, string> = { 'X-Parse-Application-Id': APP_ID }
  if (options.token) headers['X-Parse-Session-Token'] = options.token
  if (options.body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(base + url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) })
  const text = await response.text()
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined }
}

test('{{createMethod}} needs a session token and a name', async () => {
  assert.ok(token, 'seeding logged the demo user in')
  assert.equal((await call('POST', '/{{createMethod}}', { body: { name: 'No session' } })).status, 400)
  assert.equal((await call('POST', '/{{createMethod}}', { token, body: { description: 'no name' } })).status, 400)
})

test('{{Name}}: create, get, update, list, delete', async () => {
  const created = await call('POST', '/{{createMethod}}', { token, body: { name: 'First', description: 'made by the test' } })
  assert.equal(created.status, 200, created.text)
  assert.equal(created.json.name, 'First')
  assert.ok(created.json.objectId && created.json.createdAt && created.json.updatedAt)
  const id = created.json.objectId as string
  const fetched = await call('GET', `/{{getMethod}}?id=${id}`)
  assert.equal(fetched.json.name, 'First', 'everyone may read it')
  const updated = await call('POST', '/{{updateMethod}}', { token, body: { id, name: 'First, renamed' } })
  assert.equal(updated.status, 200, updated.text)
  assert.equal(updated.json.name, 'First, renamed')
  assert.equal(updated.json.description, 'made by the test', 'fields not sent are kept')
  const list = await call('GET', '/{{listMethod}}?name=First%2C%20renamed&limit=10')
  assert.equal(list.status, 200, list.text)
  assert.deepEqual(list.json.results.map((row: { objectId: string }) => row.objectId), [id])
  assert.equal((await call('POST', '/{{deleteMethod}}', { body: { id } })).status, 400, 'a delete needs a session token')
  assert.deepEqual((await call('POST', '/{{deleteMethod}}', { token, body: { id } })).json, { id, deleted: true })
  assert.equal((await call('GET', `/{{getMethod}}?id=${id}`)).status, 404)
})

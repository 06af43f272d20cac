// Boots the whole application on a throwaway embedded PostgreSQL, listens on a
// free port and calls it over HTTP, as a client would.
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'

const APP_ID = 'smoke-test-app'
const dataDir = mkdtempSync(path.join(tmpdir(), '{{name}}-smoke-'))
chmodSync(dataDir, 0o755) // run as root, PostgreSQL runs as the OS user postgres, which must reach it
let app: FastifyInstance
let base: string

before(async () => {
  process.env.APP_ID = APP_ID
  process.env.MASTER_KEY = 'smoke-test-master-key'
  process.env.SEED_ON_BOOT = 'true'
  process.env.ADMIN_PASSWORD = 'smoke-test-admin-password'
  process.env.DOCS_ENABLED = 'true'
  delete process.env.DATABASE_URI // always the embedded database, never a real one
  app = await buildApp({
    fastify: { logger: { level: process.env.TEST_LOG_LEVEL || 'warn' } },
    kit: { dataDir: path.join(dataDir, 'postgres'), ephemeralDatabase: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  base = `http://127.0.0.1:${port}`
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

test('health, seeded data and a demo session', async () => {
  assert.equal((await call('GET', '/parse/health')).status, 200)
  assert.ok(app.demoToken, 'seeding logged the demo user in')
  const list = await call('GET', '/parse/notes/listNotes?limit=10')
  assert.equal(list.status, 200, list.text)
  assert.ok(list.json.results.some((note: { slug: string }) => note.slug === 'welcome'), 'the published sample note is public')
  assert.ok(!list.json.results.some((note: { slug: string }) => note.slug === 'draft-ideas'), 'the draft is not')
})

test('the Note endpoints: create, get, update, list, delete', async () => {
  const token = app.demoToken
  assert.equal((await call('POST', '/parse/notes/createNote', { body: { title: 'No session' } })).status, 400, 'a write needs a session token')
  const created = await call('POST', '/parse/notes/createNote', { token, body: { title: 'Smoke', status: 'published' } })
  assert.equal(created.status, 200, created.text)
  assert.equal(created.json.title, 'Smoke')
  assert.ok(created.json.objectId && created.json.createdAt && created.json.slug)
  const id = created.json.objectId as string
  const fetched = await call('GET', `/parse/notes/getNote?id=${id}`)
  assert.equal(fetched.json.title, 'Smoke')
  const updated = await call('POST', '/parse/notes/updateNote', { token, body: { id, title: 'Smoke, again' } })
  assert.equal(updated.json.title, 'Smoke, again', updated.text)
  const list = await call('GET', '/parse/notes/listNotes?status=published&limit=50')
  assert.ok(list.json.results.some((note: { objectId: string }) => note.objectId === id))
  const deleted = await call('POST', '/parse/notes/deleteNote', { token, body: { id } })
  assert.deepEqual(deleted.json, { id, deleted: true })
  assert.equal((await call('GET', `/parse/notes/getNote?id=${id}`)).status, 404)
})

test('Parse REST is closed; the API docs are served', async () => {
  assert.equal((await call('GET', '/parse/classes/Note')).status, 403)
  const docs = await call('GET', '/api-docs/json')
  assert.equal(docs.status, 200)
  assert.ok(docs.json.paths['/notes/createNote'], 'the docs list the declared endpoints')
})

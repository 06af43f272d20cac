// Boots the whole application (test/harness.ts) and calls it over HTTP, as a
// client would: health, the seeded notes, the Note endpoints and the docs.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildApp } from '../src/app.js'
import { testApp } from './harness.js'

const api = testApp(buildApp, 'smoke')
const { call } = api

test('health, seeded data and a demo session', async () => {
  assert.equal((await call('GET', `${api.mount}/health`)).status, 200)
  assert.ok(api.token, 'seeding logged the demo user in')
  const list = await call('GET', `${api.mount}/notes/listNotes?limit=10`)
  assert.equal(list.status, 200, list.text)
  assert.ok(list.json.results.some((note: { slug: string }) => note.slug === 'welcome'), 'the published sample note is public')
  assert.ok(!list.json.results.some((note: { slug: string }) => note.slug === 'draft-ideas'), 'the draft is not')
})

test('the Note endpoints: create, get, update, list, delete', async () => {
  const token = api.token
  assert.equal((await call('POST', `${api.mount}/notes/createNote`, { body: { title: 'No session' } })).status, 400, 'a write needs a session token')
  const created = await call('POST', `${api.mount}/notes/createNote`, { token, body: { title: 'Smoke', status: 'published' } })
  assert.equal(created.status, 200, created.text)
  assert.equal(created.json.title, 'Smoke')
  assert.ok(created.json.objectId && created.json.createdAt && created.json.slug)
  const id = created.json.objectId as string
  const fetched = await call('GET', `${api.mount}/notes/getNote?id=${id}`)
  assert.equal(fetched.json.title, 'Smoke')
  const updated = await call('POST', `${api.mount}/notes/updateNote`, { token, body: { id, title: 'Smoke, again' } })
  assert.equal(updated.json.title, 'Smoke, again', updated.text)
  const list = await call('GET', `${api.mount}/notes/listNotes?status=published&limit=50`)
  assert.ok(list.json.results.some((note: { objectId: string }) => note.objectId === id))
  const deleted = await call('POST', `${api.mount}/notes/deleteNote`, { token, body: { id } })
  assert.deepEqual(deleted.json, { id, deleted: true })
  assert.equal((await call('GET', `${api.mount}/notes/getNote?id=${id}`)).status, 404)
})

test('Parse REST is closed; the API docs are served', async () => {
  assert.equal((await call('GET', `${api.mount}/classes/Note`)).status, 403)
  const docs = await call('GET', '/api-docs/json')
  assert.equal(docs.status, 200)
  assert.ok(docs.json.paths['/notes/createNote'], 'the docs list the declared endpoints')
})

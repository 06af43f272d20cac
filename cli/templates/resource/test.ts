// The {{Name}} endpoints over HTTP: the whole application (test/harness.ts),
// called as a client would (written by fpk g resource {{Name}}).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildApp } from '{{appImport}}'
import { testApp } from './harness.js'

const api = testApp(buildApp, '{{prefix}}')
/** A call to this resource's endpoints, under the application's mount path (kitPlugin's mountPath, /parse unless changed). */
const call: typeof api.call = (method, url, options) => api.call(method, `${api.app.kit.options.mountPath.replace(/\/$/, '')}/{{prefix}}${url}`, options)

test('{{createMethod}} needs a session token and a name', async () => {
  const token = api.token
  assert.ok(token, 'seeding logged the demo user in')
  assert.equal((await call('POST', '/{{createMethod}}', { body: { name: 'No session' } })).status, 400)
  assert.equal((await call('POST', '/{{createMethod}}', { token, body: { description: 'no name' } })).status, 400)
})

test('{{Name}}: create, get, update, list, delete', async () => {
  const token = api.token
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

test('{{listMethod}} pages with after: every row once, newest first; skip is refused', async () => {
  const token = api.token
  const made: string[] = []
  for (const description of ['one', 'two', 'three']) {
    const created = await call('POST', '/{{createMethod}}', { token, body: { name: 'Paged', description } })
    assert.equal(created.status, 200, created.text)
    made.unshift(created.json.objectId)
  }
  const seen: string[] = []
  let page = await call('GET', '/{{listMethod}}?name=Paged&limit=2')
  assert.equal(page.status, 200, page.text)
  assert.deepEqual([page.json.count, page.json.countKind], [3, 'exact'], 'counted exactly up to 1000')
  seen.push(...page.json.results.map((row: { objectId: string }) => row.objectId))
  while (page.json.next) {
    page = await call('GET', `/{{listMethod}}?name=Paged&limit=2&after=${encodeURIComponent(page.json.next)}`)
    assert.equal(page.status, 200, page.text)
    seen.push(...page.json.results.map((row: { objectId: string }) => row.objectId))
  }
  assert.deepEqual(seen, made, 'two pages, newest first, the last one saying next: null')
  const skipped = await call('GET', '/{{listMethod}}?name=Paged&skip=2')
  assert.equal(skipped.status, 400, 'offset paging is refused, not ignored')
  assert.match(skipped.json.error, /`after`/, 'the refusal names the parameter to use')
  for (const id of made) assert.equal((await call('POST', '/{{deleteMethod}}', { token, body: { id } })).status, 200)
})

// Parse Server keeps process-wide state, so a process runs one kit at a time:
// a second registration while one runs is refused with a message saying why;
// closing the first frees the process. And fastify.kit.indexesApplied lets a
// caller wait for the declared indexes instead of polling the catalogue.
import t from 'tap'
import Fastify from 'fastify'
import { BaseModel, ParseClass, ParseField, applyAllIndexes } from '../lib/index.js'
import { kitPlugin } from '../plugin.js'
import { APP_ID, MASTER_KEY, startKit } from './helpers/kit.js'

@ParseClass('Shelf')
class Shelf extends BaseModel {
  @ParseField({ type: 'String', unique: true }) declare label: string
  @ParseField({ type: 'Number', index: true }) declare height: number
}

t.test('a second registration while a kit runs is refused clearly; the first keeps serving', async (t) => {
  t.ok(Shelf.name)
  const kit = await startKit(t, { indexes: false })
  const other = Fastify({ logger: false })
  await t.rejects(async () => { await other.register(kitPlugin, { appId: 'second-app', masterKey: MASTER_KEY }) },
    new RegExp(`kitPlugin is already registered in this process \\(app id "${APP_ID}"\\).*Close the other Fastify instance first`))
  await other.close().catch(() => {})
  t.equal((await kit.request('GET', '/parse/health')).status, 200, 'the running kit still answers')
  await kit.app.kit.indexesApplied
  t.pass('with indexes: false, indexesApplied settles at once')
})

t.test('after close, the same process registers a kit again', async (t) => {
  const kit = await startKit(t, { indexes: false })
  t.equal((await kit.request('GET', '/parse/health')).status, 200)
})

t.test('indexesApplied settles once the declared indexes are in place', async (t) => {
  const kit = await startKit(t)
  t.type(kit.app.kit.indexesApplied, Promise)
  await kit.app.kit.indexesApplied
  const reports = (await applyAllIndexes(kit.app)).filter((report) => report.className === 'Shelf')
  t.ok(reports.length >= 2, 'the unique label and the height index are declared')
  t.same(reports.filter((report) => report.status !== 'exists'), [], 'every one was already applied when the promise settled')
})

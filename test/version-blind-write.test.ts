// A versioned class refuses an update that carries no version (a blind write),
// unless the master key asks for the overwrite. Runs on either database lane.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CONFLICT, ParseClass, ParseField, ParseVersionField } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

@ParseClass('Bin')
class Bin extends BaseModel {
  @ParseField({ type: 'Number' }) declare quantity: number
  @ParseVersionField() declare version: number
}

t.test('blind writes to a versioned class', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [{ path: '/classes/*' }] })
  const created = await kit.request('POST', '/parse/classes/Bin', { headers: appHeaders, body: { quantity: 1 } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const stored = async () => (await kit.request('GET', `/parse/classes/Bin/${id}`, { headers: masterHeaders })).json

  t.test('REST PUT without the version is refused and changes nothing', async (t) => {
    const blind = await kit.request('PUT', `/parse/classes/Bin/${id}`, { headers: appHeaders, body: { quantity: 50 } })
    t.equal(blind.status, 400, blind.text)
    t.match(blind.json, { code: Parse.Error.VALIDATION_ERROR, error: /Bin uses optimistic locking: an update must carry the version it was read at/ })
    t.match(await stored(), { quantity: 1, version: 1 })
  })

  t.test('createWithoutData(id).set(…).save() is refused too', async (t) => {
    const blind = Bin.createWithoutData(id) as Bin
    blind.quantity = 60
    await t.rejects(blind.save(), { code: Parse.Error.VALIDATION_ERROR, message: /optimistic locking/ })
    t.match(await stored(), { quantity: 1, version: 1 })
  })

  t.test('with the version read, the update is checked as before', async (t) => {
    const ok = await kit.request('PUT', `/parse/classes/Bin/${id}`, { headers: appHeaders, body: { quantity: 2, version: 1 } })
    t.equal(ok.status, 200, ok.text)
    const stale = await kit.request('PUT', `/parse/classes/Bin/${id}`, { headers: appHeaders, body: { quantity: 3, version: 1 } })
    t.equal(stale.json?.code, CONFLICT, 'a stale version is still a conflict')
    t.match(await stored(), { quantity: 2, version: 2 })
  })

  t.test('the master key may overwrite without reading first (and the version still moves on)', async (t) => {
    const forced = await kit.request('PUT', `/parse/classes/Bin/${id}`, { headers: masterHeaders, body: { quantity: 9 } })
    t.equal(forced.status, 200, forced.text)
    t.match(await stored(), { quantity: 9, version: 3 })
  })
})

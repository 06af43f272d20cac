// Handlers that act for a user, called with the master key alone: the master key
// passes requiresAuth, so the handler itself answers a clear 4xx, never a 500.
import t from 'tap'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { Note } from '../fixtures/models/Note.js'
import { Order } from '../fixtures/models/Order.js'
import { Product } from '../fixtures/models/Product.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')
const master = { useMasterKey: true }

t.test('the example app with only the master key', async (t) => {
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions') })
  const asMaster = (url: string, body: unknown) => kit.request('POST', `/parse${url}`, { headers: masterHeaders, body })
  const customer = await kit.signUp('mia')
  const lamp = await new Product({ name: 'Lamp', sku: 'MK-LAMP', priceCents: 100, stock: 5 }).save(null, master)
  const placed = await kit.request('POST', '/parse/orders/createOrder', {
    headers: { ...appHeaders, 'x-parse-session-token': customer.token },
    body: { lines: [{ product: lamp.id, quantity: 1 }] }
  })
  t.equal(placed.status, 200, placed.text)

  t.test('createNote: 119, a note needs an owner', async (t) => {
    for (const url of ['/notes/createNote', '/functions/createNote']) {
      const answer = await asMaster(url, { title: 'by the master key' })
      t.equal(answer.status, 400, answer.text)
      t.equal(answer.json.code, 119)
      t.match(answer.json.error, /send X-Parse-Session-Token/)
    }
    t.equal(await new Parse.Query(Note).equalTo('title', 'by the master key').count(master), 0, 'nothing was written')
  })

  t.test('setStatus: 119, the master key is not staff', async (t) => {
    const answer = await asMaster('/orders/setStatus', { id: placed.json.id, status: 'paid' })
    t.equal(answer.status, 400, answer.text)
    t.equal(answer.json.code, 119)
    t.match(answer.json.error, /master key alone is not staff/)
    t.equal((await new Parse.Query(Order).get(placed.json.id, master)).status, 'pending', 'the order did not move')
  })

  t.test('createOrder: 119, an order needs a customer; no stock taken', async (t) => {
    const answer = await asMaster('/orders/createOrder', { lines: [{ product: lamp.id, quantity: 1 }] })
    t.equal(answer.status, 400, answer.text)
    t.equal(answer.json.code, 119)
    await lamp.fetch(master)
    t.equal(lamp.stock, 4, 'only the customer\'s order took stock')
  })

  t.test('what the master key may do still works', async (t) => {
    const read = await kit.request('GET', `/parse/orders/getOrder?id=${placed.json.id}`, { headers: masterHeaders })
    t.equal(read.status, 200, read.text)
    const note = await new Note({ title: 'seeded' }).save(null, master)
    const updated = await asMaster('/notes/updateNote', { id: note.id, title: 'edited', status: 'published' })
    t.equal(updated.status, 200, updated.text)
    t.equal(updated.json.title, 'edited')
    t.same((await asMaster('/notes/deleteNote', { id: note.id })).json, { id: note.id, deleted: true })
  })
})

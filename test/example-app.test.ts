// The example shop against the real server: order flow, status machine, seeding.
import t from 'tap'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { addUsersToRole, CONFLICT } from '../lib/index.js'
import { runExampleSeed } from '../fixtures/shop-seed.js'
import { sentNotifications } from '../fixtures/notifications.js'
import { Product } from '../fixtures/models/Product.js'
import { Order } from '../fixtures/models/Order.js'
import { APP_ID, MASTER_KEY, appHeaders, lane, masterHeaders, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')
const master = { useMasterKey: true }

t.test('the example shop', async (t) => {
  // The shop queues its order confirmations on PostgreSQL (MongoDB has no queue: it sends after commit).
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions'), jobs: { queue: lane.kind !== 'mongo' } })
  const as = (token?: string) => token ? { ...appHeaders, 'x-parse-session-token': token } : appHeaders
  const post = (url: string, body: unknown, token?: string) => kit.request('POST', `/parse${url}`, { headers: as(token), body })
  const get = (url: string, token?: string) => kit.request('GET', `/parse${url}`, { headers: as(token) })

  t.test('two seeds at once both finish and create each thing once; seeding again creates nothing, and says so', async (t) => {
    const lines: string[] = []
    // Both find nothing, then both create: the one that loses each race finds the other's row instead of failing.
    const [first, beside] = await Promise.all([1, 2].map(() => runExampleSeed({ sampleData: true, log: (line) => lines.push(line), warn: () => {} })))
    const createdOnce = (kind: string) => [...first.report.createdOf(kind), ...beside.report.createdOf(kind)].sort()
    t.same(createdOnce('roles'), ['Admin', 'Editor', 'SuperAdmin'])
    t.same(createdOnce('users'), ['admin', 'demo'])
    t.same(createdOnce('notes'), ['draft-ideas', 'welcome'])
    t.same(createdOnce('products'), ['CHAIR-01', 'LAMP-01', 'MUG-01'])
    t.equal(await new Parse.Query(Parse.Role).equalTo('name', 'Admin').count(master), 1, 'one Admin role')
    t.match(first.demoToken, /^r:/, 'the demo user logs in (for the ready curl)')
    const again: string[] = []
    const second = await runExampleSeed({ sampleData: true, log: (line) => again.push(line), warn: () => {} })
    t.equal(second.report.total, 0)
    t.same(again.filter((line) => line.startsWith('[seed]')), [
      '[seed] roles created: none (already present)',
      '[seed] users created: none (already present)',
      '[seed] notes created: none (already present)',
      '[seed] products created: none (already present)',
      '[seed] coupons created: none (already present)'
    ])
    const warnings: string[] = []
    await runExampleSeed({ sampleData: false, log: () => {}, warn: (line) => warnings.push(line) })
    t.match(warnings.join('\n'), /ADMIN_PASSWORD is empty/, 'the default admin password is warned about on every run')
  })

  const staff = await kit.signUp('sam')
  const admin = await kit.signUp('ada')
  const cara = await kit.signUp('cara')
  const dan = await kit.signUp('dan')
  await addUsersToRole('Editor', [staff.id])
  await addUsersToRole('Admin', [admin.id]) // Admin sits inside Editor: ada is staff through the role graph
  const products = await new Parse.Query(Product).find(master)
  const lamp = products.find((p) => p.sku === 'LAMP-01')!
  const chair = products.find((p) => p.sku === 'CHAIR-01')!
  const coupon = await new Parse.Query('Coupon').equalTo('code', 'WELCOME10').first(master)

  const place = (token: string, body: Record<string, unknown>) => post('/orders/createOrder', body, token)
  const newOrder = async (token = cara.token) => {
    const placed = await place(token, { lines: [{ product: lamp.id, quantity: 1 }] })
    if (placed.status !== 200) throw new Error(placed.text)
    return placed.json.id as string
  }
  const setStatus = (id: string, status: string, token: string) => post('/orders/setStatus', { id, status }, token)

  t.test('listProducts: by name, a page at a time', async (t) => {
    const list = await get('/products/listProducts?limit=2')
    t.equal(list.status, 200, list.text)
    t.same([list.json.count, list.json.countKind], [3, 'exact'], 'three products: under the cap of 1000, counted exactly')
    t.same(Object.keys(list.json.results[0]).sort(), ['name', 'objectId', 'priceCents', 'sku', 'stock'])
    t.same(list.json.results.map((p: { name: string }) => p.name), ['Chair', 'Desk lamp'])
    t.type(list.json.next, 'string')
    const rest = await get(`/products/listProducts?limit=2&after=${encodeURIComponent(list.json.next)}`)
    t.same(rest.json.results.map((p: { name: string }) => p.name), ['Mug'], 'the next page starts after the last row')
    t.equal(rest.json.next, null, 'and is the last')
    t.equal(rest.json.count, 3, 'the count is of the whole list, on every page')
  })

  t.test('listNotes: newest first, a page at a time, the count capped', async (t) => {
    const writer = await kit.signUp('noel')
    const made: string[] = []
    for (let i = 0; i < 5; i++) {
      const note = await post('/notes/createNote', { title: `page note ${i}`, status: i === 4 ? 'draft' : 'published' }, writer.token)
      t.equal(note.status, 200, note.text)
      made.unshift(note.json.objectId)
    }
    const page = (query: string, token?: string) => get(`/notes/listNotes?${query}`, token)
    const first = await page('limit=2', writer.token)
    t.equal(first.status, 200, first.text)
    t.same(Object.keys(first.json).sort(), ['count', 'countKind', 'next', 'results'])
    t.same(first.json.results.map((n: { objectId: string }) => n.objectId), made.slice(0, 2), 'the newest two, the writer\'s draft first')
    t.equal(first.json.countKind, 'exact')
    const seen = [...first.json.results]
    for (let next = first.json.next as string | null; next;) {
      const more = await page(`limit=2&after=${encodeURIComponent(next)}`, writer.token)
      t.equal(more.status, 200, more.text)
      t.equal(more.json.count, first.json.count, 'every page answers the same count')
      seen.push(...more.json.results)
      next = more.json.next
    }
    t.equal(seen.length, first.json.count, 'paging to the end lists every counted note once')
    t.equal(new Set(seen.map((n) => n.objectId)).size, seen.length)
    const anonymous = await page('limit=1000')
    t.notOk(anonymous.json.results.some((n: { objectId: string }) => n.objectId === made[0]), 'the draft is its writer\'s only')
    t.equal(anonymous.json.count, anonymous.json.results.length)
    const published = await page('status=published&limit=2', writer.token)
    t.ok(published.json.results.every((n: { status: string }) => n.status === 'published'), 'the status filter stays')
    const mixed = await page(`status=draft&after=${encodeURIComponent(published.json.next)}`, writer.token)
    t.equal(mixed.status, 400, 'a cursor of another filter is not this list\'s')
    t.match(mixed.json, { code: 142, error: /^after: not a cursor of this list/ })
    const tampered = await page(`after=${encodeURIComponent(first.json.next.replace(/^./, (c: string) => c === 'A' ? 'B' : 'A'))}`)
    t.match([tampered.status, tampered.json.code, tampered.json.error], [400, 142, /^after:/])
    for (const param of ['skip=2', 'page=2', 'offset=2']) {
      const offset = await page(`limit=2&${param}`)
      t.equal(offset.status, 400, `${param} is refused, not ignored`)
      t.match(offset.json, { code: 142, error: /is not supported: page with `after`/ })
    }
  })

  t.test('createOrder: customer from the session, stored prices, coupons, client totals ignored', async (t) => {
    const noSession = await post('/orders/createOrder', { lines: [{ product: lamp.id, quantity: 1 }] })
    t.equal(noSession.status, 400)
    const placed = await place(cara.token, {
      customer: dan.id, totalCents: 1, status: 'shipped', note: 'ring twice', deliverAfter: '2026-12-24T10:00:00.000Z',
      dropPoint: { latitude: 52.52, longitude: 13.40 }, coupons: [coupon!.id],
      lines: [{ product: lamp.id, quantity: 2 }, { product: chair.id, quantity: 1 }]
    })
    t.equal(placed.status, 200, placed.text)
    const expected = Math.round((2 * 3900 + 12900) * 0.9)
    t.same(placed.json, { id: placed.json.id, totalCents: expected, status: 'pending' })
    const order = await new Parse.Query(Order).include('customer').get(placed.json.id, master)
    t.equal(order.customer.id, cara.id, 'the customer is the caller, not the body value')
    t.equal(order.note, 'ring twice')
    t.equal(order.deliverAfter.toISOString(), '2026-12-24T10:00:00.000Z')
    t.equal(order.dropPoint.latitude, 52.52)
    await lamp.fetch(master)
    t.equal(lamp.stock, 23, 'stock taken')
    t.equal(lamp.version, 2, 'version-checked save')
    // Sent by the queued job, after the answer: wait for it.
    await until('the order confirmation', () => sentNotifications.some((sent) => sent.orderId === placed.json.id), scaled(30_000))
    t.equal(sentNotifications.filter((sent) => sent.orderId === placed.json.id).length, 1, 'the confirmation went out once, after commit')
    const read = await get(`/orders/getOrder?id=${placed.json.id}`, cara.token)
    t.same(read.json.lines.map((line: any) => [line.name, line.quantity, line.unitCents]).sort(), [['Chair', 1, 12900], ['Desk lamp', 2, 3900]])
    t.equal(read.json.deliverAfter, '2026-12-24T10:00:00.000Z', 'the date is answered as ISO text, as createOrder took it')
    lamp.priceCents = 4500
    await lamp.save(null, master)
    const later = await get(`/orders/getOrder?id=${placed.json.id}`, cara.token)
    t.ok(later.json.lines.every((line: any) => line.unitCents !== 4500), 'line prices are frozen at purchase')
  })

  t.test('createOrder takes coupons by the code a customer types', async (t) => {
    const byCode = await place(cara.token, { couponCodes: ['WELCOME10'], lines: [{ product: chair.id, quantity: 1 }] })
    t.equal(byCode.status, 200, byCode.text)
    t.equal(byCode.json.totalCents, Math.round(12900 * 0.9), 'WELCOME10: 10 % off')
    const stored = await new Parse.Query(Order).get(byCode.json.id, master)
    t.same(stored.coupons.map((c: { id?: string }) => c.id), [coupon!.id], 'the order records the coupon it used')
    const both = await place(cara.token, { coupons: [coupon!.id], couponCodes: ['WELCOME10', 'WELCOME10'], lines: [{ product: chair.id, quantity: 1 }] })
    t.equal(both.json.totalCents, Math.round(12900 * 0.9), 'named twice, applied once')
    const unknown = await place(cara.token, { couponCodes: ['NOPE'], lines: [{ product: chair.id, quantity: 1 }] })
    t.equal(unknown.status, 404)
    t.match(unknown.json, { code: 101, error: 'Unknown coupon NOPE' })
    const notText = await place(cara.token, { couponCodes: [42], lines: [{ product: chair.id, quantity: 1 }] })
    t.equal(notText.status, 400)
    t.match(notText.json, { code: 142, error: /couponCodes\/0 must be string/ })
  })

  t.test('createOrder refuses bad lines, unknown products and short stock, writing nothing', async (t) => {
    // Confirmations of earlier orders may still arrive (the queue sends them): only one for an order placed here would be wrong.
    const earlier = new Set((await new Parse.Query(Order).limit(1000).find(master)).map((order) => order.id))
    // The list is the process's: what kits before this one sent is not this case's.
    const sentBefore = sentNotifications.length
    const orders = await new Parse.Query(Order).exists('objectId').count(master)
    for (const quantity of [0, 1.5, -1, '2']) {
      const bad = await place(cara.token, { lines: [{ product: lamp.id, quantity }] })
      t.equal(bad.json.code, 142, `quantity ${JSON.stringify(quantity)} → 142`)
    }
    const unknown = await place(cara.token, { lines: [{ product: 'nope000000', quantity: 1 }] })
    t.equal(unknown.status, 404)
    t.equal(unknown.json.code, 101)
    await chair.fetch(master)
    const short = await place(cara.token, { lines: [{ product: lamp.id, quantity: 1 }, { product: chair.id, quantity: chair.stock + 1 }] })
    t.equal(short.json.code, 142)
    t.match(short.json.error, /left/)
    const stock = lamp.stock
    await lamp.fetch(master)
    t.equal(lamp.stock, stock, 'no stock was taken')
    t.equal(await new Parse.Query(Order).exists('objectId').count(master), orders, 'no order was written')
    t.same(sentNotifications.slice(sentBefore).filter((sent) => !earlier.has(sent.orderId)), [], 'and nothing was sent')
  })

  t.test('a stale save of a product answers CONFLICT', async (t) => {
    const stale = await new Parse.Query(Product).get(chair.id!, master)
    await newOrderFor(chair.id!)
    const outcome = await stale.save({ name: 'Old chair' }, master).then(() => 'saved', (error: Parse.Error) => error.code)
    t.equal(outcome, CONFLICT)
  })

  async function newOrderFor (productId: string) {
    const placed = await place(cara.token, { lines: [{ product: productId, quantity: 1 }] })
    t.equal(placed.status, 200, placed.text)
  }

  t.test('getOrder: the customer and staff read it; anyone else gets 101', async (t) => {
    const id = await newOrder()
    t.equal((await get(`/orders/getOrder?id=${id}`, cara.token)).json.objectId, id)
    t.equal((await get(`/orders/getOrder?id=${id}`, staff.token)).json.objectId, id)
    const other = await get(`/orders/getOrder?id=${id}`, dan.token)
    t.equal(other.status, 404)
    t.equal(other.json.code, 101)
    t.equal((await get('/orders/getOrder?id=doesnotexist', cara.token)).json.code, 101)
  })

  t.test('the transition table, whoever asks', async (t) => {
    const allowed: Array<[string, string, string]> = [['pending', 'paid', 'staff'], ['pending', 'cancelled', 'staff'], ['paid', 'shipped', 'staff'], ['paid', 'cancelled', 'staff']]
    for (const [from, to] of allowed) {
      const id = await newOrder()
      if (from === 'paid') t.equal((await setStatus(id, 'paid', staff.token)).status, 200)
      const moved = await setStatus(id, to, staff.token)
      t.same(moved.json, { id, status: to }, `${from} → ${to} by staff`)
    }
    for (const final of ['shipped', 'cancelled']) {
      const id = await newOrder()
      await setStatus(id, 'paid', admin.token)
      await setStatus(id, final, admin.token)
      for (const next of ['pending', 'paid', 'shipped', 'cancelled'].filter((s) => s !== final)) {
        const refused = await setStatus(id, next, admin.token)
        t.equal(refused.json.code, 142, `${final} → ${next} refused even for an admin`)
        t.equal(refused.json.error, `An order cannot go from ${final} to ${next}`, 'the message names both states')
      }
    }
    const skip = await setStatus(await newOrder(), 'shipped', staff.token)
    t.equal(skip.json.error, 'An order cannot go from pending to shipped')
    const byCustomer = await setStatus(await newOrder(), 'shipped', cara.token)
    t.equal(byCustomer.json.code, 142, 'the table is checked before roles')
  })

  t.test('roles: the customer may only cancel a pending order; an Admin passes as staff', async (t) => {
    const id = await newOrder()
    const pay = await setStatus(id, 'paid', cara.token)
    t.equal(pay.json.code, 119, 'a customer cannot pay')
    t.equal((await setStatus(id, 'paid', admin.token)).json.status, 'paid', 'Admin counts as staff (Admin is inside Editor)')
    const cancelPaid = await setStatus(id, 'cancelled', cara.token)
    t.equal(cancelPaid.json.code, 119, 'the customer cannot cancel once paid')
    const mine = await newOrder()
    t.same((await setStatus(mine, 'cancelled', cara.token)).json, { id: mine, status: 'cancelled' }, 'the customer cancels a pending order')
    const theirs = await newOrder(dan.token)
    t.equal((await setStatus(theirs, 'cancelled', cara.token)).json.code, 101, "someone else's order is not found")
    const same = await setStatus(id, 'paid', cara.token)
    t.same(same.json, { id, status: 'paid' }, 're-saving the same status is not a transition')
  })

  t.test('the ACL is rebuilt on every save', async (t) => {
    const id = await newOrder()
    const acl = async () => (await new Parse.Query(Order).get(id, master)).getACL()!.toJSON()
    t.same(await acl(), { 'role:Admin': { read: true, write: true }, 'role:Editor': { read: true, write: true }, [cara.id]: { read: true, write: true } })
    await setStatus(id, 'paid', staff.token)
    t.same((await acl())[cara.id], { read: true }, 'the customer loses write once it is not pending')
    t.notOk('*' in await acl(), 'no public access')
    const bare = await new Order({ customer: Parse.User.createWithoutData(dan.id) }).save(null, master)
    t.equal(bare.status, 'pending', 'a new order without a status becomes pending')
  })

  t.test('the cancelStaleOrders job cancels pending orders older than the cut-off, and only those', async (t) => {
    const stale = await newOrder()
    const paid = await newOrder()
    await setStatus(paid, 'paid', staff.token)
    const started = await kit.request('POST', '/parse/jobs/cancelStaleOrders', { headers: masterHeaders, body: { olderThanHours: 0 } })
    t.equal(started.status, 200, started.text)
    const jobId = started.headers.get('x-parse-job-status-id')!
    let status: Record<string, any> = {}
    await until('the job to finish', async () => {
      status = (await kit.request('GET', `/parse/classes/_JobStatus/${jobId}`, { headers: masterHeaders })).json
      return status.status === 'succeeded' || status.status === 'failed'
    })
    t.equal(status.status, 'succeeded', status.message)
    t.match(status.message, /^cancelled \d+ order\(s\) pending since before/)
    t.equal((await new Parse.Query(Order).get(stale, master)).status, 'cancelled', 'the pending order is cancelled')
    t.equal((await new Parse.Query(Order).get(paid, master)).status, 'paid', 'a paid order is left alone')
    const fresh = await newOrder()
    const again = await kit.request('POST', '/parse/jobs/cancelStaleOrders', { headers: masterHeaders, body: {} })
    await until('the second run to finish', async () => (await kit.request('GET', `/parse/classes/_JobStatus/${again.headers.get('x-parse-job-status-id')}`, { headers: masterHeaders })).json.status === 'succeeded')
    t.equal((await new Parse.Query(Order).get(fresh, master)).status, 'pending', 'with the default cut-off (a day) a new order stays pending')
  })

  t.test('the pruneJobStatus schedule\'s job deletes the rows of finished runs, not its own', async (t) => {
    const started = await kit.request('POST', '/parse/jobs/pruneJobStatus', { headers: masterHeaders, body: { keepDays: 0 } })
    t.equal(started.status, 200, started.text)
    const jobId = started.headers.get('x-parse-job-status-id')!
    let status: Record<string, any> = {}
    await until('the prune to finish', async () => {
      status = (await kit.request('GET', `/parse/classes/_JobStatus/${jobId}`, { headers: masterHeaders })).json
      return status.status === 'succeeded' || status.status === 'failed'
    })
    t.equal(status.status, 'succeeded', status.message)
    t.match(status.message, /^deleted [1-9]\d* finished run\(s\)/, 'the cancelStaleOrders runs were finished and older')
    const left = await kit.request('GET', `/parse/classes/_JobStatus?where=${encodeURIComponent(JSON.stringify({ jobName: 'cancelStaleOrders' }))}`, { headers: masterHeaders })
    t.same(left.json.results, [], 'their rows are gone')
  })

  t.test('seed:remote runs the same seed over REST against the running server', async (t) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx/esm', path.join(fixtures, 'seed-remote.ts')], {
      env: { ...process.env, SERVER_URL: `${kit.origin}/parse`, APP_ID, MASTER_KEY, ADMIN_PASSWORD: 'x' },
      timeout: scaled(60_000)
    })
    t.match(stdout, /roles created: none \(already present\)/)
    t.match(stdout, /demo login refused \(119 .*route restriction/, 'route restriction blocks /login, and the seed carries on')
    t.match(stdout, /done: 0 created/)
  })

  t.test('seed:remote with a master key the server does not accept: one coded line, no stack', async (t) => {
    const failed = await promisify(execFile)(process.execPath, ['--import', 'tsx/esm', path.join(fixtures, 'seed-remote.ts')], {
      env: { ...process.env, SERVER_URL: `${kit.origin}/parse`, APP_ID, MASTER_KEY: 'not-the-master-key', ADMIN_PASSWORD: 'x', DEBUG: '' },
      timeout: scaled(60_000)
    }).then(() => undefined, (error: { code: number, stdout: string, stderr: string }) => error)
    t.equal(failed?.code, 1, 'exit code 1')
    t.match(failed?.stderr, new RegExp(`^seed:remote: the server at ${kit.origin}/parse refused the master key \\(.*\\); set MASTER_KEY to the running server's master key.* \\(FPK_ERR_SEED_REMOTE\\)\\n$`))
    t.notMatch(`${failed?.stdout}${failed?.stderr}`, /^\s+at /m, 'no stack trace')
  })
})

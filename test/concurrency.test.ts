// The example shop under concurrent calls: racing status changes never both win,
// and orders taking the same products in opposite order never deadlock into a 5xx
// nor lose a unit of stock.
import t, { type Test } from 'tap'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { addUsersToRole, CONFLICT, ensureRole } from '../lib/index.js'
import { Order } from '../fixtures/models/Order.js'
import { OrderLine } from '../fixtures/models/OrderLine.js'
import { Product } from '../fixtures/models/Product.js'
import { appHeaders, needsRealMongo, startKit, type HttpResult } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')
const master = { useMasterKey: true }
const ROUNDS = 20
const ORDERS = 120
/**
 * The kit's databaseTimeout, in seconds: 120 transactions at once queue for 8 transaction slots and
 * 10 pooled connections, and on a loaded machine the last ones wait longer than the default 10 s.
 * Such a wait is answered 503 (5005, busy), which is not what this file is about (lost, doubled or
 * deadlocked writes): the bound stretches with the machine's load, like every other wait in tests.
 */
const BOUND_SECONDS = Math.ceil(scaled(30_000) / 1000)

// Seen failing on the MongoDB stand-in (both racing changes answered 200 in 20 of 20 rounds):
// it lets concurrent transactions overwrite each other where MongoDB raises a WriteConflict
// (DESIGN.md, "MongoDB in tests"). With MONGODB_URI set, it runs against the real replica set.
t.test('the example shop under concurrency', { skip: needsRealMongo() }, async (t) => {
  const kit = await startKit(t, { models: path.join(fixtures, 'models'), functions: path.join(fixtures, 'functions'), databaseTimeout: BOUND_SECONDS })
  const post = (url: string, body: unknown, token: string) =>
    kit.request('POST', `/parse${url}`, { headers: { ...appHeaders, 'x-parse-session-token': token }, body })

  const staff = await kit.signUp('stan')
  const customer = await kit.signUp('cleo')
  await ensureStaffRole(staff.id)
  const product = (sku: string, stock: number) => new Product({ name: sku, sku, priceCents: 100, stock }).save(null, master)

  t.test(`racing status changes: exactly one of two exclusive transitions wins (${ROUNDS} rounds each)`, async (t) => {
    const stock = await product('RACE-01', 10_000)
    const placeOrder = async () => {
      const placed = await post('/orders/createOrder', { lines: [{ product: stock.id, quantity: 1 }] }, customer.token)
      if (placed.status !== 200) throw new Error(`createOrder: ${placed.text}`)
      return placed.json.id as string
    }
    const setStatus = (id: string, status: string, token: string) => post('/orders/setStatus', { id, status }, token)

    const race = async (id: string, moves: Array<[string, string]>) => {
      const answers = await Promise.all(moves.map(([status, token]) => setStatus(id, status, token)))
      const winners = answers.filter((answer) => answer.status === 200)
      const stored = await new Parse.Query(Order).get(id, master)
      return { answers, winners, stored: stored.status }
    }

    const losers = new Map<string, number>()
    const check = (t: Test, round: number, from: string, outcome: Awaited<ReturnType<typeof race>>) => {
      const { answers, winners, stored } = outcome
      for (const answer of answers.filter((a) => a.status !== 200)) losers.set(`${from}: ${answer.json?.code}`, (losers.get(`${from}: ${answer.json?.code}`) ?? 0) + 1)
      t.equal(winners.length, 1, `round ${round} from ${from}: one winner, got ${describe(answers)}`)
      for (const answer of answers.filter((a) => a.status !== 200)) {
        t.ok([142, 119, CONFLICT].includes(answer.json?.code), `the loser is refused after re-reading, not a 5xx: ${answer.text}`)
        t.ok(answer.status < 500, 'never a 5xx')
      }
      if (winners.length === 1) t.equal(stored, winners[0]!.json.status, "the stored status is the winner's")
    }

    for (let round = 1; round <= ROUNDS; round++) {
      const id = await placeOrder()
      check(t, round, 'pending', await race(id, [['paid', staff.token], ['cancelled', customer.token]]))
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const id = await placeOrder()
      const paid = await setStatus(id, 'paid', staff.token)
      t.equal(paid.status, 200, paid.text)
      check(t, round, 'paid', await race(id, [['shipped', staff.token], ['cancelled', staff.token]]))
    }
    t.comment(`losers by code: ${JSON.stringify([...losers])}`)
  })

  t.test(`${ORDERS} two-line orders in opposite line order at once: no 5xx, exact stock`, async (t) => {
    const initial = 1_000
    const [a, b] = await Promise.all([product('PAIR-A', initial), product('PAIR-B', initial)])
    const started = Date.now()
    let longest = 0
    const answers = await Promise.all(Array.from({ length: ORDERS }, async (_, i) => {
      const lines = [{ product: a.id, quantity: 1 }, { product: b.id, quantity: 2 }]
      const answer = await post('/orders/createOrder', { lines: i % 2 === 0 ? lines : lines.reverse() }, customer.token)
      longest = Math.max(longest, Date.now() - started)
      return answer
    }))
    const serverErrors = answers.filter((answer) => answer.status >= 500)
    t.equal(serverErrors.length, 0, `no 5xx: ${describe(serverErrors)}`)
    const placed = answers.filter((answer) => answer.status === 200)
    const refused = answers.filter((answer) => answer.status !== 200)
    t.ok(refused.every((answer) => answer.json?.code === CONFLICT), `anything refused is a CONFLICT: ${describe(refused)}`)
    t.comment(`${placed.length} placed, ${refused.length} answered ${CONFLICT}; last answer after ${longest} ms (databaseTimeout ${BOUND_SECONDS} s)`)
    await Promise.all([a.fetch(master), b.fetch(master)])
    t.equal(a.stock, initial - placed.length, 'one unit of A per placed order')
    t.equal(b.stock, initial - 2 * placed.length, 'two units of B per placed order')
    t.equal(a.version, 1 + placed.length, 'one version per placed order')
    const lines = await new Parse.Query(OrderLine).containedIn('product', [a, b]).limit(10 * ORDERS).find(master)
    t.equal(lines.length, 2 * placed.length, 'two lines per placed order, none from rolled-back runs')
  })
})

async function ensureStaffRole (userId: string): Promise<void> {
  // The example server seeds its roles on boot; a test kit makes the one it needs.
  await ensureRole('Editor')
  await addUsersToRole('Editor', [userId])
}

function describe (answers: HttpResult[]): string {
  const counts = new Map<string, number>()
  for (const answer of answers) {
    const key = `${answer.status} ${answer.text}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return JSON.stringify([...counts])
}

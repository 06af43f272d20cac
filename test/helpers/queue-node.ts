// One kit instance of the queue crash tests, in its own process, served as a
// generated project serves (fixtures/serve.ts). Reads PORT, DATABASE_URI,
// INSTANCE, LEASE_MS, QUEUE_WORKERS ("false": an instance that only
// enqueues), QUEUE_POLL_SECONDS and QUEUE_MAINTENANCE_SECONDS (0.5 and 1 unless
// given: the tests' short polling); prints "listening <port>"
// once it serves.
import Fastify from 'fastify'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, Job, ParseClass, ParseField, Transactional, afterCommit, enqueue, kitPlugin, kitServerOptions, type CloudRequest, type JobRequest } from '../../lib/index.js'
import { serve } from '../../fixtures/serve.js'
import { APP_ID, MASTER_KEY } from './kit.js'

const instance = process.env.INSTANCE ?? 'unnamed'
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref())
/** This process's runs of `bounded` going on now, and the most seen at once. */
const crowd = { running: 0, most: 0, confirmed: 0 }

@ParseClass('QueueDelivery')
class QueueDelivery extends BaseModel {
  @ParseField({ type: 'String' }) declare key: string
  @ParseField({ type: 'String' }) declare instance: string
  @ParseField({ type: 'Number' }) declare attempt: number
  @ParseField({ type: 'String' }) declare phase: string
}

/** The bench's shop (test/bench/queue.ts), shaped like the example app's createOrder: a product, an order, its line. */
@ParseClass('BenchProduct')
class BenchProduct extends BaseModel {
  @ParseField({ type: 'Number' }) declare priceCents: number
  @ParseField({ type: 'Number' }) declare stock: number
}

@ParseClass('BenchOrder')
class BenchOrder extends BaseModel {
  @ParseField({ type: 'Number' }) declare totalCents: number
}

@ParseClass('BenchOrderLine')
class BenchOrderLine extends BaseModel {
  @ParseField({ type: 'Pointer', targetClass: 'BenchOrder' }) declare order: BenchOrder
  @ParseField({ type: 'Pointer', targetClass: 'BenchProduct' }) declare product: BenchProduct
  @ParseField({ type: 'Number' }) declare quantity: number
}

const master = { useMasterKey: true }

/** createOrder's writes: read the product, save the order, take the stock, save the line. */
async function placeBenchOrder (productId: string): Promise<BenchOrder> {
  const product = await new Parse.Query(BenchProduct).get(productId, master)
  const order = await new BenchOrder().save({ totalCents: product.priceCents * 2 }, master)
  product.stock -= 2
  await product.save(null, master)
  await new BenchOrderLine().save({ order, product, quantity: 2 }, master)
  return order
}

/** What "sending" a confirmation is here: counted once it has the order's id and total. */
function confirmBenchOrder (order: { id?: string, totalCents: number }): void {
  if (order.id && order.totalCents > 0) crowd.confirmed++
}

class QueueNode {
  /** Records that it started and finished; with hangFirst its first attempt never ends (the test kills its instance). */
  @Job({ retries: 1, backoffMs: 0 })
  static async deliver (request: JobRequest<{ key: string, hangFirst?: boolean }>) {
    const row = { key: request.params.key, instance, attempt: request.attempt }
    await new QueueDelivery().save({ ...row, phase: 'started' }, { useMasterKey: true })
    if (request.params.hangFirst && request.attempt === 1) await pause(600_000)
    await new QueueDelivery().save({ ...row, phase: 'finished' }, { useMasterKey: true })
  }

  /** At most five at once on an instance. */
  @Job({ concurrency: 5 })
  static async bounded () {
    crowd.running++
    crowd.most = Math.max(crowd.most, crowd.running)
    await pause(2)
    crowd.running--
  }

  /** Places "an order": the delivery job is queued in the order's transaction. */
  @CloudFunction()
  @Transactional()
  static async placeOrder (request: CloudRequest) {
    const queued = await enqueue('deliver', { key: request.params.key }, { delayMs: Number(request.params.delayMs ?? 0) })
    return { id: queued.id }
  }

  /** The bench's product, with stock for every order it places. */
  @CloudFunction()
  static async benchProduct () {
    const product = await new BenchProduct().save({ priceCents: 600, stock: 1_000_000_000 }, master)
    return { id: product.id }
  }

  /** The bench's order with its confirmation in the outbox. */
  @CloudFunction()
  @Transactional()
  static async benchOrderQueued (request: CloudRequest) {
    const order = await placeBenchOrder(String(request.params.product))
    // The job carries what the confirmation says, as committed with it: the job reads nothing back.
    await enqueue('confirmBench', { orderId: order.id, totalCents: order.totalCents })
    return { id: order.id }
  }

  /** The same order, its confirmation sent after commit in this process. */
  @CloudFunction()
  @Transactional()
  static async benchOrderAfterCommit (request: CloudRequest) {
    const order = await placeBenchOrder(String(request.params.product))
    await afterCommit(() => confirmBenchOrder(order))
    return { id: order.id }
  }

  /** The confirmation, as the example app's job: it sends what its params say (the afterCommit arm reads nothing either). */
  @Job({ concurrency: 5 })
  static async confirmBench (request: JobRequest<{ orderId: string, totalCents: number }>) {
    confirmBenchOrder({ id: request.params.orderId, totalCents: request.params.totalCents })
  }

  @CloudFunction()
  static async enqueueDelivery (request: CloudRequest) {
    return await enqueue('deliver', { key: request.params.key, hangFirst: request.params.hangFirst === true })
  }

  @CloudFunction()
  static async enqueueBounded (request: CloudRequest) {
    const from = Number(request.params.from)
    const to = Number(request.params.to)
    for (let i = from; i < to; i++) await enqueue('bounded', { i })
    return { queued: to - from }
  }

  @CloudFunction()
  static async crowdSeen () {
    return { ...crowd, instance }
  }
}

const app = Fastify(kitServerOptions({ level: process.env.LOG_LEVEL ?? 'warn', pretty: false, pluginTimeout: 120_000 }))
await app.register(kitPlugin, {
  appId: APP_ID,
  masterKey: MASTER_KEY,
  models: [QueueDelivery, BenchProduct, BenchOrder, BenchOrderLine],
  functions: [QueueNode],
  jobs: {
    schedules: false,
    ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
    queue: { pollingIntervalSeconds: Number(process.env.QUEUE_POLL_SECONDS ?? 0.5), maintenanceIntervalSeconds: Number(process.env.QUEUE_MAINTENANCE_SECONDS ?? 1), workers: process.env.QUEUE_WORKERS !== 'false' }
  }
})
const port = Number(process.env.PORT)
await serve(app, { port, host: '127.0.0.1', name: `instance ${instance}` })
process.stdout.write(`listening ${port}\n`)

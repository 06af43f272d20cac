// One kit instance of the queue crash tests, in its own process, served as a
// generated project serves (fixtures/serve.ts). Reads PORT, DATABASE_URI,
// INSTANCE and LEASE_MS; runs jobs.queue with short polling; prints
// "listening <port>" once it serves.
import Fastify from 'fastify'
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

/** An order of the bench (test/bench/queue.ts): placed with its confirmation queued, or sent after commit. */
@ParseClass('BenchOrder')
class BenchOrder extends BaseModel {
  @ParseField({ type: 'Number' }) declare totalCents: number
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

  /** At most four at once on an instance. */
  @Job({ concurrency: 4 })
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

  /** The bench's order with its confirmation in the outbox. */
  @CloudFunction()
  @Transactional()
  static async benchOrderQueued () {
    const order = await new BenchOrder().save({ totalCents: 1200 }, { useMasterKey: true })
    await enqueue('confirmBench', { orderId: order.id })
    return { id: order.id }
  }

  /** The same order, its confirmation sent after commit in this process. */
  @CloudFunction()
  @Transactional()
  static async benchOrderAfterCommit () {
    const order = await new BenchOrder().save({ totalCents: 1200 }, { useMasterKey: true })
    await afterCommit(() => { crowd.confirmed++ })
    return { id: order.id }
  }

  @Job({ concurrency: 4 })
  static async confirmBench () {
    crowd.confirmed++
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
  models: [QueueDelivery, BenchOrder],
  functions: [QueueNode],
  jobs: {
    schedules: false,
    ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
    queue: { pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1 }
  }
})
const port = Number(process.env.PORT)
await serve(app, { port, host: '127.0.0.1', name: `instance ${instance}` })
process.stdout.write(`listening ${port}\n`)

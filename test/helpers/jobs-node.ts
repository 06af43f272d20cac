// One kit instance of the jobs and rolling-restart tests, in its own process,
// served as a generated project serves (fixtures/serve.ts: close-with-grace on
// SIGTERM, exit 0 after a clean close). Reads PORT, DATABASE_URI, REDIS_URL
// (optional), INSTANCE, GRACE_MS, LEASE_MS, SCHEDULES and SHUTDOWN_DRAIN_MS
// (read by the kit); prints "listening <port>" once it serves.
import Fastify from 'fastify'
import { BaseModel, Cron, Job, ParseClass, ParseField, kitPlugin, kitServerOptions, type JobRequest } from '../../lib/index.js'
import { serve } from '../../fixtures/serve.js'
import { APP_ID, MASTER_KEY } from './kit.js'

const instance = process.env.INSTANCE ?? 'unnamed'
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref())

@ParseClass('TickRun')
class TickRun extends BaseModel {
  @ParseField({ type: 'String' }) declare tick: string
  @ParseField({ type: 'String' }) declare instance: string
  @ParseField({ type: 'Date' }) declare startedAt: Date
  @ParseField({ type: 'Date' }) declare finishedAt: Date
}

class Clock {
  /** Every second, on whichever instance claims the tick; each run is recorded. */
  @Cron('* * * * * *')
  static async everySecond (request: JobRequest) {
    const startedAt = new Date()
    await pause(100)
    await new TickRun().save({ tick: request.scheduledAt?.toISOString(), instance, startedAt, finishedAt: new Date() }, { useMasterKey: true })
  }

  /** Runs far longer than any shutdown grace and ignores its abort signal. */
  @Job()
  static async endless () {
    await pause(600_000)
  }

  /** The first attempt outlives any test; a retry (after its instance is lost) finishes at once. */
  @Job({ retries: 1 })
  static async resumable (request: JobRequest) {
    if (request.attempt === 1) await pause(600_000)
    return `attempt ${request.attempt} finished on ${instance}`
  }

  /** Finishes within the shutdown grace. */
  @Job()
  static async brief () {
    await pause(2_000)
    return 'brief finished'
  }
}

const app = Fastify(kitServerOptions({ level: process.env.LOG_LEVEL ?? 'warn', pretty: false, pluginTimeout: 120_000 }))
await app.register(kitPlugin, {
  appId: APP_ID,
  masterKey: MASTER_KEY,
  models: [TickRun],
  functions: [Clock],
  jobs: {
    ...(process.env.GRACE_MS ? { shutdownGraceMs: Number(process.env.GRACE_MS) } : {}),
    ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
    schedules: process.env.SCHEDULES !== 'off'
  }
})
// Through the app's own logger; the test orders it against the kit's lines by their logged times.
app.addHook('onClose', async () => { app.log.warn('closed') })
const port = Number(process.env.PORT)
await serve(app, { port, host: '127.0.0.1', name: `instance ${instance}` })
process.stdout.write(`listening ${port}\n`)

// One kit instance of the jobs cluster test, in its own process. Reads PORT,
// DATABASE_URI, REDIS_URL (optional), INSTANCE and GRACE_MS; prints
// "listening <port>" once it serves. On SIGTERM it closes the app and lets the
// process end by itself: nothing of the kit may keep it alive.
import Fastify from 'fastify'
import { BaseModel, Cron, Job, ParseClass, ParseField, kitPlugin, type JobRequest } from '../../lib/index.js'
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

  /** Finishes within the shutdown grace. */
  @Job()
  static async brief () {
    await pause(2_000)
    return 'brief finished'
  }
}

const app = Fastify({ logger: { level: 'warn', stream: process.stderr }, pluginTimeout: 120_000 })
await app.register(kitPlugin, {
  appId: APP_ID,
  masterKey: MASTER_KEY,
  models: [TickRun],
  functions: [Clock],
  jobs: { shutdownGraceMs: Number(process.env.GRACE_MS ?? 10_000), schedules: process.env.SCHEDULES !== 'off' }
})
const port = Number(process.env.PORT)
await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`listening ${port}\n`)
process.once('SIGTERM', () => {
  app.close().then(() => process.stdout.write('closed\n'), (error: unknown) => { process.stderr.write(`close failed: ${String(error)}\n`); process.exitCode = 1 })
})

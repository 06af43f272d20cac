// A kit instance for the rate-limit store benchmark (rate-limit-store.ts):
// one declared endpoint with a rate limit too high to refuse anything, so
// every request pays for counting and nothing else. Counts in Redis when
// REDIS_URL is set, in memory otherwise. Reads PORT and DATABASE_URI; prints
// "listening" on stdout once it serves.
import Fastify from 'fastify'
import { kitPlugin } from '../../plugin.js'
import { CloudFunction, Route } from '../../lib/index.js'
import { APP_ID, BENCH_CONSTANT, MASTER_KEY, MOUNT } from './shared.js'

@Route('bench-limit')
class RateLimitedBench {
  @CloudFunction({ methods: ['POST'], rateLimit: { max: 1_000_000_000, windowMs: 600_000 } })
  static benchLimited () { return BENCH_CONSTANT }
}

// A loaded machine can take longer than Fastify's default 10 s to boot Parse.
const app = Fastify({ logger: { level: process.env.BENCH_LOG_LEVEL ?? 'warn' }, pluginTimeout: 120_000 })
await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, mountPath: MOUNT, functions: [RateLimitedBench], indexes: false })
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.stdout.write('listening\n')
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })

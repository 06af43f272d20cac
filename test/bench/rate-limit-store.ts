// The cost of counting rate limits in Redis (cluster mode) instead of in
// memory: the same rate-limited declared endpoint on two kit processes, one
// with REDIS_URL and one without, sharing one embedded PostgreSQL. Interleaved
// autocannon rounds; the ratio is the median of per-round ratios (target ≥ 0.7).
// Uses redis-server from PATH on a free loopback port (stopped by its PID), or
// REDIS_URL; without either it reports why it was skipped.
// Run alone: `npx tsx test/bench/rate-limit-store.ts`; `npm run bench` runs it too.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { freePort } from '../../lib/storage/free-port.js'
import { tempDir } from '../helpers/kit.js'
import { APP_ID, BENCH_DIR, MOUNT, median, round } from './shared.js'

export interface RateLimitStoreResult {
  memoryReqPerSec: number
  redisReqPerSec: number
  /** Median over rounds of redis ÷ memory. */
  ratio: number
  target: number
  rounds: Array<{ memory: number, redis: number }>
}

export type RateLimitStoreOutcome = RateLimitStoreResult | { skipped: string }

const PATH = `${MOUNT}/bench-limit/benchLimited`
const TARGET = 0.7

async function startProcess (file: string, env: Record<string, string>): Promise<{ child: ChildProcess, stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  const exited = once(child, 'exit')
  const deadline = Date.now() + 180_000
  while (!output.includes('listening')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${path.basename(file)} did not start:\n${output.slice(-3000)}`)
    await sleep(50)
  }
  return {
    child,
    async stop () {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await exited
    }
  }
}

async function startRedis (): Promise<{ url: string, stop: () => Promise<void> }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} }
  const port = await freePort()
  const dir = tempDir('fpk-bench-redis-')
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
  const exited = once(child, 'exit')
  const deadline = Date.now() + 10_000
  while (!(await answersPing(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start')
    await sleep(50)
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop () {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function answersPing (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => resolve(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
  })
}

async function fire (origin: string, seconds: number, connections: number): Promise<number> {
  const result = await autocannon({
    url: origin + PATH,
    method: 'POST',
    headers: { 'x-parse-application-id': APP_ID, 'content-type': 'application/json' },
    body: '{}',
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10
  })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`rate-limit bench: ${result.non2xx} non-2xx answers and ${result.errors} errors`)
  return round(result['2xx'] / result.duration, 0)
}

export async function measureRateLimitStore (settings: { seconds: number, rounds: number, connections: number, warmupSeconds: number }, log: (line: string) => void): Promise<RateLimitStoreOutcome> {
  const redisOnPath = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
  if (!process.env.REDIS_URL && !redisOnPath) return { skipped: 'needs redis-server: apt-get install redis-server, or set REDIS_URL' }
  const stops: Array<() => Promise<void>> = []
  try {
    const redis = await startRedis()
    stops.push(redis.stop)
    const dir = tempDir('fpk-bench-rate-limit-')
    const database = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
    stops.push(async () => { await database.stop(); rmSync(dir, { recursive: true, force: true }) })
    const server = path.join(BENCH_DIR, 'rate-limit-server.ts')
    const origins: Record<'memory' | 'redis', string> = { memory: '', redis: '' }
    for (const kind of ['memory', 'redis'] as const) {
      const port = await freePort()
      const env: Record<string, string> = { PORT: String(port), DATABASE_URI: database.uri, REDIS_URL: kind === 'redis' ? redis.url : '' }
      const started = await startProcess(server, env)
      stops.push(started.stop)
      origins[kind] = `http://127.0.0.1:${port}`
    }
    log('rate-limit store: warming up both servers')
    for (const kind of ['memory', 'redis'] as const) await fire(origins[kind], settings.warmupSeconds, settings.connections)
    const rounds: Array<{ memory: number, redis: number }> = []
    for (let i = 0; i < settings.rounds; i++) {
      const order = i % 2 === 0 ? ['memory', 'redis'] as const : ['redis', 'memory'] as const
      const sample = { memory: 0, redis: 0 }
      for (const kind of order) sample[kind] = await fire(origins[kind], settings.seconds, settings.connections)
      rounds.push(sample)
      log(`rate-limit store: round ${i + 1}  memory ${sample.memory} req/s  redis ${sample.redis} req/s`)
    }
    return {
      memoryReqPerSec: median(rounds.map((r) => r.memory)),
      redisReqPerSec: median(rounds.map((r) => r.redis)),
      ratio: round(median(rounds.map((r) => r.redis / r.memory)), 2),
      target: TARGET,
      rounds
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {})
  }
}

/** The report's lines for this measurement. */
export function rateLimitStoreMarkdown (outcome: RateLimitStoreOutcome | undefined): string {
  if (!outcome) return ''
  const heading = '\n## Rate limits counted in Redis (cluster mode)\n\n'
  if ('skipped' in outcome) return `${heading}Skipped: ${outcome.skipped}.\n`
  const verdict = outcome.ratio >= outcome.target ? 'meets' : 'misses'
  return `${heading}| store | req/s (median) |\n|---|---|\n| in memory | ${outcome.memoryReqPerSec} |\n| Redis | ${outcome.redisReqPerSec} |\n\n` +
    `Redis ÷ in memory: **${outcome.ratio}×** (${verdict} the target ≥ ${outcome.target}×; median of ${outcome.rounds.length} per-round ratios).\n`
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick')
  const outcome = await measureRateLimitStore({
    seconds: Number(process.env.BENCH_SECONDS ?? (quick ? 1 : 4)),
    rounds: Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3)),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
    warmupSeconds: quick ? 1 : 2
  }, (line) => process.stderr.write(`[bench] ${line}\n`))
  process.stdout.write(rateLimitStoreMarkdown(outcome))
}

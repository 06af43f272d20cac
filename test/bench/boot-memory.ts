// `tsx test/bench/boot-memory.ts` (or node --expose-gc --import tsx): boots the
// bench server's application (fixture app, embedded PostgreSQL) without load,
// prints its memory as sampled and after a full GC, and closes. A quick check
// of what boot costs, without the whole bench.
import path from 'node:path'
import { rmSync } from 'node:fs'
import { buildExampleApp } from '../../fixtures/app.js'
import { freePort } from '../../lib/storage/free-port.js'
import { APP_ID, BENCH_DIR, benchTempDir, MASTER_KEY, MOUNT, ROOT } from './shared.js'

const dir = benchTempDir('fpk-boot-memory-')
const port = await freePort()
const app = await buildExampleApp({
  fastify: { logger: { level: 'warn' }, pluginTimeout: 180_000 },
  kit: {
    appId: APP_ID,
    masterKey: MASTER_KEY,
    mountPath: MOUNT,
    serverURL: `http://127.0.0.1:${port}${MOUNT}`,
    dataDir: path.join(dir, 'postgres'),
    ephemeralDatabase: true,
    functions: [path.join(ROOT, 'fixtures', 'functions'), path.join(BENCH_DIR, 'functions')]
  }
})
await app.listen({ port, host: '127.0.0.1' })
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const show = (label: string) => {
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage()
  process.stdout.write(`${label}: rss ${mb(rss)} MB, heap used ${mb(heapUsed)} MB of ${mb(heapTotal)} MB, external ${mb(external)} MB\n`)
}
show('after boot')
const gc = (globalThis as { gc?: () => void }).gc
if (gc) { gc(); show('after a full GC') }
if (process.env.BOOT_MEMORY_DETAIL) {
  const { readFileSync } = await import('node:fs')
  const { getHeapSpaceStatistics } = await import('node:v8')
  for (const space of getHeapSpaceStatistics()) process.stdout.write(`  ${space.space_name}: ${mb(space.space_used_size)} of ${mb(space.physical_space_size)} MB\n`)
  process.stdout.write(readFileSync('/proc/self/status', 'utf8').split('\n').filter((line) => /^(VmRSS|RssAnon|RssFile|Threads)/.test(line)).join('\n') + '\n')
  const { createRequire } = await import('node:module')
  const cache = createRequire(import.meta.url).cache
  process.stdout.write(`CommonJS modules loaded: ${Object.keys(cache).length}\n`)
}
await app.close()
rmSync(dir, { recursive: true, force: true })

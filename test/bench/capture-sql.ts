// `npx tsx test/bench/capture-sql.ts`: boots the bench app on a fresh embedded PostgreSQL and prints every
// statement each read scenario sends through pg (Parse's pool and any other), one request at a time.
import path from 'node:path'
import { createRequire } from 'node:module'
import { buildExampleApp } from '../../fixtures/app.js'
import { freePort } from '../../lib/storage/free-port.js'
import { tempDir } from '../helpers/kit.js'
import { APP_ID, BENCH_DIR, MASTER_KEY, MOUNT, ROOT } from './shared.js'
import { REST_QUERY_SAME_WORK } from './scenarios.js'

const dir = tempDir('fpk-capture-')
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
const app = await buildExampleApp({
  fastify: { logger: { level: 'warn' } },
  kit: { appId: APP_ID, masterKey: MASTER_KEY, mountPath: MOUNT, serverURL: `${origin}${MOUNT}`, dataDir: path.join(dir, 'postgres'), ephemeralDatabase: true, functions: [path.join(ROOT, 'fixtures', 'functions'), path.join(BENCH_DIR, 'functions')] }
})
await app.listen({ port, host: '127.0.0.1' })
const headers = { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY }
const req = createRequire(path.join(ROOT, 'node_modules/pg-promise/index.js'))
const seen: string[] = []
for (const pg of [req('pg'), createRequire(path.join(ROOT, 'x.js'))('pg')]) {
  const proto = pg.Client.prototype
  const original = proto.query
  proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string })?.text
    seen.push(`[${pg === req('pg') ? 'pgp' : 'pg'}] ${text}`)
    return original.call(this, config, ...rest)
  }
}
for (const url of [`${MOUNT}/notes/listNotes?limit=10`, `${MOUNT}/notes/listNotes?limit=10`, `${MOUNT}/bench/benchListNotesUntyped?limit=10`, REST_QUERY_SAME_WORK]) {
  seen.length = 0
  const response = await fetch(origin + url, { headers })
  const text = await response.text()
  console.log(`\n=== ${url} → ${response.status} ${text.length} bytes`)
  for (const s of seen) console.log('  ', s.slice(0, 400))
}
await app.close()
process.exit(0)

// The benchmark's peer process: the NestJS + TypeORM app of test/bench/nest/
// (compiled there, with its own node_modules) on its own embedded PostgreSQL,
// started from the same binaries with the same flags as the kit's. Speaks the
// same IPC protocol as server.ts, so the runner drives both alike.
// argv: the peer's compiled entry (test/bench/nest/dist/main.js).
import path from 'node:path'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { freePort } from '../../lib/storage/free-port.js'
import { answerRunner } from './server-commands.js'
import { SEEDED_NOTES, memorySample, type ServerReady } from './shared.js'

if (!process.send) throw new Error('test/bench/nest-server.ts is started by test/bench/run.ts (it needs an IPC channel)')
const entry = process.argv[2]
if (!entry) throw new Error('usage: nest-server.ts <test/bench/nest/dist/main.js>')

interface Peer { origin: string, sessionToken: string, userId: string, resetNotes (): Promise<void>, close (): Promise<void> }

// Only the database starter is the kit's (nothing else of it is loaded here, so the peer's memory is its own).
const dir = mkdtempSync(path.join(tmpdir(), 'fpk-bench-nest-'))
chmodSync(dir, 0o755) // PostgreSQL runs as user postgres when we are root
const started = performance.now()
const database = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: process.env.BENCH_FSYNC !== '1' })
// The peer is CommonJS with its own node_modules: load it the way node would run it.
const { start } = createRequire(import.meta.url)(path.resolve(entry)) as { start: (options: { databaseUrl: string, port: number, seededNotes: number }) => Promise<Peer> }
const peer = await start({ databaseUrl: database.uri, port: await freePort(), seededNotes: SEEDED_NOTES })
const bootMs = performance.now() - started

answerRunner({
  resetNotes: () => peer.resetNotes(),
  close: () => peer.close().then(() => database.stop()).finally(() => rmSync(dir, { recursive: true, force: true }))
})
process.send({
  type: 'ready',
  origin: peer.origin,
  sessionToken: peer.sessionToken,
  userId: peer.userId,
  bootMs,
  memory: memorySample(),
  requestsPerListNotes: 1,
  baselineSql: { find: '', count: '' },
  databaseUrl: database.uri
} satisfies ServerReady)

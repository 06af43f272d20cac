// Processes for the jobs tests that need more than one: kit instances
// (test/helpers/jobs-node.ts), one embedded PostgreSQL per test process with a
// database per scenario, and a redis-server of the test's own, each stopped by its PID.
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { freePort } from '../../lib/storage/free-port.js'
import { tempDir } from './kit.js'
import { until } from './until.js'
import { scaled } from './time-scale.js'
import { redisAnswers } from './redis-ping.js'
import { clusterFromTemplate } from './pg-template.js'
import { childEntry } from './compiled-sources.js'

const here = path.dirname(fileURLToPath(import.meta.url))

export interface JobsInstance { child: ChildProcess, output (): string, stop (): Promise<void>, exited: Promise<unknown> }

/**
 * Starts test/helpers/jobs-node.ts (or another script beside it) with this environment and waits until it listens.
 * `compiled`: from the sources' plain-JavaScript copy (compiled-sources.ts), not under tsx.
 */
export async function startJobsInstance (name: string, env: Record<string, string>, script = 'jobs-node.ts', { compiled = false } = {}): Promise<JobsInstance & { origin: string }> {
  const port = await freePort()
  const { file, execArgv } = compiled ? await childEntry(path.join(here, script)) : { file: path.join(here, script), execArgv: ['--import=tsx/esm'] }
  const child = spawn(process.execPath, [...execArgv, file], {
    env: { ...process.env, ...env, PORT: String(port), INSTANCE: name, NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  const exited = once(child, 'exit')
  await Promise.race([
    until(`instance ${name} to listen`, () => output.includes('listening'), scaled(180_000)),
    exited.then(() => { throw new Error(`instance ${name} exited during boot:\n${output}`) })
  ])
  return {
    child,
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    exited,
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), scaled(30_000))
      await exited
      clearTimeout(timer)
    }
  }
}

let server: Promise<EmbeddedPostgres> | undefined
const made = new Map<string, number>()

/** This process's one embedded PostgreSQL, stopped once every test of the file has ended (a server per scenario cost about 1 CPU-s each). */
function fileServer (): Promise<EmbeddedPostgres> {
  server ??= (async () => {
    const dataDir = tempDir('fpk-jobs-')
    await clusterFromTemplate(path.join(dataDir, 'postgres'))
    const started = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'postgres'), ephemeral: true })
    // tap loaded here, not at import: the bench's processes import this module too.
    const { atProcessEnd } = await import('./process-teardown.js')
    atProcessEnd(async () => {
      await started.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    return started
  })()
  return server
}

/** An embedded PostgreSQL for this file (one per test process), and a fresh, empty database on it per scenario. */
export async function sharedPostgres (t: Test): Promise<{ database (name: string): Promise<string> }> {
  const { uri } = await fileServer()
  return {
    async database (wanted) {
      // A scenario run twice in one process gets a database of its own each time.
      const count = (made.get(wanted) ?? 0) + 1
      made.set(wanted, count)
      const name = count === 1 ? wanted : `${wanted}_${count}`
      const admin = new pg.Client({ connectionString: uri })
      await admin.connect()
      try { await admin.query(`CREATE DATABASE ${name}`) } finally { await admin.end() }
      t.comment(`database ${name} on the file's PostgreSQL`)
      const url = new URL(uri)
      url.pathname = `/${name}`
      return url.toString()
    }
  }
}

/** REDIS_URL when set; else a redis-server of the test's own on a free port, stopped at teardown. */
export async function ownRedis (t: Test): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL
  const port = await freePort()
  const dir = tempDir('fpk-redis-')
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
  t.teardown(async () => {
    if (child.exitCode === null) { child.kill('SIGTERM'); await once(child, 'exit') }
    rmSync(dir, { recursive: true, force: true })
  })
  await until('redis-server to answer', () => redisAnswers(port), scaled(20_000))
  return `redis://127.0.0.1:${port}`
}

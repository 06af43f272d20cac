// A MongoDB replica set for a test: the real one named by MONGODB_URI, or else the
// jongodb wire stand-in (a native binary from npm) started for the caller and
// stopped by PID when the test ends. See "MongoDB in tests" in the design notes
// for what the stand-in honestly supports.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Test } from 'tap'

/** Skip reason for what only a real MongoDB replica set can show. */
export const NEEDS_REAL_MONGO = 'needs real MongoDB'

export interface MongoLane {
  /** mongodb://… with a database of its own. */
  uri: string
  /** true: a real MongoDB (MONGODB_URI); false: the wire stand-in. */
  real: boolean
  /** The stand-in's process (for fault tests); undefined on a real MongoDB. */
  pid?: number
}

const STAND_IN_PACKAGE = '@jongodb/memory-server-bin-linux-x64-gnu'
const START_TIMEOUT_MS = 15_000
const STOP_TIMEOUT_MS = 3_000

export async function mongoReplicaSet (t: Test): Promise<MongoLane> {
  const fromEnv = process.env.MONGODB_URI
  if (fromEnv) {
    const uri = withDatabase(fromEnv, freshDatabaseName())
    // Registered first, so it runs after the kit (registered later) has closed.
    t.teardown(() => dropDatabase(t, uri))
    return { uri, real: true }
  }
  const standIn = await startStandIn()
  t.teardown(() => standIn.stop())
  // maxPoolSize=1: one connection, so commands reach the stand-in in the order they were sent.
  // (Measured: with a pool it behaves as MongoDB does, i.e. commands sent at once at the start
  // of a transaction may overtake its first one and fail with NoSuchTransaction; the kit opens
  // transactions before using them, see lib/storage/mongo/session.ts, so the lane passes either way.)
  // serverMonitoringMode=poll: the stand-in breaks the driver's streaming heartbeat
  // ("Server ended moreToCome unexpectedly"); the driver then marks the server
  // Unknown, drops its pool and stalls the next operation for ~500 ms.
  const uri = withQuery(withDatabase(standIn.uri, freshDatabaseName()), { maxPoolSize: '1', serverMonitoringMode: 'poll' })
  return { uri, real: false, pid: standIn.pid }
}

export function freshDatabaseName (): string {
  return `fpk_${randomBytes(6).toString('hex')}`
}

/**
 * Replaces the database path of a mongodb:// URI, keeping hosts, credentials and
 * options. With credentials and no authSource, the driver authenticates against
 * the path's database (admin when there is none), so that one is kept as authSource
 * (not for mongodb+srv://, whose DNS TXT record may name the authSource itself).
 */
export function withDatabase (uri: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/)([^/?]+)(?:\/([^?]*))?(?:\?(.*))?$/i.exec(uri)
  if (!match) throw new Error(`not a mongodb:// URI: ${uri.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@')}`)
  const [, scheme, hosts, path = '', query] = match
  const result = `${scheme}${hosts}/${database}${query === undefined ? '' : `?${query}`}`
  const hasCredentials = hosts!.includes('@') && !/\+srv/i.test(scheme!)
  const hasAuthSource = (query ?? '').split('&').some((pair) => /^authsource=/i.test(pair))
  return hasCredentials && !hasAuthSource ? withQuery(result, { authSource: decodeURIComponent(path) || 'admin' }) : result
}

/** Sets query options on a mongodb:// URI, leaving the other options as they were written. */
export function withQuery (uri: string, params: Record<string, string>): string {
  const [base, query = ''] = uri.split(/\?(.*)/s, 2) as [string, string?]
  const keys = new Set(Object.keys(params).map((key) => key.toLowerCase()))
  const kept = query.split('&').filter((pair) => pair && !keys.has(pair.split('=')[0]!.toLowerCase()))
  const added = Object.entries(params).map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
  return `${base}?${[...kept, ...added].join('&')}`
}

/** Drops a database this helper named (never one it was given) once the test is over. */
async function dropDatabase (t: Test, uri: string): Promise<void> {
  // The driver loads only on the MongoDB lane: kit.ts imports this file in every lane.
  const { MongoClient } = await import('mongodb')
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 })
  try {
    await client.db().dropDatabase()
  } catch (error) {
    t.comment(`could not drop the test database ${client.db().databaseName}: ${(error as Error).message}`)
  } finally {
    await client.close().catch(() => {})
  }
}

export function standInBinary (): string {
  const require = createRequire(import.meta.url)
  const manifest = require.resolve(`${STAND_IN_PACKAGE}/package.json`)
  const { jongodb } = require(manifest) as { jongodb?: { binary?: string } }
  return path.join(path.dirname(manifest), jongodb?.binary ?? 'bin/jongodb')
}

interface StandIn {
  uri: string
  pid: number
  stop (): Promise<void>
}

/** PIDs to SIGKILL if this process exits while they still run: stand-ins and their watchdogs. */
const running = new Set<number>()
let exitHookInstalled = false

function installExitHook (): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // 'exit' handlers run synchronously: a plain SIGKILL by PID is all that can be done there.
  process.on('exit', () => {
    for (const pid of running) signal(pid, 'SIGKILL')
  })
}

/**
 * The 'exit' hook does not run when this process dies from a signal (tap's timeout
 * sends SIGALRM, then SIGKILL). A watchdog shell blocks reading a pipe from us; when
 * the pipe closes because we are gone, however we went, it SIGKILLs the stand-in.
 */
function startWatchdog (pid: number): ChildProcess {
  const watchdog = spawn('/bin/sh', ['-c', 'read _ ; kill -9 "$1" 2>/dev/null', 'fpk-mongo-watchdog', String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore']
  })
  watchdog.on('error', () => {})
  watchdog.unref()
  ;(watchdog.stdin as unknown as { unref?: () => void }).unref?.()
  return watchdog
}

async function startStandIn (): Promise<StandIn> {
  const binary = standInBinary()
  installExitHook()
  const child = spawn(binary, [
    '--host=127.0.0.1', '--port=0', '--database=test',
    '--topology-profile=singleNodeReplicaSet', '--replica-set-name=rs0'
  ], { stdio: ['ignore', 'pipe', 'pipe'] })
  const pid = child.pid
  const watchdog = pid === undefined ? undefined : startWatchdog(pid)
  for (const id of [pid, watchdog?.pid]) if (id !== undefined) running.add(id)
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      if (pid !== undefined) running.delete(pid)
      // Only now, with the stand-in gone, may the watchdog go: never leave it armed with a stale PID.
      if (watchdog?.pid !== undefined) {
        signal(watchdog.pid, 'SIGKILL')
        running.delete(watchdog.pid)
      }
      resolve()
    })
  })

  let stdout = ''
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-4000) })
  let uri: string
  try {
    uri = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the MongoDB stand-in (${binary}) printed no JONGODB_URI= line within ${START_TIMEOUT_MS} ms` + tail(stdout, stderr)))
      }, START_TIMEOUT_MS)
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`could not start the MongoDB stand-in (${binary}): ${error.message}. Is ${STAND_IN_PACKAGE} installed (npm install)?`))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`the MongoDB stand-in (${binary}) exited (${signal ?? `code ${code}`}) before printing JONGODB_URI=` + tail(stdout, stderr)))
      })
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        stdout = (stdout + chunk).slice(-4000)
        const found = /^JONGODB_URI=(\S+)\s*$/m.exec(stdout)
        if (found) {
          clearTimeout(timer)
          resolve(found[1]!)
        }
      })
    })
  } catch (error) {
    await stopChild(child, exited)
    throw error
  }
  // Keep draining its output so a chatty server never blocks on a full pipe.
  child.stdout!.resume()

  return { uri, pid: child.pid!, stop: () => stopChild(child, exited) }
}

async function stopChild (child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  signal(child.pid, 'SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS) })
  ])
  clearTimeout(timer)
  if (timedOut) {
    signal(child.pid, 'SIGKILL')
    await exited
  }
}

function signal (pid: number, name: NodeJS.Signals): void {
  try { process.kill(pid, name) } catch { /* already gone */ }
}

function tail (stdout: string, stderr: string): string {
  const out = [stdout.trim() && `stdout: ${stdout.trim()}`, stderr.trim() && `stderr: ${stderr.trim()}`].filter(Boolean)
  return out.length ? `\n${out.join('\n')}` : ''
}

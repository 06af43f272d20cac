// Where the embedded PostgreSQL runs when the OS user `postgres` cannot reach
// the chosen data directory (as root in a mode-700 checkout): a copy of the
// binaries, and a data directory per source path, under a world-traversable
// cache. A copy stands for its source directory and lives no longer than it:
// removing (or replacing) the source drops the database, as it does where no
// copy is needed.
import { createHash } from 'node:crypto'
import { existsSync, rmSync, statSync } from 'node:fs'
import { chmod, chown, cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { alive } from './processes.js'

export interface Owner { uid: number, gid: number }

/** Made if missing, owned by user postgres when we run as root, mode 700: what PostgreSQL asks of a data directory. */
export async function prepareDataDir (dataDir: string, owner?: Owner): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  if (owner) await chown(dataDir, owner.uid, owner.gid)
  await chmod(dataDir, 0o700)
}

export const CACHE_ROOT = '/var/tmp/fastify-parse-kit'
const CACHE_DATA = path.join(CACHE_ROOT, 'data')

/**
 * Beside a copy (`<copy>.json`, as initdb wants the copy empty): the source
 * directory and which one it was (device, inode, birth time: a directory
 * removed and made again is another one), and for an ephemeral copy the PID of
 * the process that made it.
 */
interface CopyRecord { source: string, sourceId?: string, ephemeralFor?: number }

/** This process's ephemeral copies whose server is stopped: removed when the process exits. */
const stoppedCopies = new Set<string>()

/**
 * A key made of a hash of the whole absolute path (so two directories whose
 * paths end alike never share a cluster), after its last name for the reader.
 */
export function relocatedDataDir (dataDir: string): string {
  const absolute = path.resolve(dataDir)
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 32)
  const name = path.basename(absolute).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)
  return path.join(CACHE_DATA, `${name}-${hash}`)
}

/** Copies the binaries (once per version) and maps the data dir, which exists, to its copy. */
export async function relocate (binDir: string, dataDir: string, owner: Owner, ephemeral: boolean): Promise<{ binDir: string, dataDir: string }> {
  const version = JSON.parse(await readFile(path.join(binDir, '..', 'package.json'), 'utf8')).version as string
  const cachedBin = path.join(CACHE_ROOT, `postgres-${version}`)
  await mkdir(CACHE_ROOT, { recursive: true, mode: 0o755 })
  await chmod(CACHE_ROOT, 0o755)
  if (!existsSync(path.join(cachedBin, 'bin', 'postgres'))) {
    const staging = `${cachedBin}.${process.pid}`
    await cp(binDir, staging, { recursive: true, verbatimSymlinks: true })
    await rm(cachedBin, { recursive: true, force: true })
    await cp(staging, cachedBin, { recursive: true, verbatimSymlinks: true })
    await rm(staging, { recursive: true, force: true })
  }
  const cachedData = relocatedDataDir(dataDir)
  await mkdir(CACHE_DATA, { recursive: true, mode: 0o755 })
  await chmod(CACHE_DATA, 0o755)
  await prepareDataDir(cachedData, owner)
  // Before initdb, so that a copy cut short by a killed process is still known as ephemeral.
  const record: CopyRecord = { source: dataDir, sourceId: identity(dataDir), ...(ephemeral ? { ephemeralFor: process.pid } : {}) }
  await writeFile(`${cachedData}.json`, JSON.stringify(record) + '\n', { mode: 0o644 })
  return { binDir: cachedBin, dataDir: cachedData }
}

/**
 * An ephemeral copy lives as long as its process, as the data directory it
 * stands for does: a later start on the same directory in the same process (a
 * reboot with changed declarations) opens the same database. Only a stopped
 * copy is removed at exit; one whose server still runs keeps its record, and
 * the next relocated start stops that server and removes it (as after a kill).
 */
export function removedAtExit (copy: string, stopServer: () => Promise<void>): () => Promise<void> {
  stoppedCopies.delete(copy)
  if (!process.listeners('exit').includes(removeStoppedCopies)) process.on('exit', removeStoppedCopies)
  return async () => {
    await stopServer()
    stoppedCopies.add(copy)
  }
}

function removeStoppedCopies (): void {
  for (const copy of stoppedCopies) {
    try {
      removeCopy(copy)
    } catch {
      // Never a throw in an exit handler (it would end a clean exit in a crash): a copy left keeps its record.
    }
  }
}

/** Synchronous, for the exit handler too. */
function removeCopy (copy: string): void {
  rmSync(copy, { recursive: true, force: true })
  rmSync(`${copy}.json`, { force: true })
}

/**
 * Copies nothing stands for any more: an ephemeral one whose process was killed
 * before it could remove it (SIGKILL, a crash), and a kept one whose source
 * directory was removed or replaced. `stopLeftServer` stops a server a gone
 * process left running on the copy, and throws when a live one holds it: such a
 * copy stays, as do the copies of live processes.
 */
export async function removeAbandonedCopies (stopLeftServer: (copy: string) => Promise<void>): Promise<void> {
  const entries = await readdir(CACHE_DATA).catch(() => [] as string[])
  for (const entry of entries.filter((name) => name.endsWith('.json'))) {
    const copy = path.join(CACHE_DATA, entry.slice(0, -'.json'.length))
    const record = await readFile(`${copy}.json`, 'utf8').then((text) => JSON.parse(text) as Partial<CopyRecord>, () => undefined)
    if (!record || !abandoned(record)) continue
    try {
      if (existsSync(copy)) await stopLeftServer(copy)
      removeCopy(copy)
    } catch {
      // Still held by a running instance (or not ours to remove): left as it is.
    }
  }
}

function abandoned (record: Partial<CopyRecord>): boolean {
  if (typeof record.source !== 'string') return false
  if (record.ephemeralFor !== undefined) {
    const maker = record.ephemeralFor
    return Number.isInteger(maker) && maker > 0 && maker !== process.pid && !alive(maker)
  }
  const now = identity(record.source)
  // Records written before sourceId existed are judged by the source's presence alone.
  if (record.sourceId === undefined) return now === undefined
  if (now !== undefined) return now !== record.sourceId
  // Gone, or only out of sight: a source on a volume not mounted now keeps its copy.
  return deviceOf(nearestExisting(record.source)) === record.sourceId.split(':')[0]
}

function nearestExisting (dir: string): string {
  let current = path.dirname(dir)
  while (!existsSync(current) && path.dirname(current) !== current) current = path.dirname(current)
  return current
}

function deviceOf (dir: string): string | undefined {
  try {
    return String(statSync(dir).dev)
  } catch {
    return undefined
  }
}

/** Which directory is at this path: undefined when there is none. */
function identity (dir: string): string | undefined {
  try {
    const stat = statSync(dir)
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined
  } catch {
    return undefined
  }
}

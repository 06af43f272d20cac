// An ephemeral database (a test's) starts from a copy of one initialised
// cluster, made once per OS user and PostgreSQL version, instead of running
// initdb: initdb is the slow half of a cold start, and a test run boots many
// throwaway databases. A copy of a stopped cluster is a cluster of its own with
// its own server, so each test's database is as separate as before.
import { execFile } from 'node:child_process'
import { existsSync, lstatSync } from 'node:fs'
import { chmod, chown, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { alive } from './processes.js'
import type { Owner } from './relocation.js'

/** How long a start waits for another process making the template before it runs initdb itself. */
const WAIT_FOR_MAKER_MS = 120_000

/** The folder of this OS user's templates, in the system's temporary folder. */
export function templatesRoot (): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  return path.join(tmpdir(), `fastify-parse-kit-${uid ?? 'user'}`)
}

/**
 * The templates' folder, made if missing: mode 711, owned by this user (the OS
 * user postgres may pass through it to the cluster being made, no one else may
 * list or add to it). Undefined when it exists with another owner or as a link:
 * then there is no template and initdb runs as before.
 */
async function trustedRoot (): Promise<string | undefined> {
  const root = templatesRoot()
  await mkdir(root, { recursive: true, mode: 0o711 }).catch(() => {})
  try {
    const stat = lstatSync(root)
    if (!stat.isDirectory() || (typeof process.getuid === 'function' && stat.uid !== process.getuid())) return undefined
    await chmod(root, 0o711)
    return root
  } catch {
    return undefined
  }
}

/** Where the template of PostgreSQL binaries `version` lives (it may not exist yet). */
export function templateDir (root: string, version: string): string {
  return path.join(root, `postgres-template-${version.replace(/[^A-Za-z0-9_.-]/g, '_')}`)
}

/**
 * Fills `dataDir` (prepared, empty) with a copy of the template cluster of
 * binaries `version`, making the template first with `initialise` (initdb into
 * the folder it is given) when there is none. Answers false, having copied
 * nothing, when there is no safe place for a template: the caller runs initdb.
 */
export async function copyTemplateCluster (dataDir: string, version: string, owner: Owner | undefined, initialise: (dir: string) => Promise<void>): Promise<boolean> {
  const root = await trustedRoot()
  if (!root) return false
  const template = templateDir(root, version)
  if (!(await ensureTemplate(template, owner, initialise))) return false
  // -a keeps the owner (the OS user postgres when run as root) and the modes PostgreSQL insists on.
  await copy(`${template}/.`, dataDir)
  return true
}

async function ensureTemplate (template: string, owner: Owner | undefined, initialise: (dir: string) => Promise<void>): Promise<boolean> {
  const lock = `${template}.lock`
  const deadline = Date.now() + WAIT_FOR_MAKER_MS
  while (!complete(template)) {
    if (Date.now() > deadline) return false
    if (!(await takeLock(lock))) {
      await sleep(100)
      continue
    }
    try {
      if (!complete(template)) await makeTemplate(template, owner, initialise)
    } catch {
      // No template here (the OS user postgres cannot reach the temporary folder, say): the start runs its own initdb, which says what is wrong if it fails too.
      return false
    } finally {
      await rm(lock, { recursive: true, force: true })
    }
  }
  return true
}

/** A template is complete once renamed into place; its PG_VERSION is the last check. */
function complete (template: string): boolean {
  return existsSync(path.join(template, 'PG_VERSION'))
}

/** mkdir is atomic: the one process that makes the directory makes the template; a lock whose maker died is taken over. */
async function takeLock (lock: string): Promise<boolean> {
  try {
    await mkdir(lock)
    await writeFile(path.join(lock, 'pid'), String(process.pid))
    return true
  } catch {
    const holder = Number(await readFile(path.join(lock, 'pid'), 'utf8').catch(() => ''))
    // A lock without a pid is being taken right now, or was by a process killed in between (stale after a few seconds);
    // one whose maker is gone is stale.
    const stale = holder > 0 ? !alive(holder) : Date.now() - (await stat(lock).then((info) => info.mtimeMs, () => Date.now())) > 10_000
    if (stale) await rm(lock, { recursive: true, force: true })
    return false
  }
}

/** initdb into a folder of its own beside the template, then one rename: a maker killed halfway leaves no half template. */
async function makeTemplate (template: string, owner: Owner | undefined, initialise: (dir: string) => Promise<void>): Promise<void> {
  const making = `${template}.making`
  await rm(making, { recursive: true, force: true }) // what a killed maker left: we hold the lock
  await mkdir(making, { mode: 0o700 })
  if (owner) await chown(making, owner.uid, owner.gid)
  try {
    await initialise(making)
    await rename(making, template)
  } finally {
    await rm(making, { recursive: true, force: true })
  }
}

function copy (from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('cp', ['-a', from, to], (error, _stdout, stderr) => {
      if (error) reject(new Error(`copying the template cluster into ${to} failed: ${stderr.trim() || error.message}`))
      else resolve()
    })
  })
}

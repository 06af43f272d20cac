// One initialised PostgreSQL cluster per machine, copied into each kit's data
// directory: initdb (and creating Parse's database) is the slow half of a cold
// embedded boot, and every test kit would otherwise pay it again. A copy of a
// stopped cluster is a cluster of its own, with its own server process, so
// tests that kill, freeze or refuse their database are as isolated as before.
// The kit does the same for every new ephemeral database (lib/storage/postgres/template.ts);
// this one, made by such a start, also holds Parse's database and serves kept (non-ephemeral) boots.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { embeddedBinariesDir, startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'

const version = (JSON.parse(readFileSync(path.join(embeddedBinariesDir(), '..', 'package.json'), 'utf8')) as { version: string }).version
/** Keyed by the binaries' version: a cluster made by other binaries is never copied. */
const TEMPLATE = path.join(tmpdir(), `fpk-test-pg-template-${version}`)
const LOCK = `${TEMPLATE}.lock`

/** Fills `dataDir` (which must not exist yet) with a copy of the template cluster, making the template first if needed. */
export async function copyTemplateCluster (dataDir: string): Promise<void> {
  await ensureTemplate()
  // -a keeps the owner (the OS user postgres when tests run as root) and the modes PostgreSQL insists on.
  execFileSync('cp', ['-a', TEMPLATE, dataDir])
}

/**
 * A data directory that does not exist yet gets a copy of the template, which is
 * what initdb would make there, only without initdb's seconds; one that exists
 * (a test's second boot on its database) is left as it is.
 */
export async function clusterFromTemplate (dataDir: string): Promise<void> {
  if (existsSync(dataDir)) return
  mkdirSync(path.dirname(dataDir), { recursive: true })
  await copyTemplateCluster(dataDir)
}

async function ensureTemplate (): Promise<void> {
  while (!existsSync(TEMPLATE)) {
    if (takeLock()) {
      try {
        if (!existsSync(TEMPLATE)) await makeTemplate()
      } finally {
        rmSync(LOCK, { recursive: true, force: true })
      }
      return
    }
    await sleep(100)
  }
}

/** mkdir is atomic: the one process that makes the directory makes the template; a lock whose maker died is taken over. */
function takeLock (): boolean {
  try {
    mkdirSync(LOCK)
    writeFileSync(path.join(LOCK, 'pid'), String(process.pid))
    return true
  } catch {
    const holder = Number(readFileSafe(path.join(LOCK, 'pid')))
    if (holder > 0 && !alive(holder)) rmSync(LOCK, { recursive: true, force: true })
    return false
  }
}

async function makeTemplate (): Promise<void> {
  const work = mkdtempSync(`${TEMPLATE}.making-`)
  chmodSync(work, 0o755)
  const cluster = path.join(work, 'cluster')
  const server = await startEmbeddedPostgres({ dataDir: cluster, ephemeral: true, onNotice: () => {} })
  await server.stop()
  // The server ran from elsewhere when the OS user postgres could not reach `cluster`: copy what it used.
  renameSync(server.dataDir === cluster ? cluster : server.dataDir, TEMPLATE)
  rmSync(work, { recursive: true, force: true })
}

function readFileSafe (file: string): string {
  try { return readFileSync(file, 'utf8') } catch { return '' }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

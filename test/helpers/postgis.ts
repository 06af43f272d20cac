// A throwaway PostgreSQL cluster with PostGIS for the geo tests, from the
// system's PostgreSQL 15 binaries (Debian: postgresql-15-postgis-3). When they
// are not installed, postgisCluster() answers the reason to skip.
import { execFile, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { freePort } from '../../lib/storage/free-port.js'
import { tempDir } from './kit.js'
import { scaled } from './time-scale.js'

const BIN = process.env.POSTGIS_PG_BIN ?? '/usr/lib/postgresql/15/bin'
const EXTENSION = process.env.POSTGIS_EXTENSION_DIR ?? '/usr/share/postgresql/15/extension'
const run = promisify(execFile)

/** false when a PostGIS cluster can be started here, else the reason to skip. */
export function postgisMissing (): false | string {
  if (!existsSync(path.join(BIN, 'postgres'))) return `needs PostgreSQL 15 binaries at ${BIN} (Debian: apt-get install postgresql-15-postgis-3)`
  if (!existsSync(path.join(EXTENSION, 'postgis.control'))) return 'needs PostGIS for PostgreSQL 15 (Debian: apt-get install postgresql-15-postgis-3)'
  return false
}

/** Starts a cluster with the postgis extension created; stopped (by its PID) and removed when the test ends. */
export async function postgisCluster (t: Test): Promise<string> {
  const root = tempDir('fpk-postgis-')
  const data = path.join(root, 'data')
  mkdirSync(data)
  // PostgreSQL refuses to run as root: as root, run it as the OS user postgres.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(root, Number(stdout), Number(gid)); chownSync(data, Number(stdout), Number(gid))
  }
  const as = (command: string, args: string[]): [string, string[]] => asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
  await run(...as(path.join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']))
  const port = await freePort()
  const server = spawn(...as(path.join(BIN, 'postgres'), ['-D', data, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']), { stdio: 'ignore' })
  t.teardown(async () => {
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve))
      // Fast shutdown of the server this helper started (its PID is in postmaster.pid; runuser may stand between).
      const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      process.kill(Number.isInteger(pid) && pid > 0 ? pid : server.pid!, 'SIGINT')
      await exited
    }
    rmSync(root, { recursive: true, force: true })
  })
  const deadline = Date.now() + scaled(20_000)
  for (;;) {
    const ready = await run(path.join(BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]).then(() => true, () => false)
    if (ready) break
    if (Date.now() > deadline || server.exitCode !== null) throw new Error('the PostGIS test cluster did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await run(path.join(BIN, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-c', 'CREATE EXTENSION postgis'])
  return `postgres://postgres@127.0.0.1:${port}/postgres`
}

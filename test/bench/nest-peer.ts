// The NestJS peer's install and build, done by the bench on first use so that
// the kit's own install stays lean: `npm ci` in test/bench/nest/ (its own
// package.json and lockfile) when its node_modules is missing or older than
// the lockfile, then tsc with decorator metadata (which Nest's dependency
// injection and ValidationPipe read) into test/bench/nest/dist/.
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { ROOT } from './shared.js'

/** The peer's folder in the sources (BENCH_DIR may be the compiled copy under .bench-build/). */
export const NEST_DIR = path.join(ROOT, 'test', 'bench', 'nest')

const mtime = (file: string) => existsSync(file) ? statSync(file).mtimeMs : 0

/** Installs (if needed) and compiles the peer; answers its compiled entry. */
export function buildNestPeer (log: (line: string) => void): string {
  const installed = path.join(NEST_DIR, 'node_modules', '.package-lock.json')
  if (mtime(installed) < mtime(path.join(NEST_DIR, 'package-lock.json'))) {
    log('NestJS peer: first use, installing its dependencies (npm ci --prefix test/bench/nest)')
    execFileSync('npm', ['ci', '--prefix', NEST_DIR, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: ROOT, stdio: 'inherit' })
  }
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(NEST_DIR, 'tsconfig.json')], { cwd: NEST_DIR, stdio: 'inherit' })
  return path.join(NEST_DIR, 'dist', 'main.js')
}

/** The host process that starts the peer on its own embedded PostgreSQL (compiled beside the kit's server, or the .ts under tsx). */
export function nestHostFile (kitServerFile: string): string {
  return path.join(path.dirname(kitServerFile), kitServerFile.endsWith('.js') ? 'nest-server.js' : 'nest-server.ts')
}

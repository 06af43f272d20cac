// The dependency tree agrees with the engines the package declares: installing
// from the lock on Node 20 prints no EBADENGINE warning.
import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

t.test('npm install from the lock prints no engine warning', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fpk-install-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(root, file), path.join(dir, file))
  // A dry run resolves the whole tree from the lock (and checks each package's engines) without writing node_modules.
  const { stdout, stderr } = await promisify(execFile)('npm', ['install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 1 << 24 })
  const log = stdout + stderr
  t.notMatch(log, /EBADENGINE/, 'no package wants a newer Node than the one running')
  const engines = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node
  t.equal(engines, '>=20.19', 'the engines the README promises')
  t.comment(`checked on Node ${process.version}`)
})

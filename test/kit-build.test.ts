// fpk new reuses a checkout's build when dist/ is newer than every source it
// compiles, and says why it builds otherwise (cli/kit-build.ts).
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { staleBuildReason } from '../cli/kit-build.js'

const root = mkdtempSync(path.join(tmpdir(), 'fpk-kit-build-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))

/** Writes a file whose modification time is `at` seconds after the epoch. */
function file (relative: string, at: number): void {
  const full = path.join(root, relative)
  mkdirSync(path.dirname(full), { recursive: true })
  writeFileSync(full, '// test\n')
  utimesSync(full, at, at)
}

for (const settings of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) file(settings, 1000)
for (const source of ['plugin.ts', 'lib/index.ts', 'lib/access/gate.ts', 'cli/fpk.ts']) file(source, 2000)
file('lib/parse/parse-server-lib.d.ts', 9000) // declarations compile to nothing
file('cli/templates/resource/model.ts', 9000) // templates are copied, not compiled
for (const output of ['dist/plugin.js', 'dist/lib/index.js', 'dist/lib/access/gate.js', 'dist/cli/fpk.js']) file(output, 3000)

t.test('a build newer than every compiled source is current', async (t) => {
  t.equal(staleBuildReason(root), undefined)
})

t.test('a source edited after the build makes it stale, naming the file', async (t) => {
  file('lib/access/gate.ts', 4000)
  t.equal(staleBuildReason(root), `${path.join('lib', 'access', 'gate.ts')} changed after it was built`)
  file('lib/access/gate.ts', 2000)
})

t.test('a new source without output, or changed compiler settings, make it stale', async (t) => {
  file('cli/commands/new.ts', 2000)
  t.equal(staleBuildReason(root), `${path.join('dist', 'cli', 'commands', 'new.js')} is missing`)
  file('dist/cli/commands/new.js', 3000)
  t.equal(staleBuildReason(root), undefined)
  file('tsconfig.build.json', 5000)
  t.match(staleBuildReason(root), /compiler settings or package\.json changed/)
})

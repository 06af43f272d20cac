// Runs the test files of one group (test/lanes.mjs) in this process, one
// after another, as if each ran in a process of its own: before a file is
// imported, the declarations of the files before it are forgotten and those
// of the already-imported modules it imports again are put back
// (lib/forget-declarations.ts), so its kits serve what it declares and imports,
// nothing more. Each file gets the per-file timeout afresh; what it registers
// on the root test's teardown runs when it ends, followed by a check that it
// left no kit running (the next file's kit could not start). In the
// output, a file's tests follow its "test/<file> imports with its own
// declarations".
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { forgetDeclarations, reviveDeclarations } from '../../lib/forget-declarations.js'
import { currentKitState } from '../../lib/kit-state.js'
import { collectRootTeardowns } from './process-teardown.js'
import { GROUPS } from '../lanes.mjs'
import { scaled } from './time-scale.js'
import { cpuNow } from './subtest-cost.js'

const TEST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const ROOT = path.dirname(TEST_DIR)
/** Relative imports that run the imported module (`import type` runs nothing). */
const RELATIVE_IMPORT = /(?:^|[\s;])(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?['"](\.\.?\/[^'"]+)['"]|import\(\s*['"](\.\.?\/[^'"]+)['"]\s*\)/g

/** The project's source file an import names (`./x.js` is `./x.ts` under tsx). */
function sourceOf (from: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(from), specifier)
  if (!target.startsWith(ROOT + path.sep) || target.includes(`${path.sep}node_modules${path.sep}`)) return undefined
  return [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')]
    .find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile())
}

/** Each file's own imports, read once per process: the files of a group share most of lib/. */
const importsRead = new Map<string, string[]>()

function importsOf (file: string): string[] {
  let imports = importsRead.get(file)
  if (!imports) {
    imports = [...readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)].flatMap((match) => sourceOf(file, match[1] ?? match[2]) ?? [])
    importsRead.set(file, imports)
  }
  return imports
}

/** The project's files `file` imports, directly or not, dependencies first (the order ES modules run in). */
export function importClosure (file: string, seen = new Set<string>(), order: string[] = []): string[] {
  if (seen.has(file)) return order
  seen.add(file)
  for (const imported of importsOf(file)) importClosure(imported, seen, order)
  order.push(file)
  return order
}

/** Where tap keeps a test file's snapshots when it runs alone. */
const snapshotFile = (name: string) => path.join(ROOT, 'tap-snapshots', 'test', `${name}.test.ts.test.cjs`)

const PER_FILE_MS = (Number(process.env.TAP_TIMEOUT) > 0 ? Number(process.env.TAP_TIMEOUT) : 240) * 1000

/** Runs the group named by the entry file's name (test/_groups/<group>.test.ts). */
export async function runGroup (entryUrl: string): Promise<void> {
  const group = path.basename(fileURLToPath(entryUrl), '.test.ts')
  const files = GROUPS[group] as string[] | undefined
  if (!files) throw new Error(`test/lanes.mjs has no group "${group}"`)
  // A snapshot's key starts with the process's main file: a file with snapshots runs alone.
  const withSnapshots = files.filter((name) => existsSync(snapshotFile(name)))
  if (withSnapshots.length > 0) throw new Error(`group ${group} (test/lanes.mjs): ${withSnapshots.join(', ')} keep snapshots, whose keys name the file tap runs; run them alone`)
  let teardowns: Array<() => unknown> = []
  collectRootTeardowns((fn) => { teardowns.push(fn) })
  for (const name of files) {
    const file = path.join(TEST_DIR, `${name}.test.ts`)
    t.setTimeout(scaled(PER_FILE_MS))
    const cost = process.env.FPK_SUBTEST_COST ? { cpu: cpuNow(), wall: Date.now() } : undefined
    // Imported inside a test: an idle root test would end itself (tap's autoend) while a large file loads.
    await t.test(`test/${name}.test.ts imports with its own declarations`, async (t) => {
      forgetDeclarations()
      for (const imported of importClosure(file)) reviveDeclarations(imported)
      await t.resolves(import(pathToFileURL(file).href))
    })
    await t.test(`test/${name}.test.ts ends: its root teardowns run, and no kit is left running`, async (t) => {
      const ending = teardowns
      teardowns = []
      for (const teardown of ending) await teardown()
      t.equal(currentKitState().appId, undefined, 'every kit the file started is closed')
      // FPK_SUBTEST_COST=1: what the file cost inside the group, as subtest-cost reports a file's subtests.
      if (cost) t.comment(`file cost: ${(cpuNow() - cost.cpu).toFixed(1)} CPU-s, ${((Date.now() - cost.wall) / 1000).toFixed(1)} s: test/${name}.test.ts`)
    })
  }
}

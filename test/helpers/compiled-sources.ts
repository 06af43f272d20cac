// Kit children that are the tests' own harness (jobs and queue instances, the
// boot processes of boot-many-models, cluster's instances) run from plain
// JavaScript: the checkout's TypeScript (plugin.ts, lib/, fixtures/,
// test/helpers/) transformed once per test process, by the esbuild tsx itself
// uses and with tsx's settings, into a folder under test/scratch/ that keeps
// the tree's shape (import.meta.url, relative imports and the declaring-file
// check work as from the sources). A child then loads the kit with plain node:
// 1.46 CPU-s under tsx's hooks against 0.90 (docs/internals/testing.md). Made
// from this run's sources, so never stale; removed when the test process exits.
// With NODE_V8_COVERAGE set (the coverage run) children stay on the sources:
// their coverage must land on lib/*.ts; FPK_CHILDREN_UNDER_TSX=1 does the same
// (stack traces in .ts lines, or to compare the two).
import { readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { checkoutScratchDir } from './checkout-scratch.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')
const TREES = ['lib', 'fixtures', path.join('test', 'helpers')]

let copy: Promise<string> | undefined

function sourcesOf (dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
}

async function compile (): Promise<string> {
  const out = checkoutScratchDir('compiled-')
  process.once('exit', () => rmSync(out, { recursive: true, force: true }))
  // tsx's own esbuild, so the transform is the one the sources get under tsx.
  const esbuild = createRequire(import.meta.resolve('tsx'))('esbuild') as typeof import('esbuild')
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'plugin.ts'), ...TREES.flatMap(sourcesOf)],
    outdir: out,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    keepNames: true,
    logLevel: 'error'
  })
  // Its service process would otherwise live, and tick, as long as the test process.
  await esbuild.stop()
  return out
}

/**
 * How to start `entry` (a .ts file of the checkout) in a child: plain node on its
 * compiled copy, or under tsx when coverage is collected.
 */
export async function childEntry (entry: string): Promise<{ file: string, execArgv: string[] }> {
  if (process.env.NODE_V8_COVERAGE || process.env.FPK_CHILDREN_UNDER_TSX) return { file: entry, execArgv: ['--import=tsx/esm'] }
  copy ??= compile()
  const relative = path.relative(ROOT, entry)
  return { file: path.join(await copy, relative.replace(/\.ts$/, '.js')), execArgv: [] }
}

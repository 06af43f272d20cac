// The layering of docs/internals/architecture.md, as `npm run check:cycles`
// checks it: .dependency-cruiser.cjs reads the page's table and makes one rule
// per row. Here those rules run, through dependency-cruiser's own API, on
// small trees that mirror lib/ and break them: an
// upward import, a loop between two folders, and a table whose rows no longer
// point one way. Boots nothing.
import t, { type Test } from 'tap'
import { cruise, type ICruiseResult, type IFlattenedRuleSet, type IViolation } from 'dependency-cruiser'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..')
const CONFIG = '.dependency-cruiser.cjs'
const PAGE = 'docs/internals/architecture.md'

interface CruiserConfig { forbidden: IFlattenedRuleSet['forbidden'], options: Record<string, unknown> }

/** The config as `npm run check:cycles` loads it from `dir` (a fresh load: it reads the page beside it). */
function loadConfig (dir: string): CruiserConfig {
  const require = createRequire(path.join(dir, 'package.json'))
  const file = path.join(dir, CONFIG)
  delete require.cache[file]
  return require(file) as CruiserConfig
}

async function violations (dir: string, entries: string[]): Promise<IViolation[]> {
  const config = loadConfig(dir)
  // tsConfig is left out: the planted trees have none, and the kit's imports resolve without it.
  const { tsConfig: _tsConfig, ...options } = config.options
  const result = await cruise(entries, { ...options, baseDir: dir, validate: true, ruleSet: { forbidden: config.forbidden } })
  return (result.output as ICruiseResult).summary.violations
}

/** A tree with the kit's config and layering page, and the given files (path → imports). */
function plantTree (t: Test, files: Record<string, string[]>, page = readFileSync(path.join(ROOT, PAGE), 'utf8')): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'fpk-layering-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(path.join(ROOT, CONFIG), path.join(dir, CONFIG))
  mkdirSync(path.join(dir, path.dirname(PAGE)), { recursive: true })
  writeFileSync(path.join(dir, PAGE), page)
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true })
    const lines = imports.map((target, index) => `import * as m${index} from '${path.posix.relative(path.posix.dirname(file), target).replace(/^(?!\.)/, './').replace(/\.ts$/, '')}'\nexport const u${index} = m${index}`)
    writeFileSync(path.join(dir, file), `${lines.join('\n')}\nexport const here = '${file}'\n`)
  }
  return dir
}

const named = (found: IViolation[]) => found.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)

// The kit itself passing these rules is `npm run check:cycles`' job (part of `npm test`, the same
// config with the kit's tsconfig): cruising all of lib/, cli/ and fixtures/ again here cost 2 CPU-s.

t.test('a planted upward import is refused by the rule of the row it leaves', async (t) => {
  const dir = plantTree(t, {
    'lib/parse/seam.ts': [],
    'lib/routing/route.ts': ['lib/access/admit.ts'],
    'lib/access/admit.ts': ['lib/parse/seam.ts'],
    // access sits below routing: this import points up.
    'lib/access/upward.ts': ['lib/routing/route.ts']
  })
  t.same(named(await violations(dir, ['lib'])), ['lib/access/ imports only its row: lib/access/upward.ts → lib/routing/route.ts'])
})

t.test('a planted loop between two folders is refused (its upward half)', async (t) => {
  const dir = plantTree(t, {
    'lib/model/field.ts': [],
    'lib/storage/reads.ts': ['lib/model/field.ts'],
    'lib/model/declare.ts': ['lib/storage/reads.ts']
  })
  t.same(named(await violations(dir, ['lib'])), ['lib/model/ imports only its row: lib/model/declare.ts → lib/storage/reads.ts'])
})

t.test('the leaves: lib/parse/, errors.ts and kit-state.ts import nothing of the kit', async (t) => {
  const dir = plantTree(t, {
    'lib/errors.ts': [],
    'lib/kit-state.ts': ['lib/errors.ts'],
    'lib/parse/seam.ts': ['lib/errors.ts'],
    'lib/access/admit.ts': ['lib/errors.ts', 'lib/kit-state.ts', 'lib/parse/seam.ts']
  })
  t.same(named(await violations(dir, ['lib'])).sort(), [
    'lib/kit-state.ts imports only its row: lib/kit-state.ts → lib/errors.ts',
    'lib/parse/ imports only its row: lib/parse/seam.ts → lib/errors.ts'
  ])
})

t.test('a table whose row lists a row above it (a loop on the page) stops the check', async (t) => {
  const page = readFileSync(path.join(ROOT, PAGE), 'utf8').replace(/^(\| `lib\/access\/` \|.*\| )`parse`/m, '$1`routing`, `parse`')
  t.not(page, readFileSync(path.join(ROOT, PAGE), 'utf8'), 'the planted page lists routing in access\'s row')
  const dir = plantTree(t, { 'lib/access/admit.ts': [] }, page)
  t.throws(() => loadConfig(dir), /lib\/access\/ imports from lib\/routing\/, which is not below it/)
})

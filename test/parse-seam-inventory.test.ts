// docs/internals/parse-seam.md is the review list of a Parse upgrade: it must
// name every file of lib/parse/ (and only those), and the count of deep
// imports it gives must be the count lib/parse/internals.ts makes. Outside
// lib/parse/, Parse's private modules are reached through functions with the
// kit's own signatures (parse-calls.ts and the like), never called raw. Reads
// files only; boots nothing.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..')
const PAGE = readFileSync(path.join(ROOT, 'docs/internals/parse-seam.md'), 'utf8')

/** The first-column file names of the page's Inventory table. */
function inventory (page: string): string[] {
  const section = page.split(/^## Inventory$/m)[1]?.split(/^## /m)[0] ?? ''
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1])
}

t.test('every file in lib/parse/ is on the inventory of parse-seam.md, and every file there exists', async (t) => {
  const files = readdirSync(path.join(ROOT, 'lib/parse')).filter((name) => name.endsWith('.ts')).sort()
  const listed = inventory(PAGE)
  t.ok(listed.length > 0, 'the page has an Inventory table')
  t.same(files.filter((name) => !listed.includes(name)), [], 'no file of lib/parse/ is missing from the inventory')
  t.same(listed.filter((name) => !files.includes(name)), [], 'the inventory names no file that is gone')
  t.equal(new Set(listed).size, listed.length, 'each file is listed once')
})

t.test('the count of deep imports on the page is the count internals.ts makes', async (t) => {
  const source = readFileSync(path.join(ROOT, 'lib/parse/internals.ts'), 'utf8')
  // Each is one property of the object loadInternals() builds: `name: deep('<file under parse-server/lib/>')`.
  const imported = source.match(/^ {4}\w+: \(?deep\('[^']+'\)/gm) ?? []
  const stated = PAGE.match(/`internals\.ts` imports (\d+) `parse-server\/lib\/…` modules/)
  t.ok(stated, 'the page states how many parse-server/lib modules internals.ts imports')
  t.equal(Number(stated?.[1]), imported.length, 'the stated count is the count of static deep imports in internals.ts')
})

/** What code outside lib/parse/ may take from internals.ts as values: named functions with the kit's signatures, and the storage adapter classes (constructed as Parse documents for adapter authors). */
const OUTSIDE_MAY_USE = new Set(['parseLogger', 'encodeForSave', 'encodeLikeCloudRun', 'mongoStorageAdapterClass', 'postgresStorageAdapterClass', 'gridFSBucketAdapterClass'])

function sources (dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.posix.join(dir, name)
    if (statSync(path.join(ROOT, file)).isDirectory()) return file === 'lib/parse' ? [] : sources(file)
    return file.endsWith('.ts') ? [file] : []
  })
}

t.test('outside lib/parse/, no raw Parse module (RestQuery, Auth, Config, triggers, RedisPubSub, SchemaCache, batch…) is imported from internals.ts', async (t) => {
  const raw: string[] = []
  for (const file of [...sources('lib'), ...sources('cli'), 'plugin.ts']) {
    const text = readFileSync(path.join(ROOT, file), 'utf8')
    for (const match of text.matchAll(/^import (type )?\{([^}]*)\} from '(?:\.\.?\/)+(?:lib\/)?parse\/internals\.js'/gm)) {
      if (match[1]) continue
      for (const name of match[2].split(',').map((part) => part.trim()).filter((part) => part !== '' && !part.startsWith('type '))) {
        if (!OUTSIDE_MAY_USE.has(name.split(' as ')[0])) raw.push(`${file}: ${name}`)
      }
    }
  }
  t.same(raw, [], 'each goes through a function of lib/parse/ (parse-calls.ts)')
})

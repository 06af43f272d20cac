// The files a new project shares with the example application: one source,
// fixtures/, which the kit's own tests boot, type-check and lint. `fpk new`
// copies them into src/ with the kit's import path replaced by the package
// name, less the comment line that says so (COPIED_NOTE). Everything they
// import must be the kit or another file of this list.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { KIT_NAME, KIT_ROOT } from './kit.js'

/** Paths under fixtures/, written to the same paths under the project's src/. */
export const STARTER_FILES = ['models/Note.ts', 'functions/notes.ts', 'roles.ts', 'seed.ts', 'serve.ts'] as const

export const STARTER_DIR = path.join(KIT_ROOT, 'fixtures')

/** The kit's public entry, as the example application imports it. */
const KIT_ENTRY = path.join(KIT_ROOT, 'lib', 'index.js')

/** The line each starter file carries in fixtures/ (it says nothing to the project's reader). */
const COPIED_NOTE = /^\/\/ `fpk new` copies this file into new projects \(cli\/starter\.ts\)\.\n/m

const RELATIVE_IMPORT = /(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g

/** One starter file as a project gets it: relative imports of the kit become `fastify-parse-kit`. */
export function starterSource (file: string, text: string): string {
  const here = path.dirname(path.join(STARTER_DIR, file))
  if (!COPIED_NOTE.test(text)) throw new Error(`fixtures/${file} does not say that fpk new copies it (a line like the others')`)
  return text.replace(COPIED_NOTE, '').replace(RELATIVE_IMPORT, (whole, keyword: string, quote: string, specifier: string) => {
    const target = path.resolve(here, specifier)
    if (target === KIT_ENTRY) return `${keyword}${quote}${KIT_NAME}${quote}`
    const sibling = path.relative(STARTER_DIR, target).split(path.sep).join('/').replace(/\.js$/, '.ts')
    if ((STARTER_FILES as readonly string[]).includes(sibling)) return whole
    throw new Error(`fixtures/${file} imports ${specifier}, which a new project does not get: import the kit from lib/index.js or add the file to STARTER_FILES`)
  })
}

/** Every starter file, keyed by its path under src/. */
export async function starterFiles (): Promise<Array<{ file: string, content: string }>> {
  return Promise.all(STARTER_FILES.map(async (file) => ({ file, content: starterSource(file, await readFile(path.join(STARTER_DIR, file), 'utf8')) })))
}

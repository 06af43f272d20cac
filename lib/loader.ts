// Models and handlers are discovered, not registered: importing a file runs
// its decorators. Directories are imported file by file, in name order.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Declarations } from './options.js'
import { OptionInvalidError } from './errors.js'
import { decoratorsConfigError } from './decorators-config.js'

const LOADABLE = /\.(ts|mts|js|mjs|cjs)$/
const SKIPPED = /(\.d\.ts|\.test\.[cm]?[jt]s|\.spec\.[cm]?[jt]s)$/

export async function loadDeclarations (declarations: Declarations): Promise<void> {
  if (typeof declarations === 'string') return importDirectory(declarations)
  for (const entry of declarations) {
    if (typeof entry === 'string') await importDirectory(entry)
    // A class given directly is already imported: its decorators have run.
  }
}

async function importDirectory (directory: string): Promise<void> {
  const root = path.resolve(directory)
  let entries
  try {
    entries = await readdir(root, { withFileTypes: true, recursive: true })
  } catch (error) {
    throw new OptionInvalidError(`Cannot read declarations directory ${root}: ${(error as Error).message}`)
  }
  const files = entries
    .filter((entry) => entry.isFile() && LOADABLE.test(entry.name) && !SKIPPED.test(entry.name))
    .map((entry) => path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name))
    .sort()
  for (const file of files) await importDeclarations(file)
}

async function importDeclarations (file: string): Promise<void> {
  try {
    await import(pathToFileURL(file).href)
  } catch (error) {
    // The transform fails before any decorator runs (fields declared with `declare`, parameter decorators): name the flag, not the syntax.
    throw decoratorsConfigError(error, file) ?? error
  }
}

// Models and handlers are discovered, not registered: importing a file runs
// its decorators. Directories are imported file by file, in name order.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Declarations } from './options.js'
import { DeclarationImportError, OptionInvalidError } from './errors.js'
import { decoratorsConfigError } from './decorators-config.js'
import { reviveDeclarations } from './forget-declarations.js'

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
    // Imported before and its declarations forgotten since (lib/forget-declarations.ts): its decorators do not run again.
    reviveDeclarations(file)
  } catch (error) {
    // The transform fails before any decorator runs (fields declared with `declare`, parameter decorators): name the flag, not the syntax.
    const config = decoratorsConfigError(error, file)
    if (config) throw config
    const code = (error as { code?: unknown } | null)?.code
    if (typeof code === 'string' && code.startsWith('FPK_ERR_')) throw error
    // The application's own mistake (a throw at the top of the file, a syntax error, a missing import): say which file.
    throw importFailure(file, error)
  }
}

function importFailure (file: string, error: unknown): Error {
  const what = error instanceof Error ? `${error.name}: ${error.message}` : `a ${typeof error} (${String(error)})`
  const relative = path.relative(process.cwd(), file)
  const shown = relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
  const failure = new DeclarationImportError(`${shown} threw while it was imported: ${what}`)
  failure.cause = error
  // DEBUG=1 prints the stack: the file's own frames, not the loader's.
  if (error instanceof Error && error.stack) failure.stack = `${failure.name} [${failure.code}]: ${failure.message}\nCaused by: ${error.stack}`
  return failure
}

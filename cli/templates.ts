// Templates are plain files under cli/templates/ with {{placeholders}}.
// File names: a leading "_" becomes "." (npm would drop .gitignore, .npmrc and
// friends from the published package), and a trailing ".tmpl" is removed (so
// no tool mistakes a template package.json or tsconfig.json for a real one).
import { accessSync, constants, existsSync, lstatSync, readlinkSync, statSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CliError } from './context.js'
import { KIT_ROOT } from './kit.js'

/** The templates stay in cli/templates/ (the compiled CLI in dist/cli/ reads them from there). */
export const TEMPLATES_DIR = path.join(KIT_ROOT, 'cli', 'templates')

export type Values = Record<string, string>

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g

/** Replaces every {{name}}; a placeholder without a value is a bug in the template, so it throws. */
export function render (text: string, values: Values, source = 'template'): string {
  return text.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`${source}: no value for {{${name}}}`)
    return value
  })
}

export async function renderTemplate (relative: string, values: Values): Promise<string> {
  const file = path.join(TEMPLATES_DIR, relative)
  return render(await readFile(file, 'utf8'), values, relative)
}

/** "_gitignore" → ".gitignore", "package.json.tmpl" → "package.json", per path segment. */
export function outputName (relative: string): string {
  return relative.split('/').map((segment) => segment.replace(/^_/, '.').replace(/\.tmpl$/, '')).join('/')
}

/** Every file under a template folder, as "/"-separated paths relative to it, sorted. */
export async function templateFiles (folder: string): Promise<string[]> {
  const root = path.join(TEMPLATES_DIR, folder)
  const entries = await readdir(root, { withFileTypes: true, recursive: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort()
}

export interface OutputFile {
  /** Absolute path. */
  path: string
  content: string | Buffer
  /** File mode, e.g. 0o600 for secrets. */
  mode?: number
}

/**
 * Writes files that must not exist yet. Every path is checked before anything
 * is written, so a refusal leaves the project untouched. With `force`,
 * existing files are overwritten.
 */
/** Writes the files; answers the paths it overwrote (only with force: otherwise an existing file stops the run). */
export async function writeNewFiles (files: OutputFile[], options: { force?: boolean, cwd: string }): Promise<Set<string>> {
  const existing = files.filter((file) => existsSync(file.path))
  if (existing.length > 0 && !options.force) {
    const list = existing.map((file) => displayPath(file.path, options.cwd)).join(', ')
    throw new CliError(`${list} already exist${existing.length === 1 ? 's' : ''}: nothing was written. Use -f to overwrite.`)
  }
  for (const file of files) {
    const problem = unwritable(file.path, options.cwd)
    if (problem) throw new CliError(`${problem}: nothing was written.`)
  }
  for (const file of files) {
    try {
      await mkdir(path.dirname(file.path), { recursive: true })
      await writeFile(file.path, file.content, { mode: file.mode })
      if (file.mode !== undefined) await chmod(file.path, file.mode)
    } catch (error) {
      // What the checks above could not foresee (a full disk, a name too long for the file system).
      throw new CliError(`could not write ${displayPath(file.path, options.cwd)}: ${(error as Error).message}`)
    }
  }
  return new Set(existing.map((file) => file.path))
}

/**
 * Why `file` cannot be written, checked before anything is, so a refusal
 * leaves the project as it was: a folder in its way, a file where a folder
 * must be, a folder the user may not write in, a name too long.
 */
function unwritable (file: string, cwd: string): string | undefined {
  const shown = (target: string) => displayPath(target, cwd)
  if (path.basename(file).length > 255) return `${shown(file)}: the file name is longer than 255 characters`
  if (existsSync(file) && statSync(file).isDirectory()) return `${shown(file)} is a folder`
  const target = danglingLink(file)
  if (target !== undefined) return danglingLinkProblem(shown(file), target)
  let dir = path.dirname(file)
  while (!existsSync(dir)) dir = path.dirname(dir)
  if (!statSync(dir).isDirectory()) return `${shown(dir)} is a file, not a folder`
  try {
    accessSync(dir, constants.W_OK)
  } catch {
    return `${shown(dir)} is not writable`
  }
  return undefined
}

/** Where a symbolic link at `file` points when nothing is there (a write would make that file, wherever it is); else undefined. */
export function danglingLink (file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() && !existsSync(file) ? readlinkSync(file) : undefined
  } catch {
    return undefined
  }
}

/** The refusal of a write through a link to nothing. */
export function danglingLinkProblem (shown: string, target: string): string {
  return `${shown} is a link to ${target}, which does not exist (writing would create it there); remove the link`
}

/** A path as the user would type it from `cwd`. */
export function displayPath (file: string, cwd: string): string {
  const relative = path.relative(cwd, file)
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative.split(path.sep).join('/')
}

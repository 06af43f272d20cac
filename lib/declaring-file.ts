// Which source file ran a decorator, read from the call stack: the first frame
// outside the kit's own code and node_modules (tslib's __decorate).
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const KIT_DIR = path.dirname(fileURLToPath(import.meta.url))
const FRAME_LOCATION = /(?:\(|at )((?:file:\/\/)?\/[^():]*|[A-Za-z]:\\[^():]*):\d+:\d+\)?$/

export function declaringFile (): string | undefined {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 30
  const stack = new Error('where').stack ?? ''
  Error.stackTraceLimit = limit
  for (const line of stack.split('\n').slice(1)) {
    const location = FRAME_LOCATION.exec(line.trim())?.[1]
    if (!location) continue
    const file = location.startsWith('file://') ? fileURLToPath(location.replace(/[?#].*$/, '')) : location.replace(/[?#].*$/, '')
    if (file.startsWith(KIT_DIR + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) continue
    return realFile(file)
  }
  return undefined
}

/** One file reached by two paths (a symlink) is still one declaration; a path not there stays as given. */
export function realFile (file: string): string {
  try { return realpathSync(file) } catch { return file }
}

/** A path as the user wrote it: relative to the working directory when inside it. */
export function shownPath (file: string): string {
  const relative = path.relative(process.cwd(), file)
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
}

/** A declaration taken out of its registry, with the file that made it and how to put it back. */
export interface ForgottenDeclaration {
  file: string | undefined
  revive: () => void
}

// The bench server runs as compiled JavaScript, the shape production runs in
// (`npm run start:prod`: node on tsc's output, no tsx and its loader thread,
// some 40 MB resident). The project is compiled into .bench-build/ (the same
// layout as the sources, with source maps), and the CPU profiles it records
// are mapped back to the TypeScript lines before they are summarised.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { CpuProfile } from './profiler.js'
import { ROOT } from './shared.js'

export const BUILD_DIR = path.join(ROOT, '.bench-build')

/** Compiles the project (sources, fixtures, bench) into BUILD_DIR; answers the compiled bench directory. */
export function compileBench (): string {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'tsconfig.json'),
    '--noEmit', 'false', '--declaration', 'false', '--sourceMap', '--outDir', BUILD_DIR], { cwd: ROOT, stdio: 'inherit' })
  return path.join(BUILD_DIR, 'test', 'bench')
}

const maps = new Map<string, SourceMap | undefined>()

function mapOf (file: string): SourceMap | undefined {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`
    maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined)
  }
  return maps.get(file)
}

/** Frames in BUILD_DIR point at the TypeScript file and line they were compiled from. */
export function toSourceFrames (profile: CpuProfile): CpuProfile {
  for (const { callFrame: frame } of profile.nodes) {
    if (!frame.url.startsWith('file://')) continue
    const file = fileURLToPath(frame.url)
    if (!file.startsWith(BUILD_DIR + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) continue
    const entry = mapOf(file)?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string, originalLine?: number, originalColumn?: number } | undefined
    if (entry?.originalSource === undefined) continue
    const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(file), entry.originalSource)
    frame.url = pathToFileURL(source).href
    frame.lineNumber = entry.originalLine!
    frame.columnNumber = entry.originalColumn!
  }
  return profile
}

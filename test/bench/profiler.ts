// CPU profiles of one phase of a process (one scenario, or a boot), through
// the inspector: the same samples `node --cpu-prof` takes, but started and
// stopped around the phase so that each profile shows one kind of work.
// Frames in the project's own code are mapped back to their TypeScript source
// (tsx registers source maps; compiled, node's --enable-source-maps does), so
// the saved profile points at .ts files and lines.
import { Session } from 'node:inspector/promises'
import { findSourceMap } from 'node:module'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './shared.js'

/** Sampling interval in microseconds (V8's default is 1000). */
const INTERVAL_US = 500
const PROJECT_URL = pathToFileURL(ROOT).href + '/'

export interface CallFrame { functionName: string, url: string, lineNumber: number, columnNumber: number, scriptId?: string }
export interface ProfileNode { id: number, callFrame: CallFrame, hitCount?: number, children?: number[] }
export interface CpuProfile { nodes: ProfileNode[], startTime: number, endTime: number, samples?: number[], timeDeltas?: number[] }

export class PhaseProfiler {
  private session: Session | undefined

  async start (): Promise<void> {
    if (this.session) throw new Error('a profile is already running')
    const session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: INTERVAL_US })
    await session.post('Profiler.start')
    this.session = session
  }

  /** Stops the profile and writes it (.cpuprofile: Chrome DevTools and speedscope open it). */
  async stop (file: string): Promise<void> {
    const session = this.session
    if (!session) throw new Error('no profile is running')
    this.session = undefined
    const { profile } = await session.post('Profiler.stop')
    await session.post('Profiler.disable')
    session.disconnect()
    mapToSource(profile as unknown as CpuProfile)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify(profile))
  }
}

/**
 * Rewrites frames in the project's own files (not node_modules) to their TypeScript file, line
 * and column. The file too: a frame left naming compiled JavaScript with a TypeScript line would
 * be mapped a second time by the analysis (compiled.ts), to a wrong line and function.
 */
function mapToSource (profile: CpuProfile): void {
  for (const { callFrame } of profile.nodes) {
    if (!callFrame.url.startsWith(PROJECT_URL) || callFrame.url.includes('/node_modules/')) continue
    const map = findSourceMap(callFrame.url)
    const entry = map?.findEntry(callFrame.lineNumber, callFrame.columnNumber) as { originalSource?: string, originalLine?: number, originalColumn?: number } | undefined
    if (entry?.originalLine === undefined) continue
    if (entry.originalSource) callFrame.url = sourceURL(entry.originalSource, callFrame.url)
    callFrame.lineNumber = entry.originalLine
    callFrame.columnNumber = entry.originalColumn ?? 0
  }
}

/** A source map's source as a file URL (maps may name it relative to the compiled file). */
function sourceURL (source: string, compiledURL: string): string {
  return new URL(source, compiledURL).href
}

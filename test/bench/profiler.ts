// CPU profiles of one phase of a process (one scenario, or a boot), through
// the inspector: the same samples `node --cpu-prof` takes, but started and
// stopped around the phase so that each profile shows one kind of work.
// Frames in the project's own TypeScript are mapped back to their source
// lines (tsx registers source maps), so the saved profile points at .ts lines.
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

/** Rewrites positions in the project's own files (not node_modules) to their TypeScript lines and columns. */
function mapToSource (profile: CpuProfile): void {
  for (const { callFrame } of profile.nodes) {
    if (!callFrame.url.startsWith(PROJECT_URL) || callFrame.url.includes('/node_modules/')) continue
    const map = findSourceMap(callFrame.url)
    const entry = map?.findEntry(callFrame.lineNumber, callFrame.columnNumber) as { originalLine?: number, originalColumn?: number } | undefined
    if (entry?.originalLine === undefined) continue
    callFrame.lineNumber = entry.originalLine
    callFrame.columnNumber = entry.originalColumn ?? 0
  }
}

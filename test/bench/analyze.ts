// Reads a .cpuprofile and says where the time went: self time by package,
// the share of samples with the kit's own code (lib/**, plugin.ts) on the
// stack, and the kit's functions ranked by inclusive time.
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { CpuProfile, CallFrame } from './profiler.js'
import { ROOT, round } from './shared.js'
import { toSourceFrames } from './compiled.js'

export interface FrameCost {
  function: string
  /** Path relative to the project (or the package path inside node_modules) and 1-based line. */
  location: string
  origin: string
  selfMs: number
  inclusiveMs: number
  /** Self time plus the runtime work (builtins, node core) it called directly. */
  ownedMs: number
  /** Shares of the busy (non-idle) time. */
  selfPct: number
  inclusivePct: number
  ownedPct: number
}

export interface ProfileSummary {
  file: string
  busyMs: number
  idleMs: number
  /** Self time by origin: a package name, "node core", "V8/native", "GC", "kit (lib/**)", "fixtures"… */
  byOrigin: Array<{ origin: string, selfMs: number, selfPct: number }>
  /**
   * Time by owner: each sample goes to the nearest JavaScript frame of a package or of the project
   * (runtime frames — V8 builtins, node core — count for the code that called them, e.g. JSON.stringify
   * or a hash for the kit function that asked for it).
   */
  byOwner: Array<{ origin: string, ms: number, pct: number }>
  /** Share of busy time owned by kit code, and the kit functions that own most. */
  kitOwnedPct: number
  kitOwners: FrameCost[]
  /** Samples with at least one kit frame on the stack (synchronous stacks: work awaited elsewhere is not included). */
  kitInclusivePct: number
  kitSelfPct: number
  /** Kit functions ranked by inclusive time. */
  kitFrames: FrameCost[]
  /** Every function ranked by self time. */
  hottest: FrameCost[]
}

export const KIT_ORIGIN = 'kit (lib/**)'
/** Origins that are the runtime rather than anybody's code. */
const RUNTIME = new Set(['V8/native', 'V8 (program)', 'node core', 'GC'])

export async function summariseProfile (file: string, top = 8): Promise<ProfileSummary> {
  const profile = toSourceFrames(JSON.parse(await readFile(file, 'utf8')) as CpuProfile)
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  const self = new Map<string, number>()
  const owned = new Map<string, number>()
  const originOwned = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const frames = new Map<string, CallFrame>()
  const originSelf = new Map<string, number>()
  let busy = 0
  let idle = 0
  let kitInclusive = 0
  let kitSelf = 0

  for (let i = 0; i < samples.length; i++) {
    const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000
    const leaf = byId.get(samples[i])
    if (!leaf) continue
    if (leaf.callFrame.functionName === '(idle)') { idle += ms; continue }
    busy += ms
    const leafOrigin = originOf(leaf.callFrame)
    originSelf.set(leafOrigin, (originSelf.get(leafOrigin) ?? 0) + ms)
    const leafKey = keyOf(leaf.callFrame)
    frames.set(leafKey, leaf.callFrame)
    self.set(leafKey, (self.get(leafKey) ?? 0) + ms)
    if (leafOrigin === KIT_ORIGIN) kitSelf += ms

    const onStack = new Set<string>()
    let kitSeen = false
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame
      const key = keyOf(frame)
      if (onStack.has(key)) continue
      onStack.add(key)
      frames.set(key, frame)
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms)
      if (originOf(frame) === KIT_ORIGIN) kitSeen = true
    }
    if (kitSeen) kitInclusive += ms

    let owner: CallFrame | undefined
    for (let id: number | undefined = leaf.id; id !== undefined && !owner; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame
      if (!RUNTIME.has(originOf(frame))) owner = frame
    }
    const ownerOrigin = owner ? originOf(owner) : leafOrigin === 'GC' ? 'GC' : 'runtime'
    originOwned.set(ownerOrigin, (originOwned.get(ownerOrigin) ?? 0) + ms)
    if (owner) {
      const key = keyOf(owner)
      frames.set(key, owner)
      owned.set(key, (owned.get(key) ?? 0) + ms)
    }
  }

  const pct = (ms: number) => busy > 0 ? round(100 * ms / busy, 1) : 0
  const cost = (key: string): FrameCost => {
    const frame = frames.get(key)!
    const selfMs = self.get(key) ?? 0
    const inclusiveMs = inclusive.get(key) ?? 0
    return {
      function: frame.functionName || enclosingName(frame),
      location: locationOf(frame),
      origin: originOf(frame),
      selfMs: round(selfMs, 1),
      inclusiveMs: round(inclusiveMs, 1),
      ownedMs: round(owned.get(key) ?? 0, 1),
      selfPct: pct(selfMs),
      inclusivePct: pct(inclusiveMs),
      ownedPct: pct(owned.get(key) ?? 0)
    }
  }
  const kitKeys = [...inclusive.keys()].filter((key) => originOf(frames.get(key)!) === KIT_ORIGIN)
  return {
    file: path.relative(ROOT, file),
    busyMs: round(busy),
    idleMs: round(idle),
    byOrigin: [...originSelf.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([origin, ms]) => ({ origin, selfMs: round(ms, 1), selfPct: pct(ms) })),
    byOwner: [...originOwned.entries()].sort((a, b) => b[1] - a[1])
      .map(([origin, ms]) => ({ origin, ms: round(ms, 1), pct: pct(ms) })),
    kitOwnedPct: pct(originOwned.get(KIT_ORIGIN) ?? 0),
    kitOwners: [...owned.keys()].filter((key) => originOf(frames.get(key)!) === KIT_ORIGIN).map(cost)
      .sort((a, b) => b.ownedMs - a.ownedMs).slice(0, top),
    kitInclusivePct: pct(kitInclusive),
    kitSelfPct: pct(kitSelf),
    kitFrames: kitKeys.map(cost).sort((a, b) => b.inclusiveMs - a.inclusiveMs).slice(0, top),
    hottest: [...self.keys()].map(cost).sort((a, b) => b.selfMs - a.selfMs).slice(0, top)
  }
}

const sources = new Map<string, string[]>()

/** "entityHandler › (anonymous)" for an arrow function inside a named top-level function of the project. */
function enclosingName (frame: CallFrame): string {
  if (!frame.url.startsWith('file://') || frame.url.includes('/node_modules/')) return '(anonymous)'
  const file = fileURLToPath(frame.url)
  if (!sources.has(file)) {
    try { sources.set(file, readFileSync(file, 'utf8').split('\n')) } catch { sources.set(file, []) }
  }
  const lines = sources.get(file)!
  for (let line = Math.min(frame.lineNumber, lines.length - 1); line >= 0; line--) {
    const match = /^(?:export\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)/.exec(lines[line])
    if (match) return `${match[1]} › (anonymous)`
  }
  return '(anonymous)'
}

function keyOf (frame: CallFrame): string {
  return `${frame.functionName}|${frame.url}|${frame.lineNumber}|${frame.columnNumber}`
}

function filePath (url: string): string {
  return url.startsWith('file://') ? fileURLToPath(url) : url
}

export function originOf (frame: CallFrame): string {
  const { url, functionName } = frame
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC'
    if (functionName === '(program)') return 'V8 (program)'
    return 'V8/native'
  }
  if (url.startsWith('node:')) return 'node core'
  const file = filePath(url)
  const inModules = file.lastIndexOf('/node_modules/')
  if (inModules >= 0) {
    const rest = file.slice(inModules + '/node_modules/'.length).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  const relative = path.relative(ROOT, file)
  if (relative.startsWith('..')) return 'other'
  if (relative.startsWith('lib/') || relative === 'plugin.ts') return KIT_ORIGIN
  if (relative.startsWith('fixtures/')) return 'fixtures'
  if (relative.startsWith('test/')) return 'bench'
  return 'project'
}

function locationOf (frame: CallFrame): string {
  if (frame.url === '') return ''
  if (frame.url.startsWith('node:')) return `${frame.url}:${frame.lineNumber + 1}`
  const file = filePath(frame.url)
  const inModules = file.lastIndexOf('/node_modules/')
  const shown = inModules >= 0 ? file.slice(inModules + '/node_modules/'.length) : path.relative(ROOT, file)
  return `${shown}:${frame.lineNumber + 1}`
}

// What a server process's memory holds, for test/bench/memory-owners.ts: a V8
// heap snapshot summed by node type and by constructor (self sizes), V8's
// heap spaces, and the CommonJS modules loaded, by package. Taken inside the
// server (the 'heap-summary' command of server-commands.ts), after a full GC
// unless asked for the process as it is (under load: where its RSS is).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { getHeapSnapshot, getHeapSpaceStatistics } from 'node:v8'

export interface HeapSummary {
  rssMB: number
  heapUsedMB: number
  heapTotalMB: number
  externalMB: number
  arrayBuffersMB: number
  /** RSS in anonymous pages (heaps, malloc) and in mapped files (the node binary, native addons): /proc/self/status, Linux only. */
  rssAnonMB?: number
  rssFileMB?: number
  /** V8's spaces: used of committed (new space is where a high allocation rate makes V8 grow the semi-spaces). */
  spaces: Array<{ space: string, usedMB: number, committedMB: number }>
  /** Self size by snapshot node type (object, closure, code, string, array, hidden…); empty without a snapshot. */
  byType: Array<{ type: string, MB: number, count: number }>
  /** Self size of objects and closures by constructor / function name, largest first. */
  byConstructor: Array<{ name: string, MB: number, count: number }>
  /** CommonJS files loaded, by package (node_modules folder) or "app" for the rest. */
  modules: Array<{ owner: string, files: number }>
}

const MB = (bytes: number) => Math.round(bytes / 2 ** 20 * 10) / 10

interface Snapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[], ...unknown[]] } }
  nodes: number[]
  strings: string[]
}

async function snapshotJSON (): Promise<Snapshot> {
  const chunks: string[] = []
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk))
  return JSON.parse(chunks.join('')) as Snapshot
}

/**
 * With `snapshot`, also a heap snapshot summed by type and constructor. Taking
 * one allocates the snapshot's graph outside the JS heap, memory the allocator
 * keeps: every RSS read after it is inflated, so take it last.
 */
export async function heapSummary (snapshot: boolean, top = 25, collect = true): Promise<HeapSummary> {
  if (collect) (globalThis as { gc?: () => void }).gc?.()
  const usage = process.memoryUsage()
  const kinds = rssKinds()
  // Read before the snapshot: its JSON text would sit in the large-object space.
  const spaces = getHeapSpaceStatistics().filter((space) => space.physical_space_size > 0)
  const byType = new Map<string, { size: number, count: number }>()
  const byConstructor = new Map<string, { size: number, count: number }>()
  if (snapshot) sumSnapshot(await snapshotJSON(), byType, byConstructor)
  const sorted = (map: Map<string, { size: number, count: number }>) => [...map].sort((a, b) => b[1].size - a[1].size)
  const modules = new Map<string, number>()
  for (const file of Object.keys(createRequire(import.meta.url).cache)) {
    const folders = file.match(/node_modules\/(?:@[^/]+\/)?[^/]+/g)
    const owner = folders ? folders[folders.length - 1].slice('node_modules/'.length) : 'app'
    modules.set(owner, (modules.get(owner) ?? 0) + 1)
  }
  return {
    rssMB: MB(usage.rss),
    heapUsedMB: MB(usage.heapUsed),
    heapTotalMB: MB(usage.heapTotal),
    externalMB: MB(usage.external),
    arrayBuffersMB: MB(usage.arrayBuffers),
    ...kinds,
    spaces: spaces.map((space) => ({ space: space.space_name, usedMB: MB(space.space_used_size), committedMB: MB(space.physical_space_size) })),
    byType: sorted(byType).map(([type, { size, count }]) => ({ type, MB: MB(size), count })),
    byConstructor: sorted(byConstructor).slice(0, top).map(([name, { size, count }]) => ({ name, MB: MB(size), count })),
    modules: [...modules].sort((a, b) => b[1] - a[1]).slice(0, top).map(([owner, files]) => ({ owner, files }))
  }
}

function rssKinds (): { rssAnonMB?: number, rssFileMB?: number } {
  let status: string
  try { status = readFileSync('/proc/self/status', 'utf8') } catch { return {} }
  const kB = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN) * 1024
  return { rssAnonMB: MB(kB('RssAnon')), rssFileMB: MB(kB('RssFile')) }
}

type Sums = Map<string, { size: number, count: number }>

function sumSnapshot (snapshot: Snapshot, byType: Sums, byConstructor: Sums): void {
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field))
  const add = (map: Map<string, { size: number, count: number }>, key: string, size: number) => {
    const entry = map.get(key) ?? { size: 0, count: 0 }
    entry.size += size
    entry.count++
    map.set(key, entry)
  }
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]]
    const size = snapshot.nodes[i + sizeAt]
    add(byType, type, size)
    if (type === 'object' || type === 'closure') add(byConstructor, `${type === 'closure' ? 'closure ' : ''}${snapshot.strings[snapshot.nodes[i + nameAt]]}`, size)
  }
}

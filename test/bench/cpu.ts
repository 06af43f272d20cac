// CPU time a process tree spends (the bench server plus its PostgreSQL: the
// postmaster and every backend), read from /proc, and core pinning with
// taskset. Wall-clock req/s moves with whatever else runs on the machine;
// CPU seconds per request barely does, so both are reported.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'

const TICKS_PER_SECOND = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100 } catch { return 100 }
})()

/** One process's CPU so far, in ticks. */
export interface ProcessTicks {
  ppid: number
  /** Its own utime + stime. */
  own: number
  /** What its children used before it reaped them (cutime + cstime): their whole lifetimes. */
  reaped: number
}

/** Every process of a tree at one instant, by pid. */
export type TreeSample = Map<number, ProcessTicks>

export const cpuAccountingAvailable = (() => {
  try { readFileSync('/proc/self/stat', 'utf8'); return true } catch { return false }
})()

function readStat (pid: number): ProcessTicks | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) }
  } catch {
    return undefined
  }
}

/** Every process descending from root (root included), with its CPU ticks so far. */
export function sampleTree (root: number): TreeSample {
  const stats = new Map<number, ProcessTicks>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const stat = readStat(pid)
    if (stat) stats.set(pid, stat)
  }
  const tree: TreeSample = new Map()
  const visit = (pid: number) => {
    const stat = stats.get(pid)
    if (!stat || tree.has(pid)) return
    tree.set(pid, stat)
    for (const [child, childStat] of stats) if (childStat.ppid === pid) visit(child)
  }
  visit(root)
  return tree
}

/**
 * CPU milliseconds the tree used between two samples. A process born in
 * between counts from zero. A process that exited in between (a PostgreSQL
 * backend closing) shows up only in its parent's reaped-children ticks, and
 * those hold its whole lifetime: counting them as they are would charge the
 * window with CPU spent long before it (a route that sends no SQL once showed
 * 1.85 s of PostgreSQL in a 4 s window). So a parent's reaped ticks count
 * only above what its vanished children had already used at the first sample.
 */
export function cpuMsBetween (before: TreeSample, after: TreeSample): number {
  const usedBefore = new Map<number, number>()
  for (const [pid, stat] of before) {
    if (after.has(pid)) continue
    usedBefore.set(stat.ppid, (usedBefore.get(stat.ppid) ?? 0) + stat.own + stat.reaped)
  }
  let ticks = 0
  for (const [pid, now] of after) {
    const then = before.get(pid)
    ticks += Math.max(0, now.own - (then?.own ?? 0))
    ticks += Math.max(0, now.reaped - (then?.reaped ?? 0) - (usedBefore.get(pid) ?? 0))
  }
  return (ticks * 1000) / TICKS_PER_SECOND
}

/** CPU milliseconds of the root process alone (its threads included; not its children). */
export function nodeCpuMs (before: TreeSample, after: TreeSample, pid: number): number {
  return (Math.max(0, (after.get(pid)?.own ?? 0) - (before.get(pid)?.own ?? 0)) * 1000) / TICKS_PER_SECOND
}

/**
 * Core layout on this machine: the server and its PostgreSQL on one set of
 * cores, the load generator on the others. Undefined with fewer than 2 cores
 * or without taskset.
 */
export function coreLayout (): { server: string, load: string } | undefined {
  const cores = os.cpus().length
  if (cores < 2 || process.env.BENCH_PIN === '0') return undefined
  try { execFileSync('taskset', ['--version'], { stdio: 'ignore' }) } catch { return undefined }
  // Give the server half the cores (at least one); the load generator gets the rest.
  const serverCores = Math.max(1, Math.floor(cores / 2))
  const list = (from: number, to: number) => from === to ? String(from) : `${from}-${to}`
  return { server: list(0, serverCores - 1), load: list(serverCores, cores - 1) }
}

/** Pins every thread of a process (children it starts later inherit the mask). */
export function pin (pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' })
}

// FPK_SUBTEST_COST=1: each top-level subtest of a file comments its wall time
// and CPU: the test process's own and that of every process under it, the
// reaped ones (cutime) and the growth of those still running (a server started
// in one subtest and stopped in another). Read from /proc: a file's costliest
// steps without a profiler. A process left to init (a detached daemon whose
// parent exited) is not counted.
import { readFileSync, readdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import type { Test } from 'tap'

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux

function cpuOf (pid: number | string): { ppid: number, total: number } {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const total = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) / TICKS_PER_SECOND
  return { ppid: Number(fields[1]), total }
}

/** CPU-s of this process and of every process under it, running or reaped (a server started in one subtest runs through the next). */
export function cpuNow (): number {
  const stats = new Map<number, { ppid: number, total: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try { stats.set(Number(entry), cpuOf(entry)) } catch {} // gone meanwhile
  }
  const under = (pid: number): boolean => {
    for (let at = stats.get(pid); at !== undefined; at = stats.get(at.ppid)) if (at.ppid === process.pid) return true
    return false
  }
  let total = cpuOf('self').total
  for (const [pid, stat] of stats) if (under(pid)) total += stat.total
  return total
}

export function reportSubtestCost (t: Test): void {
  if (!process.env.FPK_SUBTEST_COST) return
  let mark = { cpu: 0, wall: 0, load: 0 }
  t.beforeEach(() => { mark = { cpu: cpuNow(), wall: Date.now(), load: loadavg()[0] } })
  t.afterEach((t) => {
    const cpu = cpuNow() - mark.cpu
    const wall = (Date.now() - mark.wall) / 1000
    t.comment(`cost: ${cpu.toFixed(1)} CPU-s, ${wall.toFixed(1)} s (ended ${process.uptime().toFixed(0)} s into the process), load ${mark.load.toFixed(1)}-${loadavg()[0].toFixed(1)}: ${t.name}`)
  })
}

// What the OS says about a process: whether it runs, who its parent is, what
// it is — for telling a live instance from the leftovers of a gone one.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'

export function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export async function exited (pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (!alive(pid)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return !alive(pid)
}

export function parentOf (pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    const ps = spawnSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' })
    const parent = Number(ps.stdout?.trim())
    return ps.status === 0 && Number.isInteger(parent) && parent > 0 ? parent : undefined
  }
}

/** " (node server.js)", from the process's command line when the OS shows it. */
export function describeProcess (pid: number): string {
  try {
    const [program, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
    const line = program ? [path.basename(program), ...args.slice(0, 3)].join(' ') : ''
    return line ? ` (${line.length > 100 ? `${line.slice(0, 97)}...` : line})` : ''
  } catch {
    return ''
  }
}

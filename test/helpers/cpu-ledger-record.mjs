// KIT_CPU_LEDGER=<dir>: each test process appends, as it exits, one JSON line
// to <dir>/ledger.jsonl with the CPU it used and the CPU of its children that
// were waited for (/proc/self/stat: utime, stime, cutime, cstime). The kit
// processes a test spawns and the embedded PostgreSQL servers it stops (and
// their backends, which the postmaster reaps) land in cutime; what is still
// running at exit does not, so the CPU of those processes so far is recorded
// apart (`unreaped`). The runner's own CPU is read from the parent too: its
// last line holds nearly all of it. `node test/cpu-ledger.mjs <dir>` prints
// the table. Loaded only when the variable is set (test/helpers/tap-timeout.mjs).
import { appendFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import path from 'node:path'

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux

/** utime, stime, cutime, cstime (seconds), the parent's pid and the start (ticks since boot) of a process. */
function statOf (pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces; fields after its ')' are plain.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const seconds = (index) => Number(fields[index]) / TICKS_PER_SECOND
  return { ppid: Number(fields[1]), utime: seconds(11), stime: seconds(12), cutime: seconds(13), cstime: seconds(14) }
}

/** CPU so far of the children still running at exit (and of their waited-for children). */
function unreapedChildren () {
  let total = 0
  const names = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = statOf(entry)
      if (stat.ppid !== process.pid) continue
      total += stat.utime + stat.stime + stat.cutime + stat.cstime
      names.push(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())
    } catch {} // gone meanwhile
  }
  return { total, names }
}

function parentSelf () {
  try {
    const parent = statOf(process.ppid)
    return { pid: process.ppid, cpu: parent.utime + parent.stime }
  } catch {
    return undefined
  }
}

const dir = path.resolve(process.env.KIT_CPU_LEDGER)
const startedAt = Date.now() - process.uptime() * 1000
const loadAtStart = loadavg()[0]
process.once('exit', (code) => {
  try {
    const self = statOf('self')
    const unreaped = unreapedChildren()
    const line = {
      file: path.relative(process.cwd(), process.argv[1] ?? ''),
      lane: process.env.KIT_TEST_DATABASE || 'postgres',
      pid: process.pid,
      code,
      self: round(self.utime + self.stime),
      user: round(self.utime),
      system: round(self.stime),
      children: round(self.cutime + self.cstime),
      unreaped: round(unreaped.total),
      unreapedNames: unreaped.names,
      wall: round((Date.now() - startedAt) / 1000),
      startedAt: new Date(startedAt).toISOString(),
      load: [round(loadAtStart), round(loadavg()[0])],
      runner: parentSelf()
    }
    mkdirSync(dir, { recursive: true })
    appendFileSync(path.join(dir, 'ledger.jsonl'), JSON.stringify(line) + '\n')
  } catch (error) {
    process.stderr.write(`cpu ledger: ${error.message}\n`)
  }
})

function round (value) { return Math.round(value * 100) / 100 }

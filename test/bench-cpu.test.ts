// The benchmark's CPU accounting (test/bench/cpu.ts): a PostgreSQL backend
// that exits inside a measured window is charged only for what it used in
// that window, not for its whole life (which Linux adds to the postmaster's
// reaped-children time when the backend exits).
import t from 'tap'
import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { cpuMsBetween, nodeCpuMs, sampleTree, type TreeSample } from './bench/cpu.js'

const tree = (entries: Array<[number, number, number, number]>): TreeSample =>
  new Map(entries.map(([pid, ppid, own, reaped]) => [pid, { ppid, own, reaped }]))

t.test('a child that exits in the window counts only from the first sample on', async (t) => {
  // pid 1 (postmaster) has child 2 (a backend that used 500 ticks before the window and 3 in it, then exited).
  const before = tree([[1, 0, 10, 0], [2, 1, 500, 0]])
  const after = tree([[1, 0, 12, 503]])
  const ticksPerMs = cpuMsBetween(tree([[1, 0, 0, 0]]), tree([[1, 0, 1, 0]]))
  t.equal(cpuMsBetween(before, after), 5 * ticksPerMs, 'postmaster 2 ticks + the backend\'s last 3, not its 500 before')
})

t.test('a child born and reaped inside the window counts whole', async (t) => {
  const ticksPerMs = cpuMsBetween(tree([[1, 0, 0, 0]]), tree([[1, 0, 1, 0]]))
  t.equal(cpuMsBetween(tree([[1, 0, 10, 0]]), tree([[1, 0, 10, 7]])), 7 * ticksPerMs)
  t.equal(cpuMsBetween(tree([[1, 0, 10, 0]]), tree([[1, 0, 10, 0], [3, 1, 4, 0]])), 4 * ticksPerMs, 'a live newcomer counts from zero')
})

t.test('the root alone leaves its children out', async (t) => {
  const ticksPerMs = cpuMsBetween(tree([[1, 0, 0, 0]]), tree([[1, 0, 1, 0]]))
  t.equal(nodeCpuMs(tree([[1, 0, 10, 0], [2, 1, 1, 0]]), tree([[1, 0, 13, 50], [2, 1, 9, 0]]), 1), 3 * ticksPerMs)
})

t.test('a real short-lived child is not charged for its earlier life', async (t) => {
  // A child that burns CPU, then idles until killed inside the window: the window sees almost nothing.
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end); setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  t.teardown(() => { child.kill('SIGKILL') })
  await sleep(1500)
  const before = sampleTree(process.pid)
  t.ok(before.has(child.pid!), 'the child is in the tree')
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  const after = sampleTree(process.pid)
  t.notOk(after.has(child.pid!), 'the child is gone')
  const rootOnly = nodeCpuMs(before, after, process.pid)
  t.ok(cpuMsBetween(before, after) - rootOnly < 100, `its 600 ms before the window are not charged (${cpuMsBetween(before, after)} ms in all, ${rootOnly} ms this process)`)
})

// Waits for builds, installs and servers in tests: a base that suffices on a
// quiet machine, stretched by how busy the machine is when the wait starts
// (load average per core, at most 4×) and by FPK_TEST_TIME_SCALE (default 1).
// They bound hangs; they are never a speed check.
import { availableParallelism, loadavg } from 'node:os'

export function scaled (baseMs: number): number {
  const busy = Math.min(4, Math.max(1, loadavg()[0] / availableParallelism()))
  const factor = Number(process.env.FPK_TEST_TIME_SCALE) > 0 ? Number(process.env.FPK_TEST_TIME_SCALE) : 1
  return Math.round(baseMs * busy * factor)
}

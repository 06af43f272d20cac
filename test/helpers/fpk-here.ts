// The fpk command line run in the test's own process, its output captured:
// the CLI checks that need no separate process stay fast.
import type { Io } from '../../cli/context.js'
import { main } from '../../cli/fpk.js'

export async function fpkHere (cwd: string, ...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    cwd,
    out: (text) => { stdout += text },
    err: (text) => { stderr += text },
    interactive: false,
    fancyProgress: false,
    ask: async () => { throw new Error('no questions in tests') }
  }
  const code = await main(['node', 'fpk', ...args], io)
  return { code, stdout, stderr }
}

// What a command may touch of the outside world: the working directory, the
// two output streams and the terminal. Commands take it as an argument, so
// they never reach for process.* themselves.
import { createInterface } from 'node:readline/promises'

export interface Io {
  cwd: string
  /** The environment commands may read (DATABASE_URI); none when left out. */
  env?: Record<string, string | undefined>
  out (text: string): void
  err (text: string): void
  /** Both stdin and stdout are terminals: questions may be asked. */
  interactive: boolean
  /** stderr is a terminal: a spinner may redraw a line. */
  fancyProgress: boolean
  ask (question: string): Promise<string>
}

/** A refusal or failure the user can act on; printed as `fpk: <message>` with no stack trace. */
export class CliError extends Error {
  constructor (message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'CliError'
  }
}

export function processIo (): Io {
  return {
    cwd: process.cwd(),
    env: process.env,
    out: (text) => { process.stdout.write(text) },
    err: (text) => { process.stderr.write(text) },
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    fancyProgress: Boolean(process.stderr.isTTY),
    ask: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stdout })
      try {
        return await rl.question(question)
      } finally {
        rl.close()
      }
    }
  }
}

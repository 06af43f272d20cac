// Runs `npm install` in a new project with a progress indication: a spinner
// on a terminal, otherwise a line every few seconds. npm's own output is kept
// and shown only when the install fails.
import { spawn } from 'node:child_process'
import { CliError, type Io } from './context.js'

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const KEEP_LINES = 60

/** Variables npm sets for the command that ran fpk (npx, npm exec, a script); the child npm must not inherit them. */
function childEnv (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(env)) {
    if (/^npm_(lifecycle_|package_|command$|config_call$|config_local_prefix$)/i.test(key)) continue
    clean[key] = value
  }
  return clean
}

export async function npmInstall (io: Io, dir: string, args: string[] = ['install', '--no-audit', '--no-fund']): Promise<void> {
  const started = Date.now()
  const seconds = () => Math.round((Date.now() - started) / 1000)
  const label = 'Installing dependencies (npm install)'
  let frame = 0
  let timer: NodeJS.Timeout
  if (io.fancyProgress) {
    timer = setInterval(() => io.err(`\r${FRAMES[frame++ % FRAMES.length]} ${label} ${seconds()}s`), 100)
  } else {
    io.err(`${label}…\n`)
    timer = setInterval(() => io.err(`  … still installing (${seconds()}s)\n`), 10_000)
  }
  const output: string[] = []
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString().split('\n'))
    if (output.length > KEEP_LINES * 2) output.splice(0, output.length - KEEP_LINES)
  }
  let code: number | null
  try {
    code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn('npm', args, { cwd: dir, env: childEnv(process.env), stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' })
      child.stdout.on('data', keep)
      child.stderr.on('data', keep)
      child.on('error', reject)
      child.on('close', resolve)
    })
  } catch (error) {
    code = null
    output.push(`could not run npm: ${(error as Error).message}`)
  } finally {
    clearInterval(timer!)
    if (io.fancyProgress) io.err('\r\x1b[2K')
  }
  if (code !== 0) {
    const tail = output.filter((line) => line.trim() !== '').slice(-KEEP_LINES).join('\n')
    throw new CliError(`npm install failed in ${dir} (exit ${code ?? 'error'}) after ${seconds()}s:\n${tail}\nThe project files are in place: fix the problem above, then run npm install there.`)
  }
  io.err(`✔ Installed dependencies in ${seconds()}s\n`)
}

// The kit as a tarball inside a new project (vendor/fastify-parse-kit-x.y.z.tgz):
// copied when it already is one, else packed from its folder with `npm pack`
// (which builds dist/ first in a checkout, unless dist/ is newer than every
// source). The project then installs it like a registry package and keeps
// working wherever the checkout or the tarball goes.
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { CliError, type Io } from './context.js'
import { staleBuildReason } from './kit-build.js'
import { runningFromCheckout } from './kit.js'

export async function kitTarball (io: Io, source: string): Promise<{ name: string, content: Buffer }> {
  if (source.endsWith('.tgz')) return { name: path.basename(source), content: await readFile(source) }
  const destination = await mkdtemp(path.join(tmpdir(), 'fpk-pack-'))
  try {
    // A checkout builds dist/ in its prepare script, unless the build there is current; an installed copy already has it.
    const checkout = runningFromCheckout(source)
    const stale = checkout ? staleBuildReason(source) : undefined
    io.err(stale !== undefined
      ? `Packing fastify-parse-kit from ${source} into vendor/: building it first (${stale}; npm pack runs tsc, a minute or two)…\n`
      : `Packing fastify-parse-kit from ${source} into vendor/ (npm pack, ${checkout ? 'reusing the build in dist/, which is newer than the sources' : 'the installed package as it is'})…\n`)
    const args = ['pack', '--pack-destination', destination, ...(stale === undefined ? ['--ignore-scripts'] : [])]
    const { code, output } = await new Promise<{ code: number | null, output: string }>((resolve, reject) => {
      const child = spawn('npm', args, { cwd: source, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' })
      let output = ''
      child.stdout.on('data', (chunk) => { output += chunk })
      child.stderr.on('data', (chunk) => { output += chunk })
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, output }))
    })
    const packed = (await readdir(destination)).filter((file) => file.endsWith('.tgz'))
    if (code !== 0 || packed.length !== 1) {
      throw new CliError(`npm pack failed in ${source} (exit ${code}):\n${output.trim().split('\n').slice(-30).join('\n')}`)
    }
    return { name: packed[0], content: await readFile(path.join(destination, packed[0])) }
  } finally {
    await rm(destination, { recursive: true, force: true })
  }
}

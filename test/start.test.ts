// `npm start`'s entry as a user runs it: it boots, serves the health check,
// prints a ready request, and Ctrl-C (SIGINT) or SIGTERM leaves nothing running.
import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../lib/storage/free-port.js'
import { tempDir } from './helpers/kit.js'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

function processesUsing (dir: string): string {
  try { return execFileSync('pgrep', ['-a', '-f', dir], { encoding: 'utf8' }) } catch { return '' }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  t.test(`boots, serves, and exits cleanly on ${signal}`, async (t) => {
    const dir = tempDir()
    const port = await freePort()
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'fixtures', 'server.ts')], {
      cwd: root,
      env: { ...process.env, PORT: String(port), DATA_DIR: path.join(dir, 'pg'), LOG_LEVEL: 'warn', ADMIN_PASSWORD: 'test-admin-password' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (chunk) => { output += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const deadline = Date.now() + 60_000
    while (!output.includes('is ready at') && Date.now() < deadline && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100))
    t.match(output, /is ready at http:\/\/127\.0\.0\.1:\d+\/parse/, 'prints where it serves')
    t.match(output, /X-Parse-Session-Token: r:[0-9a-f]+/, 'and a ready request with the demo session token')
    const health = await fetch(`http://127.0.0.1:${port}/parse/health`)
    t.same(await health.json(), { status: 'ok' })
    child.kill(signal)
    t.equal(await exited, 0, 'exit code 0')
    t.equal(processesUsing(dir), '', 'no postgres left running')
  })
}

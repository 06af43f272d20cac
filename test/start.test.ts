// `npm start`'s entry as a user runs it: it boots, serves the health check,
// prints a ready request, and SIGTERM leaves nothing running (Ctrl-C: test/boot-failures.test.ts).
import t from 'tap'
import { rmSync } from 'node:fs'
import { execFileSync, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../lib/storage/free-port.js'
import { tempDir } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

function processesUsing (dir: string): string {
  try { return execFileSync('pgrep', ['-a', '-f', dir], { encoding: 'utf8' }) } catch { return '' }
}

// SIGINT (Ctrl-C) ends the example booted by test/boot-failures.test.ts's first test: its clean exit, and no
// postgres left running, are checked there, on a boot that file makes anyway (one example boot less).

/** fixtures/server.ts in a child process; resolves once it printed its ready output or exited. */
async function startExample (env: Record<string, string>): Promise<{ output: () => string, exited: Promise<number | null>, stop: () => Promise<number | null> }> {
  const { MASTER_KEY: _unset, ...inherited } = process.env // the development key made for this run is under test
  const child = spawn(process.execPath, ['--import', 'tsx/esm', path.join(root, 'fixtures', 'server.ts')], {
    cwd: root,
    env: { ...inherited, LOG_LEVEL: 'warn', ADMIN_PASSWORD: 'test-admin-password', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + scaled(120_000)
  while (!/^ {2}master key|^Cannot start/m.test(output) && Date.now() < deadline && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100))
  return { output: () => output, exited, stop: async () => { child.kill('SIGTERM'); return exited } }
}

t.test('ready output, ALLOW_AUTH_ROUTES, a port already in use, and a clean exit on SIGTERM', async (t) => {
  const dir = tempDir()
  const port = await freePort()
  const first = await startExample({ PORT: String(port), DATA_DIR: path.join(dir, 'pg'), ALLOW_AUTH_ROUTES: 'true' })
  t.teardown(async () => {
    await first.stop()
    rmSync(dir, { recursive: true, force: true }) // both servers' data, once both have stopped
  })
  const output = first.output()
  t.match(output, /is ready at http:\/\/127\.0\.0\.1:\d+\/parse/, 'prints where it serves')
  t.match(output, /X-Parse-Session-Token: r:[0-9a-f]+/, 'and a ready request with the demo session token')
  const health = await fetch(`http://127.0.0.1:${port}/parse/health`)
  t.same(await health.json(), { status: 'ok' })
  t.match(output, `API docs: http://127.0.0.1:${port}/api-docs`, 'the docs URL')
  const key = /master key for this run \(random each start; set MASTER_KEY, e\.g\. in \.env, to keep one\): (\S+)/.exec(output)?.[1]
  t.ok(key, 'development: where the master key comes from, and this run\'s key')
  const headers = { 'x-parse-application-id': 'fastify-parse-kit-example', 'content-type': 'application/json' }
  const schemas = await fetch(`http://127.0.0.1:${port}/parse/schemas`, { headers: { ...headers, 'x-parse-master-key': key! } })
  t.equal(schemas.status, 200, 'the printed key is the server\'s master key')
  const login = await fetch(`http://127.0.0.1:${port}/parse/login`, { method: 'POST', headers, body: JSON.stringify({ username: 'demo', password: 'demo-password' }) })
  t.equal(login.status, 200, 'ALLOW_AUTH_ROUTES=true: the SDK login route is open')
  t.match(await login.json(), { sessionToken: /^r:/ })

  const second = await startExample({ PORT: String(port), DATA_DIR: path.join(dir, 'pg2') })
  t.equal(await second.exited, 1, 'a second server on the same port exits with 1')
  const log = second.output()
  t.same(log.split('\n').filter((line) => line.includes(String(port))), [`Cannot start: port ${port} on 127.0.0.1 is already in use (another server is running there). Choose another with PORT (and HOST), e.g. PORT=${port + 1}. (FPK_ERR_PORT_UNAVAILABLE)`], 'one line naming the port, with its code')
  t.notMatch(log, /^\s+at |EADDRINUSE|Error/m, 'no stack trace')
  t.equal(processesUsing(path.join(dir, 'pg2')), '', 'its database was stopped')

  t.equal(await first.stop(), 0, 'exit code 0 on SIGTERM')
  t.equal(processesUsing(path.join(dir, 'pg')), '', 'no postgres left running')
})

t.test('the master key line never prints a key it did not make', async (t) => {
  const { masterKeyHint } = await import('../lib/host/startup.js')
  t.notMatch(masterKeyHint('secret-123', { NODE_ENV: 'production' }), /secret-123/, 'production, key set in code')
  t.notMatch(masterKeyHint('secret-123', { NODE_ENV: 'production', MASTER_KEY: 'secret-123' }), /secret-123/)
  t.notMatch(masterKeyHint('secret-123', { MASTER_KEY: 'secret-123' }), /secret-123/, 'development, key from the environment')
  t.match(masterKeyHint('secret-123', {}), /random each start.*secret-123/, 'development without MASTER_KEY: this run\'s key')
})

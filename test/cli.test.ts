// The fpk command, end to end: the real CLI creates a project in a temporary
// folder, npm installs it (this kit packed into the project's vendor/, everything
// else from the npm cache or registry), the project boots on its embedded PostgreSQL and answers
// real HTTP requests; then resources and models are generated and served, and
// the project's own `npm test` passes.
import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { accessSync, chmodSync, constants, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { staleBuildReason } from '../cli/kit-build.js'
import { freePort } from '../lib/storage/free-port.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { scaled } from './helpers/time-scale.js'
import { fpkHere } from './helpers/fpk-here.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

const KIT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(KIT, 'cli', 'bin.mjs')
const NPM_LOCK = '/tmp/fpk-npm.lock'

// A build, npm install, boots and watcher restarts, and the project's own tests: minutes, not seconds (more on a loaded machine).
t.setTimeout(scaled(25 * 60_000))
reportSubtestCost(t)
const flock = spawnSync('flock', ['--version']).status === 0
/** A command line run under the lock every npm install or build of this checkout takes (never two at once). */
const locked = (command: string[], waitMs: number): [string, string[]] =>
  flock ? ['flock', ['-w', String(Math.round(waitMs / 1000)), NPM_LOCK, ...command]] : [command[0], command.slice(1)]

/** A folder the OS user postgres can traverse (the embedded database runs as that user under root). */
function tempDir (prefix: string, under = tmpdir()): string {
  const dir = mkdtempSync(path.join(under, prefix))
  chmodSync(dir, 0o755)
  return dir
}

/**
 * Where the work folder goes: /dev/shm (memory) when it has room, the OS temp folder otherwise. The project's
 * install writes some 30,000 files (368 MB) that are thrown away: on a disk that was 19 CPU-s of system time,
 * on tmpfs 5 (and its removal next to nothing).
 */
function workRoot (): string {
  try {
    accessSync('/dev/shm', constants.W_OK)
    const { bavail, bsize } = statfsSync('/dev/shm')
    if (bavail * bsize >= 2 * 1024 ** 3) return '/dev/shm'
  } catch {} // no /dev/shm (not Linux) or not writable: the temp folder
  return tmpdir()
}

/**
 * The environment a user's shell would have: nothing from npm, tap or this test's own loader,
 * and no V8 coverage (KIT_COVERAGE): npm, tsc and the project's installed copy of the kit are
 * not what the report counts, and recording them costs CPU.
 */
function userEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|TAP|NODE_OPTIONS$|NODE_ENV$|DATABASE_URI$|MONGODB_URI$|KIT_TEST_DATABASE$|TSX_|NODE_V8_COVERAGE$)/i.test(key)) continue
    env[key] = value
  }
  return { ...env, ...extra }
}

/** userEnv for a process that runs this checkout's CLI (dist/cli/): its coverage counts toward cli/'s floor. */
function cliEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const coverage = process.env.NODE_V8_COVERAGE
  return userEnv(coverage ? { NODE_V8_COVERAGE: coverage, ...extra } : extra)
}

interface Run { code: number | null, stdout: string, stderr: string }

function run (command: string, args: string[], options: { cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? userEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const timeoutMs = options.timeoutMs ?? scaled(60_000)
    const timer = setTimeout(() => {
      stderr += `\n[killed: ${command} ${args.join(' ')} was still running after ${Math.round(timeoutMs / 1000)} s]`
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The CLI as a user runs it from this checkout: a new process each time. */
// Generous: `fpk new` packs (and so builds) the kit, minutes on a loaded machine.
const fpk = (cwd: string, ...args: string[]) => run(process.execPath, [BIN, ...args], { cwd, env: cliEnv(), timeoutMs: 600_000 })

interface Http { status: number, text: string, json: any }

async function http (method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Http> {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
  }
  const response = await fetch(url, init)
  const text = await response.text()
  let json: unknown
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: response.status, text, json }
}

function readEnvFile (file: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line)
    if (match) values[match[1]] = match[2]
  }
  return values
}

interface Server {
  base: string
  /** The demo user's session token ('' when the server was not asked for one). */
  token: string
  log: () => string
  /** Ends it (SIGTERM, or Ctrl-C to its process group when started with `group`); answers how it ended: the signal's name or the exit code. */
  stop: () => Promise<string>
  /** How many times it printed its ready output (a watcher restarts it). */
  boots: () => number
}

/**
 * A server command of the project run in `dir` (`command` with `args`), resolved
 * once the ready request is printed. Run directly (a script's command line minus
 * npm and sh), SIGTERM reaches the server and the exit seen here is its own, which
 * must be 0. With `group`, it runs as a terminal runs it: in a process group of
 * its own, ended by Ctrl-C (SIGINT to the whole group).
 */
async function startServer (dir: string, command: string, args: string[], options: { env?: Record<string, string>, token?: boolean, group?: boolean } = {}): Promise<Server> {
  const port = await freePort()
  const child: ChildProcess = spawn(command, args, { cwd: dir, env: userEnv({ PORT: String(port), ...options.env }), stdio: ['ignore', 'pipe', 'pipe'], detached: options.group === true })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? String(code))))
  const signal = options.group ? 'SIGINT' : 'SIGTERM'
  const kill = (name: NodeJS.Signals) => options.group ? process.kill(-child.pid!, name) : child.kill(name)
  let stopping: Promise<string> | undefined
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited
      kill(signal)
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), scaled(30_000)).unref())
      const ended = await Promise.race([exited, timeout])
      if (ended === 'timeout') {
        kill('SIGKILL')
        throw new Error(`the server did not stop after ${signal}:\n${output}`)
      }
      if (!options.group && ended !== '0') throw new Error(`the server exited with ${ended} after SIGTERM:\n${output}`)
      return ended
    })()
    return stopping
  }
  const deadline = Date.now() + scaled(150_000)
  for (;;) {
    const ready = /is ready at (http:\/\/\S+)/.exec(output)
    const token = options.token === false ? ['', ''] : /X-Parse-Session-Token: (r:[0-9a-f]+)/.exec(output)
    if (ready && token) return { base: ready[1], token: token[1]!, log: () => output, stop, boots: () => output.split('is ready at').length - 1 }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop().catch(() => {})
      throw new Error(`the server did not print a ready request${options.token === false ? '' : ' with a session token'}:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const work = tempDir('fpk-cli-', workRoot())
/**
 * The demo project's `npm run dev`: started once installed, ended by the Ctrl-C test.
 * `npx` and `projectTest`: commands started early, beside steps that do not touch
 * what they read (the file's minutes of installs and builds are one of `npm test`'s
 * two tracks), each awaited by the test that checks it.
 */
const shared: { dev?: Server, npx?: Promise<Run>, projectTest?: Promise<Run> } = {}
t.teardown(async () => {
  await shared.dev?.stop().catch(() => {})
  await Promise.all([shared.npx, shared.projectTest]) // bounded by run()'s own timeouts
  // Some 35,000 files (the project's node_modules/ most of them): 1 to 2 minutes of disk on a busy machine, which
  // the file need not wait for. rm runs on after this process ends.
  spawn('rm', ['-rf', work], { detached: true, stdio: 'ignore' }).on('error', () => rmSync(work, { recursive: true, force: true })).unref()
})
/** run() started now and awaited later: a spawn that fails answers like a failed command (no unhandled rejection meanwhile). */
const inBackground = (command: string, args: string[], options: Parameters<typeof run>[2]): Promise<Run> =>
  run(command, args, options).catch((error: Error) => ({ code: null, stdout: '', stderr: String(error) }))
const demo = path.join(work, 'demo')
/** The kit tarball `fpk new demo` packed from this checkout (later projects reuse it through --kit). */
const tarball = () => path.join(demo, 'vendor', readdirSync(path.join(demo, 'vendor'))[0])

/**
 * Steps later tests build on. The test that makes one calls done() at its end;
 * a test that needs one calls needs() first and, when that step failed, is
 * skipped saying which, so one failed setup is one failure, not a cascade.
 */
const STEPS = {
  build: 'the build of the kit',
  project: 'fpk new demo',
  install: 'npm install of the demo project',
  generated: 'the generated Product and Tag',
  compiled: 'npm run build of the demo project'
}
type Step = keyof typeof STEPS
const unfinished = new Set(Object.keys(STEPS) as Step[])
function done (t: Test, step: Step): void {
  if (t.passing()) unfinished.delete(step)
}
function needs (t: Test, ...steps: Step[]): boolean {
  const missing = steps.filter((step) => unfinished.has(step))
  if (missing.length === 0) return true
  t.plan(0, `needs ${missing.map((step) => STEPS[step]).join(' and ')}, which failed above`)
  return false
}

t.test('the kit is built once, before any command is timed', async (t) => {
  // fpk new packs a checkout with npm pack, which runs tsc unless dist/ is current: build it here, under a budget of its own.
  const stale = staleBuildReason(KIT)
  if (stale !== undefined) {
    t.comment(`building the kit (${stale})`)
    const started = Date.now()
    const [command, args] = locked(['npm', 'run', 'build'], scaled(10 * 60_000))
    const built = await run(command, args, { cwd: KIT, timeoutMs: scaled(15 * 60_000) })
    t.equal(built.code, 0, `npm run build:\n${built.stdout}\n${built.stderr}`)
    t.comment(`npm run build took ${Math.round((Date.now() - started) / 1000)} s`)
  }
  t.equal(staleBuildReason(KIT), undefined, 'dist/ is newer than every source')
  done(t, 'build')
})

t.test('--version, --help and unknown commands', async (t) => {
  const version = await fpk(work, '--version')
  t.equal(version.code, 0)
  t.equal(version.stdout.trim(), JSON.parse(readFileSync(path.join(KIT, 'package.json'), 'utf8')).version)
  const help = await fpk(work, '--help')
  t.equal(help.code, 0)
  for (const command of ['new', 'generate|g', 'ai']) t.match(help.stdout, command)
  const generateHelp = await fpkHere(work, 'g', '--help')
  t.match(generateHelp.stdout, /resource[\s\S]*model/)
  const unknown = await fpk(work, 'bogus')
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /unknown command 'bogus'/)
  t.match(unknown.stderr, /fpk --help/)
  const typo = await fpkHere(work, 'g', 'resorce', 'Product')
  t.equal(typo.code, 1)
  t.match(typo.stderr, /Did you mean resource\?/)
  const missing = await fpkHere(work, 'g', 'resource')
  t.equal(missing.code, 1)
  t.match(missing.stderr, /missing required argument/)
})

t.test('fpk new demo -y --no-install writes a project', async (t) => {
  if (!needs(t, 'build')) return
  const created = await fpk(work, 'new', 'demo', '-y', '--no-install')
  t.equal(created.code, 0, created.stderr)
  t.match(created.stderr, /npm pack, reusing the build in dist\/, which is newer than the sources/, 'says what it does, and builds nothing')
  t.match(created.stdout, /Created demo \(\d+ files\)/)
  const expected = [
    'package.json', 'tsconfig.json', '.env', '.env.example', '.gitignore', 'docker-compose.yml', 'README.md', 'AGENTS.md',
    'tsconfig.build.json', 'Dockerfile', 'src/env.ts', 'src/app.ts', 'src/server.ts', 'src/roles.ts', 'src/seed.ts', 'src/dashboard.ts', 'src/models/Note.ts', 'src/functions/notes.ts',
    'test/smoke.test.ts', 'test/harness.ts', 'test/run.ts'
  ]
  for (const file of expected) t.ok(existsSync(path.join(demo, file)), `${file} exists`)
  t.notOk(existsSync(path.join(demo, 'CLAUDE.md')), 'the default assistant file is AGENTS.md only')
  t.notOk(existsSync(path.join(demo, 'node_modules')), '--no-install installs nothing')
  for (const file of expected) {
    t.notMatch(readFileSync(path.join(demo, file), 'utf8'), /\{\{/, `${file}: every placeholder filled`)
  }

  const pkg = JSON.parse(readFileSync(path.join(demo, 'package.json'), 'utf8'))
  t.equal(pkg.name, 'demo')
  t.equal(pkg.type, 'module')
  const version = JSON.parse(readFileSync(path.join(KIT, 'package.json'), 'utf8')).version
  t.equal(pkg.dependencies['fastify-parse-kit'], `file:vendor/fastify-parse-kit-${version}.tgz`, 'run from a checkout: the kit packed into the project')
  t.ok(statSync(path.join(demo, 'vendor', `fastify-parse-kit-${version}.tgz`)).size > 10_000, 'the tarball is there')
  t.equal(pkg.dependencies.router, '2.2.0')
  const { 'unrs-resolver': linterOnly, ...runtimePins } = JSON.parse(readFileSync(path.join(KIT, 'package.json'), 'utf8')).overrides
  t.ok(linterOnly, 'the kit pins its linter\'s resolver')
  t.same(pkg.overrides, runtimePins, 'the kit\'s pins for what the project installs, repeated at the root where npm applies them; not the linter-only one')
  t.match(pkg.scripts, { dev: /^tsx watch .*--include src src\/server\.ts$/, start: /tsx/, test: /tsc --noEmit/ })
  t.equal(pkg.scripts.build, 'tsc -p tsconfig.build.json')
  t.equal(pkg.scripts['start:prod'], 'NODE_ENV=production node --enable-source-maps dist/server.js', 'production runs compiled JavaScript')
  t.match(pkg.dependencies, { 'close-with-grace': String, 'env-schema': String })
  t.match(pkg.devDependencies, { tsx: String, typescript: String })
  t.notOk('tsx' in pkg.dependencies, 'tsx is for development only')
  t.match(JSON.parse(readFileSync(path.join(demo, 'tsconfig.build.json'), 'utf8')).compilerOptions, { outDir: 'dist', rootDir: 'src', noEmit: false })
  t.match(readFileSync(path.join(demo, 'Dockerfile'), 'utf8'), /npm run build[\s\S]*CMD \["npm", "run", "start:prod"\]/)
  t.match(readFileSync(path.join(demo, 'README.md'), 'utf8'), /## Dependencies[\s\S]*`router` is pinned to exactly `2\.2\.0`[\s\S]*\/batch/, 'the pin explained where the user reads')
  t.notOk(existsSync(path.join(demo, '.npmrc')), 'no install-links needed for a tarball')

  const tsconfig = JSON.parse(readFileSync(path.join(demo, 'tsconfig.json'), 'utf8'))
  t.equal(tsconfig.compilerOptions.experimentalDecorators, true)
  t.equal(tsconfig.compilerOptions.useDefineForClassFields, false)

  const env = readEnvFile(path.join(demo, '.env'))
  t.match(env.APP_ID, /^demo-[0-9a-f]{24}$/)
  t.match(env.MASTER_KEY, /^[A-Za-z0-9_-]{43}$/, '256 random bits')
  t.ok(env.ADMIN_PASSWORD.length >= 16)
  t.equal(statSync(path.join(demo, '.env')).mode & 0o777, 0o600, '.env is readable by its owner only')
  t.match(readFileSync(path.join(demo, '.gitignore'), 'utf8'), /^\.env$/m)

  const compose = readFileSync(path.join(demo, 'docker-compose.yml'), 'utf8')
  t.match(compose, /image: mongo:7/)
  t.match(compose, /--replSet", "rs0"/)
  t.match(compose, /rs\.initiate\(/)
  t.match(compose, /healthcheck:/)

  t.match(readFileSync(path.join(demo, 'AGENTS.md'), 'utf8'), /experimentalDecorators[\s\S]*asCaller\(request\)/)

  const again = await fpkHere(work, 'new', 'other', '-y', '--no-install', '--ai=none', '--kit', tarball())
  t.equal(again.code, 0, again.stderr)
  const otherEnv = readEnvFile(path.join(work, 'other', '.env'))
  t.not(otherEnv.MASTER_KEY, env.MASTER_KEY, 'keys are generated per project')
  t.not(otherEnv.APP_ID, env.APP_ID)
  t.notOk(existsSync(path.join(work, 'other', 'AGENTS.md')), '--ai=none writes no assistant file')

  const exists = await fpkHere(work, 'new', 'demo', '-y', '--no-install')
  t.equal(exists.code, 1)
  t.match(exists.stderr, /demo already exists and is not empty: .*use -f to write into it/)
  mkdirSync(path.join(work, 'filled'))
  writeFileSync(path.join(work, 'filled', 'notes.txt'), 'mine\n')
  writeFileSync(path.join(work, 'filled', 'package.json'), '{}\n')
  const forced = await fpkHere(work, 'new', 'filled', '-y', '-f', '--no-install', '--ai=none', '--kit', tarball())
  t.equal(forced.code, 0, forced.stderr)
  t.match(forced.stdout, /Created filled \(\d+ files, 1 of them overwritten\):[\s\S]*\n {2}package\.json \(overwritten\)\n/, 'new -f says which files it replaced')
  t.match(forced.stdout, /\n {2}tsconfig\.json\n/, 'and not the others')
  t.ok(existsSync(path.join(work, 'filled', 'package.json')), 'new -f writes into a folder that is not empty')
  t.equal(readFileSync(path.join(work, 'filled', 'notes.txt'), 'utf8'), 'mine\n', 'and leaves other files alone')
  const badName = await fpkHere(work, 'new', 'My App', '-y', '--no-install')
  t.equal(badName.code, 1)
  t.match(badName.stderr, /not a usable project name/)
  const badAi = await fpkHere(work, 'new', 'third', '--ai=9', '--no-install')
  t.equal(badAi.code, 1)
  t.match(badAi.stderr, /unknown assistant "9"/)
  t.notOk(existsSync(path.join(work, 'third')), 'a refused new writes nothing')
  done(t, 'project')
  if (t.passing()) {
    // npx's install of the tarball reads only the tarball and the npm cache: it runs beside the project's install and first boot.
    const dir = path.join(work, 'npx-like')
    mkdirSync(dir)
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'npx-like', private: true }))
    shared.npx = inBackground('npm', ['install', '--dry-run', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball()], { cwd: dir, timeoutMs: scaled(8 * 60_000) })
  }
})

t.test('names are checked before anything is written', async (t) => {
  if (!needs(t, 'project')) return
  const refusals: Array<[string[], RegExp]> = [
    [['g', 'resource', 'product'], /not a PascalCase name[\s\S]*Did you mean Product\?/],
    [['g', 'resource', 'order-line'], /Did you mean OrderLine\?/],
    [['g', 'model', '_User'], /reserved: class names starting with "_"/],
    [['g', 'model', '_Product'], /reserved/],
    [['g', 'resource', 'User'], /reserved: it stands for Parse Server's built-in _User/],
    [['g', 'model', 'Role'], /_Role/],
    [['g', 'model', 'Session'], /_Session/],
    [['generate', 'model', 'Installation'], /_Installation/],
    [['g', 'resource', 'Route'], /clash with Route/],
    [['g', 'resource', 'Object'], /shadow the JavaScript global Object/]
  ]
  for (const [args, message] of refusals) {
    const result = await fpkHere(demo, ...args)
    t.equal(result.code, 1, args.join(' '))
    t.match(result.stderr, message, args.join(' '))
  }
  t.same(readdirSync(path.join(demo, 'src', 'models')), ['Note.ts'], 'nothing was written')
})

t.test('generation follows the layout a project already has', async (t) => {
  const project = (name: string, dirs: string[]) => {
    const dir = path.join(work, 'layouts', name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, type: 'module' }))
    for (const sub of dirs) mkdirSync(path.join(dir, sub), { recursive: true })
    return dir
  }
  const fresh = project('fresh', [])
  const result = await fpkHere(fresh, 'g', 'resource', 'OrderLine')
  t.equal(result.code, 0, result.stderr)
  t.ok(existsSync(path.join(fresh, 'models', 'OrderLine.ts')))
  t.ok(existsSync(path.join(fresh, 'functions', 'order-lines.ts')), 'functions file named by the route prefix the kit derives')
  t.match(result.stdout, /No models\/functions layout found/)
  t.match(result.stdout, /POST \/parse\/order-lines\/createOrderLine/)
  t.match(result.stdout, /GET {2}\/parse\/order-lines\/listOrderLines/)
  const functions = readFileSync(path.join(fresh, 'functions', 'order-lines.ts'), 'utf8')
  t.match(functions, /import \{ OrderLine \} from '\.\.\/models\/OrderLine\.js'/)
  for (const method of ['createOrderLine', 'listOrderLines', 'getOrderLine', 'updateOrderLine', 'deleteOrderLine']) t.match(functions, `static async ${method} (`)

  // -y and -f are accepted by every command (generate never asks; -f overwrites).
  for (const args of [['g', 'model', 'Gizmo', '-y'], ['g', 'model', 'Gizmo', '-y', '-f'], ['g', 'functions', 'Gizmo', '-y'],
    ['g', 'functions', 'Gizmo', '-f', '-y'], ['g', 'endpoints', 'Gizmo', '--yes', '--force'], ['g', 'resource', 'Widget', '-y'], ['g', 'resource', 'Widget', '-f', '-y'],
    ['ai', '6', '-y', '-f']]) {
    const result = await fpkHere(fresh, ...args)
    t.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
  }
  t.match(readFileSync(path.join(fresh, 'functions', 'gizmos.ts'), 'utf8'), /import \{ Gizmo \} from '\.\.\/models\/Gizmo\.js'/, 'g functions imports the existing model')

  t.notOk(existsSync(path.join(fresh, 'test')), 'no test without the app an fpk project has (src/app.ts exporting buildApp)')

  const withApp = project('with-app', ['src'])
  writeFileSync(path.join(withApp, 'src', 'app.ts'), 'export async function buildApp () {}\n')
  const tested = await fpkHere(withApp, 'g', 'resource', 'OrderLine')
  t.equal(tested.code, 0, tested.stderr)
  t.match(tested.stdout, /created test\/order-lines\.test\.ts/)
  t.match(readFileSync(path.join(withApp, 'test', 'order-lines.test.ts'), 'utf8'), /import \{ buildApp \} from '\.\.\/src\/app\.js'[\s\S]*'order-lines'[\s\S]*'\/createOrderLine'/)
  writeFileSync(path.join(withApp, 'test', 'gizmos.test.ts'), '// mine\n')
  const kept = await fpkHere(withApp, 'g', 'resource', 'Gizmo')
  t.equal(kept.code, 0, kept.stderr)
  t.match(kept.stdout, /created src\/functions\/gizmos\.ts[\s\S]*kept +test\/gizmos\.test\.ts \(it exists; -f overwrites it\)/, 'an existing test is kept and does not block the resource')
  t.equal(readFileSync(path.join(withApp, 'test', 'gizmos.test.ts'), 'utf8'), '// mine\n')
  const part = await fpkHere(withApp, 'g', 'model', 'Part')
  t.equal(part.code, 0, part.stderr)
  t.match(part.stdout, /created src\/models\/Part\.ts[\s\S]*created test\/parts\.model\.test\.ts/, 'g model writes a test of the class')
  t.match(readFileSync(path.join(withApp, 'test', 'parts.model.test.ts'), 'utf8'), /'\/schemas\/Part'[\s\S]*'\/classes\/Part'/)
  const partFunctions = await fpkHere(withApp, 'g', 'functions', 'Part')
  t.equal(partFunctions.code, 0, partFunctions.stderr)
  t.match(partFunctions.stdout, /created src\/functions\/parts\.ts[\s\S]*created test\/parts\.test\.ts/, 'g functions writes a test of the endpoints')
  const overwrite = await fpkHere(withApp, 'g', 'functions', 'Part', '-f')
  t.equal(overwrite.code, 0, overwrite.stderr)
  t.match(overwrite.stdout, /overwritten src\/functions\/parts\.ts[\s\S]*overwritten test\/parts\.test\.ts/, '-f says what it overwrote')
  t.notMatch(overwrite.stdout, /created/)

  const withSrc = project('with-src', ['src'])
  t.equal((await fpkHere(path.join(withSrc, 'src'), 'g', 'model', 'Person')).code, 0, 'run from a subfolder: the project root is found')
  t.ok(existsSync(path.join(withSrc, 'src', 'models', 'Person.ts')))

  const cloud = project('cloud', ['cloud'])
  t.equal((await fpkHere(cloud, 'g', 'resource', 'Category')).code, 0)
  t.ok(existsSync(path.join(cloud, 'cloud', 'models', 'Category.ts')))
  t.match(readFileSync(path.join(cloud, 'cloud', 'categories.ts'), 'utf8'), /from '\.\/models\/Category\.js'/, 'a per-entity functions file in the cloud-code directory')

  const declared = project('declared', ['models'])
  writeFileSync(path.join(declared, 'models', 'Catalogue.ts'), "@ParseClass('Widget')\nexport class Widget {}\n")
  const duplicate = await fpkHere(declared, 'g', 'model', 'Widget')
  t.equal(duplicate.code, 1)
  t.match(duplicate.stderr, /class Widget is already declared in .*Catalogue\.ts/)

  const outside = tempDir('fpk-cli-outside-')
  t.teardown(() => rmSync(outside, { recursive: true, force: true }))
  const refused = await fpkHere(outside, 'g', 'model', 'Tag')
  t.equal(refused.code, 1)
  t.match(refused.stderr, /no package\.json in .* or above/)
})

t.test('new installs with a progress indication, and reports a failed install', async (t) => {
  if (!needs(t, 'project')) return
  const bin = path.join(work, 'fake-npm')
  mkdirSync(bin, { recursive: true })
  const calls = path.join(work, 'npm-calls.txt')
  writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\necho "$PWD $*" >> ${calls}\n[ -n "$FAKE_NPM_FAIL" ] && { echo "npm ERR! simulated failure" >&2; exit 1; }\nexit 0\n`, { mode: 0o755 })
  const env = (extra: Record<string, string> = {}) => cliEnv({ PATH: `${bin}:${process.env.PATH}`, ...extra })
  const ok = await run(process.execPath, [BIN, 'new', 'installed', '-y', '--kit', tarball()], { cwd: work, env: env() })
  t.equal(ok.code, 0, ok.stderr)
  t.match(ok.stderr, /Installing dependencies \(npm install\)/)
  t.match(ok.stderr, /Installed dependencies in \d+s/)
  t.equal(readFileSync(calls, 'utf8').trim(), `${path.join(work, 'installed')} install --no-audit --no-fund`)
  const failed = await run(process.execPath, [BIN, 'new', 'broken', '-y', '--kit', tarball()], { cwd: work, env: env({ FAKE_NPM_FAIL: '1' }) })
  t.equal(failed.code, 1)
  t.match(failed.stderr, /npm install failed in .*broken[\s\S]*simulated failure[\s\S]*run npm install there/)
  t.ok(existsSync(path.join(work, 'broken', 'package.json')), 'the files stay for a manual install')
})

t.test('the generated project installs, boots and serves its Note endpoints', async (t) => {
  if (!needs(t, 'project')) return
  const started = Date.now()
  // Never at the same time as another npm install of this checkout.
  const [command, args] = locked(['npm', 'install', '--prefer-offline', '--no-audit', '--no-fund'], scaled(10 * 60_000))
  const installed = await run(command, args, { cwd: demo, timeoutMs: scaled(18 * 60_000) })
  t.equal(installed.code, 0, `npm install:\n${installed.stdout}\n${installed.stderr}`)
  t.comment(`npm install took ${Math.round((Date.now() - started) / 1000)} s`)
  done(t, 'install') // the project is installed: what follows may fail without blocking the later tests
  t.notMatch(installed.stdout + installed.stderr, /EBADENGINE/, 'no package wants a newer Node')

  const kit = path.join(demo, 'node_modules', 'fastify-parse-kit')
  t.ok(existsSync(path.join(kit, 'dist', 'lib', 'index.js')), 'the kit was built and installed as a package')
  t.notOk(lstatSync(kit).isSymbolicLink(), 'a copy, not a link to the checkout')
  t.notOk(existsSync(path.join(kit, 'node_modules', 'parse')), 'one Parse SDK, shared by the kit and the project')
  t.notOk(existsSync(path.join(kit, 'node_modules', 'fastify')), 'one Fastify')
  t.ok(existsSync(path.join(kit, 'dist', 'cli', 'fpk.js')), 'the CLI is shipped compiled')
  t.notOk('tsx' in (JSON.parse(readFileSync(path.join(kit, 'package.json'), 'utf8')).dependencies ?? {}), 'a library user installs no tsx (nor its esbuild)')

  // One `npm run dev`, as a user starts it in a terminal, serves this test, the generated files after it, and Ctrl-C ends it:
  // every boot of the project costs seconds. It runs what `npm start` runs (tsx src/server.ts), watched.
  // Started first: the two checks of the install below run while it boots (its first boot makes the database).
  const { start, dev } = JSON.parse(readFileSync(path.join(demo, 'package.json'), 'utf8')).scripts
  t.equal(start, 'tsx src/server.ts')
  t.match(dev, /^tsx watch .* src\/server\.ts$/, 'npm run dev watches what npm start runs')
  const booting = startServer(demo, 'npm', ['run', 'dev'], { group: true })
  booting.then((server) => { shared.dev = server }, () => {}) // the file's teardown stops it whatever fails meanwhile; awaited below

  // The project carries its kit: a copy elsewhere (the checkout gone from its view) resolves from its own files.
  const moved = tempDir('fpk-cli-moved-')
  t.teardown(() => rmSync(moved, { recursive: true, force: true }))
  for (const file of ['package.json', 'package-lock.json']) writeFileSync(path.join(moved, file), readFileSync(path.join(demo, file)))
  mkdirSync(path.join(moved, 'vendor'))
  writeFileSync(path.join(moved, 'vendor', path.basename(tarball())), readFileSync(tarball()))
  const resolved = await run('npm', ['install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', '--offline'], { cwd: moved })
  if (resolved.code !== 0) t.comment(resolved.stdout, resolved.stderr)
  t.equal(resolved.code, 0, 'a copy of the project elsewhere resolves its kit from vendor/, offline')
  t.match(JSON.parse(readFileSync(path.join(demo, 'package-lock.json'), 'utf8')).packages['node_modules/fastify-parse-kit'].resolved, /^file:vendor\//, 'the lock names the vendored tarball')

  // A copy installed from a tarball (as `npx --package=./fastify-parse-kit-x.y.z.tgz fpk new` runs it) vendors that tarball.
  const fromInstalled = await run(path.join(demo, 'node_modules', '.bin', 'fpk'), ['new', 'from-installed', '-y', '--no-install', '--ai=none'], { cwd: work })
  t.equal(fromInstalled.code, 0, fromInstalled.stderr)
  const installedPkg = JSON.parse(readFileSync(path.join(work, 'from-installed', 'package.json'), 'utf8'))
  t.equal(installedPkg.dependencies['fastify-parse-kit'], `file:vendor/${path.basename(tarball())}`)
  t.ok(readFileSync(path.join(work, 'from-installed', 'vendor', path.basename(tarball()))).equals(readFileSync(tarball())), 'the same tarball, copied into the new project')

  const server = await booting
  const { APP_ID: appId } = readEnvFile(path.join(demo, '.env'))
  const app = { 'x-parse-application-id': appId }
  const user = { ...app, 'x-parse-session-token': server.token }
  const url = (route: string) => `${server.base}${route}`

  t.equal((await http('GET', url('/health'), {})).status, 200)
  t.equal((await http('GET', url('/notes/listNotes'), {})).status, 403, 'the application id is required')
  const publicList = await http('GET', url('/notes/listNotes?limit=10'), app)
  t.equal(publicList.status, 200, publicList.text)
  t.same(publicList.json.results.map((note: { slug: string }) => note.slug), ['welcome'], 'the seeded published note; the draft is private')
  const demoList = await http('GET', url('/notes/listNotes?limit=10'), user)
  t.equal(demoList.json.count, 2, 'the demo user also reads its draft')

  t.equal((await http('POST', url('/notes/createNote'), app, { title: 'Anonymous' })).status, 400, 'a write needs a session token')
  const created = await http('POST', url('/notes/createNote'), user, { title: 'Hello', status: 'published', views: 42 })
  t.equal(created.status, 200, created.text)
  t.match(created.json, { title: 'Hello', status: 'published', views: 0, objectId: String, createdAt: String, updatedAt: String, slug: /^hello-/ })
  const id = created.json.objectId
  const got = await http('GET', url(`/notes/getNote?id=${id}`), app)
  t.equal(got.json.title, 'Hello')
  const updated = await http('POST', url('/notes/updateNote'), user, { id, title: 'Hello again' })
  t.equal(updated.json.title, 'Hello again', updated.text)
  t.equal((await http('GET', url('/notes/listNotes?status=published'), app)).json.count, 2)
  t.same((await http('POST', url('/notes/deleteNote'), user, { id })).json, { id, deleted: true })
  const gone = await http('GET', url(`/notes/getNote?id=${id}`), app)
  t.equal(gone.status, 404)
  t.equal(gone.json.code, 101)

  t.equal((await http('GET', url('/classes/Note'), app)).status, 403, 'Parse REST is closed')
  const docs = await http('GET', `${new URL(server.base).origin}/api-docs/json`, {})
  t.equal(docs.status, 200, 'DOCS_ENABLED=true in .env: docs at DOCS_PATH')
  t.ok(docs.json.paths['/notes/createNote'])

  // One log stream: Parse Server's lines come through the project's pino logger, pretty in development.
  t.notMatch(server.log(), /^(error|warn|info|verbose|debug|silly): /m, 'no line in Parse Server\'s own (winston) format')
  t.match(server.log(), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[parse\] Running Migrations/m, 'Parse\'s lines, pretty, in the same stream')
})

t.test('the packed kit installs as npx --package=<tarball> installs it: no EBADENGINE on Node 20', async (t) => {
  if (!needs(t, 'project')) return
  // npx installs the tarball as a dependency, where the kit's own overrides do not apply: its dependencies must suffice.
  // (A dry run in a folder of its own, started once the tarball was packed.)
  const result = await shared.npx!
  t.equal(result.code, 0, `${result.stdout}\n${result.stderr}`)
  t.notMatch(result.stdout + result.stderr, /EBADENGINE/, `no dependency of the kit wants a newer Node than ${process.version}`)
})

t.test('g resource, g model, g functions: served by npm run dev without a manual restart', async (t) => {
  if (!needs(t, 'install')) return
  const server = shared.dev
  if (!server) return t.plan(0, 'needs npm run dev of the demo project, which did not start above')
  /** Waits for the watcher's next boot after a change to the files. */
  const nextBoot = async (before: number, what: string) => {
    const deadline = Date.now() + scaled(150_000)
    while (server.boots() <= before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
    t.ok(server.boots() > before, `the dev server restarted by itself after ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1000)) // a second file of the same change may restart it once more
    while (!/is ready at[^\n]*\n(?![\s\S]*(Restarting|\[tsx\]))/.test(server.log()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
  }

  // The installed package's own bin, as `npx fpk` runs it inside the project; then a model, its
  // endpoints and edits right after it, within tsx watch's debounce (100 ms) on a quiet machine:
  // one restart serves them all, as one would after a burst of saves (each restart is a boot of the
  // project, some 4 CPU-s). On a loaded machine a second restart may follow; nextBoot waits for the last.
  const boots = server.boots()
  const resource = await run(path.join(demo, 'node_modules', '.bin', 'fpk'), ['g', 'resource', 'Product', '-y'], { cwd: demo })
  t.equal(resource.code, 0, resource.stderr)
  t.match(resource.stdout, /created src\/models\/Product\.ts[\s\S]*created src\/functions\/products\.ts[\s\S]*created test\/products\.test\.ts/)
  t.match(readFileSync(path.join(demo, 'test', 'products.test.ts'), 'utf8'), /from '\.\.\/src\/app\.js'[\s\S]*\/createProduct/, 'a test for the resource, against the app')
  t.match(resource.stdout, /Nothing to register[\s\S]*npm run dev. restarts by itself when a file under src\/ is added/)

  const model = await fpkHere(demo, 'g', 'model', 'Tag', '-y')
  t.equal(model.code, 0, model.stderr)
  t.ok(existsSync(path.join(demo, 'src', 'models', 'Tag.ts')))
  t.notOk(existsSync(path.join(demo, 'src', 'functions', 'tags.ts')), 'a model only')
  t.match(model.stdout, /created test\/tags\.model\.test\.ts/, 'and a test of its class')

  // Endpoints for the existing model, which stays as it is.
  const tagModel = readFileSync(path.join(demo, 'src', 'models', 'Tag.ts'), 'utf8')
  const missing = await fpkHere(demo, 'g', 'functions', 'Label')
  t.equal(missing.code, 1)
  t.match(missing.stderr, /no model Label is declared under src\/models: fpk g resource Label/)
  const again = await fpkHere(demo, 'g', 'resource', 'Tag')
  t.equal(again.code, 1)
  t.match(again.stderr, /src\/models\/Tag\.ts already exists: nothing was written\. fpk g functions Tag adds the endpoints for it; -f overwrites/)
  const functions = await fpkHere(demo, 'g', 'functions', 'Tag', '-y')
  t.equal(functions.code, 0, functions.stderr)
  t.match(functions.stdout, /created src\/functions\/tags\.ts[\s\S]*created test\/tags\.test\.ts[\s\S]*GET {2}\/parse\/tags\/listTags/)
  t.equal(readFileSync(path.join(demo, 'src', 'models', 'Tag.ts'), 'utf8'), tagModel, 'the model file is untouched')
  const refusedFunctions = await fpkHere(demo, 'g', 'functions', 'Tag')
  t.equal(refusedFunctions.code, 1)
  t.match(refusedFunctions.stderr, /src\/functions\/tags\.ts already exists: nothing was written\. Use -f to overwrite\./)

  const functionsFile = path.join(demo, 'src', 'functions', 'products.ts')
  const original = readFileSync(functionsFile, 'utf8')
  writeFileSync(functionsFile, original + '\n// edited by hand\n')
  const refused = await fpkHere(demo, 'g', 'resource', 'Product')
  t.equal(refused.code, 1)
  t.match(refused.stderr, /src\/models\/Product\.ts, src\/functions\/products\.ts already exist: nothing was written\. Use -f to overwrite\./)
  t.match(readFileSync(functionsFile, 'utf8'), /edited by hand/, 'the refused run left the file alone')
  const forced = await fpkHere(demo, 'g', 'resource', 'Product', '-f', '-y')
  t.equal(forced.code, 0, forced.stderr)
  t.match(forced.stdout, /overwritten src\/models\/Product\.ts[\s\S]*overwritten src\/functions\/products\.ts[\s\S]*overwritten test\/products\.test\.ts/)
  t.equal(readFileSync(functionsFile, 'utf8'), original, '-f overwrites')

  t.match(readFileSync(path.join(demo, 'src', 'app.ts'), 'utf8'), /models: path\.join\(here, 'models'\)/, 'no registration file was edited')
  await nextBoot(boots, 'g resource Product, g model Tag, g functions Tag and the edits')
  t.comment(`the watcher restarted the project ${server.boots() - boots} time(s) for them`)

  const env = readEnvFile(path.join(demo, '.env'))
  const app = { 'x-parse-application-id': env.APP_ID }
  const user = { ...app, 'x-parse-session-token': server.token }
  const master = { ...app, 'x-parse-master-key': env.MASTER_KEY }
  const url = (route: string) => `${server.base}${route}`

  t.equal((await http('POST', url('/products/createProduct'), app, { name: 'Lamp' })).status, 400, 'a write needs a session token')
  t.equal((await http('POST', url('/products/createProduct'), user, { description: 'no name' })).status, 400, 'name is required')
  const created = await http('POST', url('/products/createProduct'), user, { name: 'Lamp', description: 'A desk lamp', priceCents: 5 })
  t.equal(created.status, 200, created.text)
  t.match(created.json, { name: 'Lamp', description: 'A desk lamp', objectId: String, createdAt: String, updatedAt: String })
  t.notOk('priceCents' in created.json, 'undeclared fields are ignored')
  const id = created.json.objectId
  await http('POST', url('/products/createProduct'), user, { name: 'Chair' })
  const list = await http('GET', url('/products/listProducts?limit=10'), app)
  t.equal(list.status, 200, list.text)
  t.same([list.json.count, list.json.countKind, list.json.next], [2, 'exact', null])
  t.same(list.json.results.map((p: { name: string }) => p.name), ['Chair', 'Lamp'], 'newest first, readable without a token')
  const first = await http('GET', url('/products/listProducts?limit=1'), app)
  const second = await http('GET', url(`/products/listProducts?limit=1&after=${encodeURIComponent(first.json.next)}`), app)
  t.same([...first.json.results, ...second.json.results].map((p: { name: string }) => p.name), ['Chair', 'Lamp'], 'the next page starts after the first')
  const filtered = await http('GET', url('/products/listProducts?name=Lamp'), app)
  t.same(filtered.json.results.map((p: { objectId: string }) => p.objectId), [id])
  t.equal((await http('GET', url('/products/listProducts?limit=1'), app)).json.results.length, 1)
  const got = await http('GET', url(`/products/getProduct?id=${id}`), app)
  t.equal(got.json.name, 'Lamp', got.text)
  const updated = await http('POST', url('/products/updateProduct'), user, { id, name: 'Brass lamp' })
  t.equal(updated.status, 200, updated.text)
  t.equal(updated.json.name, 'Brass lamp')
  t.equal(updated.json.description, 'A desk lamp', 'fields not sent are kept')
  t.equal((await http('POST', url('/products/updateProduct'), app, { id, name: 'x' })).status, 400, 'updates need a session token')
  t.same((await http('POST', url('/products/deleteProduct'), user, { id })).json, { id, deleted: true })
  t.equal((await http('GET', url(`/products/getProduct?id=${id}`), app)).status, 404)

  const tags = await http('GET', url('/tags/listTags?limit=5'), app)
  t.equal(tags.status, 200, `the endpoints g functions added answer: ${tags.text}`)
  t.same(tags.json, { results: [], next: null, count: 0, countKind: 'exact' })
  const offset = await http('GET', url('/tags/listTags?page=2'), app)
  t.match({ status: offset.status, ...offset.json }, { status: 400, code: 142, error: /^page is not supported: page with `after`/ }, 'a generated list refuses offset paging, naming after')
  const tag = await http('GET', url('/schemas/Tag'), master)
  t.equal(tag.status, 200, tag.text)
  t.equal(tag.json.className, 'Tag')
  t.match(tag.json.fields, { name: { type: 'String' }, description: { type: 'String' } })
  const docs = await http('GET', `${new URL(server.base).origin}/api-docs/json`, {})
  t.ok(docs.json.paths['/products/listProducts'], 'the new endpoints are documented')
  t.ok(docs.json.paths['/tags/listTags'], 'the generated functions of the new model are documented (a model schema no operation refers to is left out)')
  done(t, 'generated')
})

t.test('Ctrl-C on npm run dev: one "shutting down" line and a clean exit', async (t) => {
  const server = shared.dev
  if (!server) return t.plan(0, 'needs npm run dev of the demo project, which did not start above')
  // As a terminal sends it: SIGINT to the whole process group (npm, sh, tsx watch, the server),
  // so the server hears it from the terminal and again from tsx watch.
  const before = server.log().length
  const ended = await server.stop()
  const output = server.log()
  const after = output.slice(before)
  // npm, interrupted itself, ends by the same signal once its script is done (or with 0); a script
  // that failed would make it print "npm error … command failed" and exit 1 instead.
  t.ok(ended === 'SIGINT' || ended === '0', `npm ended by Ctrl-C, not by a failure (${ended}):\n${output}`)
  t.notMatch(output, /npm error|npm ERR!|exit(ed)? (with )?(code )?1\b/i, 'the script itself exited cleanly')
  t.equal(after.split('\n').filter((line) => /shutting down/.test(line)).length, 1, 'one "shutting down" line')
  t.match(after, /SIGINT: shutting down/)
  t.notMatch(after, /second SIGINT|Force killing|didn't exit/, 'no second-signal exit, no forced kill')
  t.notOk(existsSync(path.join(demo, '.data', 'postgres', 'postmaster.pid')), 'PostgreSQL stopped with the server')
})

t.test("g job CleanupDrafts, then the project's own npm test starts beside the build and start:prod", async (t) => {
  if (!needs(t, 'install', 'generated')) return
  await shared.dev?.stop().catch(() => {}) // stopped by Ctrl-C above; the watcher must not restart for the job's files
  const job = await fpkHere(demo, 'g', 'job', 'CleanupDrafts')
  t.equal(job.code, 0, job.stderr)
  // Its tsc --noEmit and five test files (in one process, sharing one boot of the app on a database of its own, a
  // free port) share nothing with the steps until its own test below but the sources: the build writes dist/ (which
  // tsconfig.json excludes), start:prod runs from a copy without tsx, the refused boots start nothing. Parse's info
  // lines show how many boots there were.
  shared.projectTest = inBackground('npm', ['test'], { cwd: demo, env: userEnv({ TEST_LOG_LEVEL: 'info' }), timeoutMs: scaled(6 * 60_000) })
})

t.test('built with npm run build, served by start:prod from dist/ without tsx', async (t) => {
  if (!needs(t, 'install', 'generated')) return
  const pkg = JSON.parse(readFileSync(path.join(demo, 'package.json'), 'utf8'))
  const built = await run('npm', ['run', 'build'], { cwd: demo, timeoutMs: scaled(4 * 60_000) })
  t.equal(built.code, 0, `${built.stdout}\n${built.stderr}`)
  for (const file of ['server.js', 'env.js', 'models/Product.js', 'functions/products.js', 'models/Tag.js']) t.ok(existsSync(path.join(demo, 'dist', file)), `dist/${file}`)
  done(t, 'compiled')
  // start:prod's command line as npm runs it, minus npm and sh: NODE_ENV=production node … dist/server.js.
  const [assignment, command, ...args] = pkg.scripts['start:prod'].split(' ')
  t.equal(assignment, 'NODE_ENV=production')
  t.equal(command, 'node')
  // tsx out of reach of the application and the kit: the compiled code must not need it, as a production image
  // pruned of devDependencies has none. The project's own npm test runs tsx meanwhile, so start:prod runs in a copy
  // of what it reads: package.json, .env, dist/ and the kit copied; every other package of node_modules/ a link to
  // the project's (some 34,000 files: a copy of them took longer than the boot), tsx left out.
  const prod = path.join(work, 'demo-prod')
  mkdirSync(path.join(prod, 'node_modules'), { recursive: true })
  for (const file of ['package.json', '.env']) copyFileSync(path.join(demo, file), path.join(prod, file))
  cpSync(path.join(demo, 'dist'), path.join(prod, 'dist'), { recursive: true })
  for (const entry of readdirSync(path.join(demo, 'node_modules'))) {
    if (entry === 'tsx' || entry.startsWith('.')) continue
    const [from, to] = [path.join(demo, 'node_modules', entry), path.join(prod, 'node_modules', entry)]
    // The kit itself copied: what it imports resolves from here, where there is no tsx.
    if (entry === 'fastify-parse-kit') cpSync(from, to, { recursive: true })
    else symlinkSync(from, to)
  }
  t.notOk(existsSync(path.join(prod, 'node_modules', 'tsx')), 'no tsx to load')
  // Production refuses the embedded PostgreSQL: a MongoDB replica set (the stand-in unless MONGODB_URI).
  const mongo = await mongoReplicaSet(t)
  const server = await startServer(prod, process.execPath, args, { env: { NODE_ENV: 'production', DATABASE_URI: mongo.uri }, token: false })
  t.teardown(() => server.stop().catch(() => {}))
  const { APP_ID: appId, MASTER_KEY: masterKey } = readEnvFile(path.join(prod, '.env'))
  const app = { 'x-parse-application-id': appId }
  const url = (route: string) => `${server.base}${route}`
  t.equal((await http('GET', url('/health'), {})).status, 200)
  const products = await http('GET', url('/products/listProducts?limit=5'), app)
  t.equal(products.status, 200, `a model and functions discovered under dist/: ${products.text}`)
  t.same(products.json, { results: [], next: null, count: 0, countKind: 'exact' })
  t.equal((await http('GET', url('/notes/listNotes'), app)).json.count, 0, 'no seeding in production')
  const schema = await http('GET', url('/schemas/Tag'), { ...app, 'x-parse-master-key': masterKey })
  t.equal(schema.status, 200, schema.text)
  await server.stop()
  t.match(server.log(), /SIGTERM: shutting down/)
})

t.test('a bad setting stops the boot with a message naming it', async (t) => {
  if (!needs(t, 'compiled')) return
  const boot = (env: Record<string, string>) => run(process.execPath, ['dist/server.js'], { cwd: demo, env: userEnv(env) })
  // Every bad value in one boot (each boot loads the kit): the one line names each of them.
  const several = await boot({ PORT: 'eighty', DOCS_ENABLED: 'maybe', LOG_LEVEL: 'loud', REDIS_URL: 'localhost:6379' })
  t.equal(several.code, 1)
  t.match(several.stderr, /^Cannot start: Invalid environment .*PORT must be integer \(got "eighty"\)/)
  t.match(several.stderr, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/)
  t.match(several.stderr, /DOCS_ENABLED must be one of true, false, 1, 0, yes, no, on, off \(got "maybe"\)/)
  t.match(several.stderr, /REDIS_URL must start with redis:\/\/ or rediss:\/\/ \(got "localhost:6379"\)/)
  t.notMatch(several.stderr, /\n\s+at /, 'a message, not a stack trace')
  t.match(several.stderr, /\(FPK_ERR_ENV_INVALID\)$/m, 'with its code')
  // start:prod without a master key, or without a database: one line each, with its code, no stack.
  for (const [env, message] of [
    [{ NODE_ENV: 'production', MASTER_KEY: '' }, /^Cannot start: kitPlugin option "masterKey": required: pass masterKey or set MASTER_KEY.* \(FPK_ERR_OPTION_INVALID\)$/m],
    [{ NODE_ENV: 'production' }, /^Cannot start: kitPlugin option "databaseURI": required in production: set DATABASE_URI.* \(FPK_ERR_OPTION_INVALID\)$/m]
  ] as const) {
    const refused = await boot(env)
    t.equal(refused.code, 1, JSON.stringify(env))
    t.match(refused.stderr, message)
    t.notMatch(refused.stdout + refused.stderr, /^\s+at /m, 'no stack trace')
  }
  t.notOk(existsSync(path.join(demo, '.data', 'postgres', 'postmaster.pid')), 'nothing was started')
})

t.test('fpk ai writes assistant files and keeps existing ones', async (t) => {
  if (!needs(t, 'project')) return
  const written = await fpk(demo, 'ai', '1,6')
  t.equal(written.code, 0, written.stderr)
  t.match(written.stdout, /wrote +CLAUDE\.md/)
  t.match(written.stdout, /kept +AGENTS\.md \(it exists; -f overwrites it\)/)
  const claude = readFileSync(path.join(demo, 'CLAUDE.md'), 'utf8')
  t.match(claude, /^# CLAUDE\.md/)
  t.match(claude, /src\/models\/<Name>\.ts/, 'the rules name this project\'s directories')
  writeFileSync(path.join(demo, 'AGENTS.md'), 'mine\n')
  t.equal((await fpkHere(demo, 'ai', '6', '-y')).code, 0)
  t.equal(readFileSync(path.join(demo, 'AGENTS.md'), 'utf8'), 'mine\n', 'kept without -f')
  const forced = await fpkHere(demo, 'ai', 'agents,claude', '-f')
  t.match(forced.stdout, /replaced AGENTS\.md/)
  t.match(readFileSync(path.join(demo, 'AGENTS.md'), 'utf8'), /^# AGENTS\.md/)

  const others = path.join(work, 'other')
  const all = await fpkHere(others, 'ai', '2,3,4,5')
  t.equal(all.code, 0, all.stderr)
  t.match(readFileSync(path.join(others, '.cursor', 'rules', 'fastify-parse-kit.mdc'), 'utf8'), /^---\ndescription: [^\n]+\nglobs:\nalwaysApply: true\n---\n/)
  t.ok(existsSync(path.join(others, '.github', 'copilot-instructions.md')))
  t.match(readFileSync(path.join(others, '.windsurf', 'rules', 'fastify-parse-kit.md'), 'utf8'), /^---\ntrigger: always_on\n/)
  t.ok(existsSync(path.join(others, 'GEMINI.md')))
  const defaults = await fpkHere(others, 'ai', '-y')
  t.match(defaults.stdout, /wrote +AGENTS\.md/, 'the default is 6')
  const none = await fpkHere(others, 'ai', '0')
  t.match(none.stdout, /none chosen/)
  const bad = await fpkHere(others, 'ai', '7')
  t.equal(bad.code, 1)
  t.match(bad.stderr, /unknown assistant "7"/)
  const mixed = await fpkHere(others, 'ai', '0,1')
  t.equal(mixed.code, 1)
})

t.test("the generated project's own npm test passes", async (t) => {
  if (!shared.projectTest) return t.plan(0, 'needs g job CleanupDrafts, which did not run above')
  const result = await shared.projectTest
  t.equal(result.code, 0, `${result.stdout}\n${result.stderr}`)
  t.match(result.stdout, /# pass 13/, 'the smoke test (3) and the tests g resource Product (3), g model Tag (2), g functions Tag (3) and g job CleanupDrafts (2) wrote')
  t.match(result.stdout, /# fail 0/)
  const boots = result.stdout.match(/\[parse\] Running Migrations$/gm)?.length
  t.equal(boots, 1, 'the five files share one boot of the app (test/run.ts runs them in one process)')
})

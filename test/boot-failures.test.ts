// Every boot failure of `npm start` (fixtures/server.ts) and of an application's
// own entry (bootOrExit) is one line, `Cannot start: <what to change> (<FPK_ERR_…>)`,
// exit code 1, no stack trace. The successful boot beside them writes one log
// stream: no line in Parse Server's own (winston) format, pretty in development,
// and no secret in Parse's lines either.
// Also, from test/boot-failure.test.ts (merged here 29 November, a process less
// in the lane): a wrong declaration stops an in-process boot and its database.
// Its trigger on a class that is no model fails every kit booted in this
// process, which is why it lives in a file whose other boots are child processes.
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../lib/storage/free-port.js'
import { lane, startKit, tempDir } from './helpers/kit.js'
import { BeforeSave } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { clusterFromTemplate, copyTemplateCluster } from './helpers/pg-template.js'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { openDatabase } from '../lib/storage/database.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const BOOT_TIMEOUT_MS = 180_000
// Resolved here: a project directory of a test has no node_modules of its own.
const TSX = import.meta.resolve('tsx/esm')

interface Child { output: () => string, exited: Promise<number | null>, stop: (signal?: NodeJS.Signals) => Promise<number | null> }

// Imported before the entry: at exit, a line saying whether Parse Server itself (its main module) was loaded; require.cache
// is the process's. Not any file under parse-server/: the kit's stand-ins for what it defers are entered there on purpose.
const PARSE_LOADED_MARK = 'Parse Server loaded:'
const REPORT_PARSE_LOADED = `data:text/javascript,${encodeURIComponent([
  "import { createRequire } from 'node:module'",
  'const cache = createRequire(process.cwd() + "/").cache',
  `process.on('exit', () => process.stdout.write('\\n${PARSE_LOADED_MARK} ' + Object.keys(cache).some((file) => file.endsWith('/node_modules/parse-server/lib/index.js')) + '\\n'))`
].join('\n'))}`

/** A server entry in a child process, as a user's shell starts it (no DEBUG, no inherited DATABASE_URI or NODE_ENV). */
function start (entry: string, env: Record<string, string>, cwd = root): Child {
  const { DEBUG: _debug, DATABASE_URI: _uri, NODE_ENV: _env, MASTER_KEY: _key, LOG_PRETTY: _pretty, ...inherited } = process.env
  const child = spawn(process.execPath, ['--import', TSX, '--import', REPORT_PARSE_LOADED, entry], { cwd, env: { ...inherited, LOG_LEVEL: 'warn', ADMIN_PASSWORD: 'test-admin-password', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const timer = setTimeout(() => child.kill('SIGKILL'), BOOT_TIMEOUT_MS)
  void exited.then(() => clearTimeout(timer))
  return { output: () => output, exited, stop: async (signal = 'SIGTERM') => { if (child.exitCode === null) child.kill(signal); return exited } }
}

const example = (env: Record<string, string>) => start(path.join(root, 'fixtures', 'server.ts'), env)
const entry = (env: Record<string, string>, cwd?: string) => start(path.join(root, 'test', 'helpers', 'boot-entry.ts'), env, cwd)

/**
 * An application entry that takes kitPlugin from plugin.ts (the package's `fastify-parse-kit/plugin`) and
 * bootOrExit from its own module, not the package's index: nothing loads Parse before the options are checked.
 */
function pluginEntry (env: Record<string, string>): Child {
  const file = path.join(tempDir(), 'server.mts')
  writeFileSync(file, [
    `import Fastify from ${JSON.stringify(import.meta.resolve('fastify'))}`,
    `import { kitPlugin } from ${JSON.stringify(path.join(root, 'plugin.ts'))}`,
    `import { bootOrExit } from ${JSON.stringify(path.join(root, 'lib', 'host', 'startup.ts'))}`,
    'const app = Fastify()',
    "await bootOrExit(async () => { await app.register(kitPlugin, { appId: 'plugin-entry', masterKey: 'plugin-entry-master-key', ...JSON.parse(process.env.KIT_OPTIONS ?? '{}') }); await app.ready() })",
    ''
  ].join('\n'))
  return start(file, env)
}

async function until (child: Child, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + BOOT_TIMEOUT_MS
  while (!pattern.test(child.output()) && Date.now() < deadline) {
    if (await Promise.race([child.exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 100))])) break
  }
}

/** Exit 1, exactly one "Cannot start" line carrying `code`, matching `message`, and no stack trace. */
async function failsWithOneLine (t: Test, child: Child, code: string, message: RegExp): Promise<void> {
  t.equal(await child.exited, 1, 'exit code 1')
  const output = child.output()
  const lines = output.split('\n').filter((line) => line.includes('Cannot start'))
  t.equal(lines.length, 1, `one "Cannot start" line:\n${output}`)
  t.match(lines[0], /^Cannot start: .+ \(FPK_ERR_[A-Z_]+\)$/, 'the line ends with its code')
  t.ok(lines[0]?.endsWith(`(${code})`), `code ${code}: ${lines[0]}`)
  t.match(lines[0], message)
  t.notMatch(output, /^\s+at /m, 'no stack trace')
}

/** The child ended without loading any of Parse Server's files. */
function refusedBeforeParse (t: Test, child: Child): void {
  t.match(child.output(), new RegExp(`^${PARSE_LOADED_MARK} false$`, 'm'), 'refused before Parse Server was loaded')
}

t.test('the example app: one log stream, pretty in development, secrets redacted in Parse\'s own lines; a second instance on its data directory fails in one line', async (t) => {
  const dir = tempDir()
  // A copy of the initialised template cluster, not initdb: what is checked here is the log and the refused
  // second instance; the example's first boot on a new data directory is test/start.test.ts's.
  await clusterFromTemplate(path.join(dir, 'pg'))
  const port = await freePort()
  const masterKey = 'logging-test-master-key-123'
  // debug: Parse logs every request and response (its "verbose"), headers and bodies included.
  const first = example({ PORT: String(port), DATA_DIR: path.join(dir, 'pg'), LOG_LEVEL: 'debug', MASTER_KEY: masterKey, ALLOW_AUTH_ROUTES: 'true' })
  t.teardown(() => first.stop())
  await until(first, /^ {2}master key/m)
  const headers = { 'x-parse-application-id': 'fastify-parse-kit-example', 'content-type': 'application/json' }
  const login = await fetch(`http://127.0.0.1:${port}/parse/login`, { method: 'POST', headers, body: JSON.stringify({ username: 'admin', password: 'test-admin-password' }) })
  const { sessionToken } = await login.json() as { sessionToken: string }
  t.match(sessionToken, /^r:/, 'logged in through Parse\'s own route')
  const schemas = await fetch(`http://127.0.0.1:${port}/parse/schemas/Note`, { headers: { ...headers, 'x-parse-master-key': masterKey, 'x-parse-session-token': sessionToken } })
  t.equal(schemas.status, 200)
  await new Promise((resolve) => setTimeout(resolve, 500))

  const second = example({ PORT: String(await freePort()), DATA_DIR: path.join(dir, 'pg'), LOG_PRETTY: 'false' })
  await failsWithOneLine(t, second, 'FPK_ERR_DATA_DIR_IN_USE', /The data directory .* is in use by PostgreSQL \(pid \d+\) of another running instance/)
  t.match(second.output(), /^\{"level":40,.*"msg":"MASTER_KEY is not set/m, 'LOG_PRETTY=false: JSON lines')

  // Ctrl-C here; SIGTERM in test/start.test.ts: each signal's clean exit on one boot of the example, not a boot of its own.
  t.equal(await first.stop('SIGINT'), 0, 'the first instance still closes cleanly on SIGINT (Ctrl-C): exit code 0')
  t.equal(processesUsing(path.join(dir, 'pg')), '', 'no postgres left running')
  const output = first.output()
  t.match(output, /^\[\d\d:\d\d:\d\d\.\d{3}\] DEBUG: \[parse\] REQUEST for \[POST\] \/parse\/login/m, 'Parse\'s request lines, pretty, through the same logger')
  t.match(output, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[parse\] Running Migrations/m, 'Parse\'s boot lines too')
  t.notMatch(output, /^(error|warn|info|verbose|debug|silly): /m, 'no line in Parse\'s own format')
  t.notOk(output.includes(masterKey), 'the master key never reaches a log line')
  t.notOk(output.includes(sessionToken), 'nor the session token Parse answered with')
  t.notOk(output.includes('test-admin-password'), 'nor the password')
  t.match(output, /\[redacted\]/, 'they are replaced')
})

t.test('an unreachable PostgreSQL in DATABASE_URI: one line naming host and port, no "answering 503"', async (t) => {
  const port = await freePort()
  const child = example({ PORT: String(await freePort()), DATABASE_URI: `postgres://user:secret@127.0.0.1:${port}/app` })
  await failsWithOneLine(t, child, 'FPK_ERR_DATABASE_UNREACHABLE', new RegExp(`Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`))
  t.notMatch(child.output(), /503/, 'nothing is served yet: no word of 503')
  t.notMatch(child.output(), /secret/, 'no password')
})

t.test('production without MASTER_KEY, or without DATABASE_URI', async (t) => {
  const noKey = example({ PORT: String(await freePort()), NODE_ENV: 'production' })
  await failsWithOneLine(t, noKey, 'FPK_ERR_OPTION_INVALID', /kitPlugin option "masterKey": required: pass masterKey or set MASTER_KEY/)
  refusedBeforeParse(t, noKey)
  const noDatabase = example({ PORT: String(await freePort()), NODE_ENV: 'production', MASTER_KEY: 'a-production-master-key' })
  await failsWithOneLine(t, noDatabase, 'FPK_ERR_OPTION_INVALID', /kitPlugin option "databaseURI": required in production: set DATABASE_URI/)
  refusedBeforeParse(t, noDatabase)
})

t.test('a PORT that is no port number: one coded line, before Parse Server loads', async (t) => {
  const child = example({ PORT: 'eighty' })
  await failsWithOneLine(t, child, 'FPK_ERR_ENV_INVALID', /PORT must be a port number from 0 to 65535 \(got "eighty"\)/)
  refusedBeforeParse(t, child)
})

t.test('a misspelt option names the one meant, before Parse Server loads', async (t) => {
  const child = pluginEntry({ KIT_OPTIONS: JSON.stringify({ allowAuthRoute: true }) })
  await failsWithOneLine(t, child, 'FPK_ERR_OPTION_UNKNOWN', /kitPlugin option "allowAuthRoute": unknown option; did you mean "allowAuthRoutes"\?/)
  refusedBeforeParse(t, child)
})

t.test('DEBUG=1 adds the stack', async (t) => {
  const child = pluginEntry({ KIT_OPTIONS: JSON.stringify({ allowAuthRoute: true }), DEBUG: '1' })
  t.equal(await child.exited, 1)
  t.match(child.output(), /^Cannot start: .*\(FPK_ERR_OPTION_UNKNOWN\)\n.*\n\s+at /m, 'the line, then the stack')
})

// A project whose tsconfig.json lacks experimentalDecorators: TypeScript (esbuild under tsx) compiles standard decorators.
for (const [label, field] of [['a field declared with `declare` (the transform fails)', 'declare title: string'], ['a plain field (the decorator runs as a standard one)', 'title?: string']] as const) {
  t.test(`experimentalDecorators off, ${label}: the flag is named`, async (t) => {
    const project = tempDir()
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module' }))
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true } }))
    mkdirSync(path.join(project, 'models'))
    writeFileSync(path.join(project, 'models', 'Thing.ts'), [
      `import { BaseModel, ParseClass, ParseField } from ${JSON.stringify(path.join(root, 'lib', 'index.ts'))}`,
      "@ParseClass('Thing')",
      'export class Thing extends BaseModel {',
      `  @ParseField({ type: 'String' }) ${field}`,
      '}',
      ''
    ].join('\n'))
    const child = entry({ KIT_MODELS: path.join(project, 'models'), KIT_OPTIONS: JSON.stringify({ dataDir: path.join(project, 'pg') }) }, project)
    await failsWithOneLine(t, child, 'FPK_ERR_DECORATORS_CONFIG', /"experimentalDecorators": true/)
  })
}

// The generated project's seed imports a model statically: the file fails to compile before the kit's loader runs.
t.test('experimentalDecorators off, a model imported statically by the entry (as a generated seed does): the flag is named', async (t) => {
  const project = tempDir()
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true } }))
  const kit = JSON.stringify(path.join(root, 'lib', 'index.ts'))
  writeFileSync(path.join(project, 'Thing.ts'), [
    `import { BaseModel, ParseClass, ParseField } from ${kit}`,
    "@ParseClass('Thing')",
    'export class Thing extends BaseModel {',
    "  @ParseField({ type: 'String' }) declare title: string",
    '}',
    ''
  ].join('\n'))
  writeFileSync(path.join(project, 'seed.ts'), "import { Thing } from './Thing.ts'\nexport const seeded = Thing\n")
  writeFileSync(path.join(project, 'server.ts'), `import { bootOrExit } from ${kit}\nawait bootOrExit(() => import('./seed.ts'))\n`)
  const child = start(path.join(project, 'server.ts'), {}, project)
  await failsWithOneLine(t, child, 'FPK_ERR_DECORATORS_CONFIG', /Thing\.ts could not be compiled: .*"experimentalDecorators": true/)
})

t.test('a port already in use: one coded line before the boot starts', async (t) => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => blocker.close())
  const port = (blocker.address() as AddressInfo).port
  const dir = tempDir()
  const child = example({ PORT: String(port), DATA_DIR: path.join(dir, 'pg') })
  await failsWithOneLine(t, child, 'FPK_ERR_PORT_UNAVAILABLE', new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use .*PORT=${port + 1}`))
  t.notOk(existsSync(path.join(dir, 'pg')), 'no database was started for a server that could not listen')
  refusedBeforeParse(t, child)
})

// ── from test/boot-failure.test.ts ──
// A wrong declaration stops boot with a message saying what to change, and leaves no database running.
class Loose {
  @BeforeSave() static check () {}
}

function processesUsing (dataDir: string): string {
  try {
    return execFileSync('pgrep', ['-a', '-f', dataDir], { encoding: 'utf8' })
  } catch {
    return '' // pgrep exits 1 when nothing matches
  }
}

t.test('a trigger on a class without @ParseClass fails boot and stops the database', async (t) => {
  t.equal(modelByName(Loose.name), undefined, 'Loose is no model: only its trigger is declared')
  const dataDir = path.join(tempDir(), 'postgres')
  t.teardown(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }))
  await t.rejects(startKit(t, { dataDir }), /@BeforeSave on Loose\.check: Loose is not a model\. Add @ParseClass/)
  t.equal(processesUsing(dataDir), '', 'the embedded PostgreSQL was stopped')
})

t.test('a PostgreSQL that runs but refuses the login is not reported as unreachable', { skip: lane.kind !== 'postgres' ? 'a PostgreSQL login' : false }, async (t) => {
  const dataDir = path.join(tempDir(), 'postgres')
  await copyTemplateCluster(dataDir)
  const server = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: () => {} })
  t.teardown(() => server.stop())
  const url = new URL(server.uri)
  const where = `127\\.0\\.0\\.1:${url.port}`
  const wrongPassword = new URL(server.uri)
  wrongPassword.password = 'not-the-password'
  await t.rejects(openDatabase({ databaseURI: wrongPassword.href, dataDir }), {
    code: 'FPK_ERR_DATABASE_UNREACHABLE',
    message: new RegExp(`^PostgreSQL at ${where} refused user "${url.username}": wrong password \\(28P01\\)\\. Fix the user and password in DATABASE_URI\\.$`)
  })
  const noDatabase = new URL(server.uri)
  noDatabase.pathname = '/no_such_app'
  await t.rejects(openDatabase({ databaseURI: noDatabase.href, dataDir }), {
    code: 'FPK_ERR_DATABASE_UNREACHABLE',
    message: new RegExp(`^PostgreSQL at ${where} has no database "no_such_app" \\(3D000\\)`)
  })
})

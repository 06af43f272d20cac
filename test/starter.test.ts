// The files `fpk new` copies from the example application (cli/starter.ts):
// the kit's import becomes the package name, the copy note goes, an import a
// new project could not resolve is refused, and the package ships every file.
// And the generated project's switches for metrics, tracing and CORS, and for idleCollection.
// From the former kit-build.test.ts: fpk new reuses a checkout's build when
// dist/ is newer than every source it compiles, and says why it builds
// otherwise (cli/kit-build.ts).
import t from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { KIT_ROOT } from '../cli/kit.js'
import { staleBuildReason } from '../cli/kit-build.js'
import { STARTER_FILES, starterFiles, starterSource } from '../cli/starter.js'

t.test('every starter file, as a project gets it', async (t) => {
  const files = await starterFiles()
  t.same(files.map((file) => file.file), STARTER_FILES)
  for (const { file, content } of files) {
    t.notMatch(content, /\.\.\/lib\/|\.\.\/plugin/, `${file}: no path into the kit's checkout`)
    t.notMatch(content, /cli\/starter\.ts/, `${file}: the copy note is left out`)
    t.notMatch(content, /@sinclair\/typebox/, `${file}: TypeBox through the kit (a project does not depend on it)`)
  }
  const notes = files.find((file) => file.file === 'functions/notes.ts')!.content
  t.match(notes, /from 'fastify-parse-kit'\n/, 'the kit by its package name')
  t.match(notes, /from '\.\.\/models\/Note\.js'\n/, 'imports between starter files stay as they are')
})

t.test('an import a new project would not have is refused', async (t) => {
  const note = '// `fpk new` copies this file into new projects (cli/starter.ts).\n'
  t.throws(() => starterSource('seed.ts', `${note}import { Product } from './models/Product.js'\n`), /fixtures\/seed\.ts imports \.\/models\/Product\.js, which a new project does not get/)
  t.throws(() => starterSource('serve.ts', `${note}import { kitPlugin } from '../plugin.js'\n`), /imports \.\.\/plugin\.js/)
  t.throws(() => starterSource('roles.ts', 'export const ADMIN = \'Admin\'\n'), /does not say that fpk new copies it/)
  t.equal(starterSource('serve.ts', `${note}const { listenOrExit } = await import('../lib/index.js')\n`), "const { listenOrExit } = await import('fastify-parse-kit')\n")
})

t.test('the package ships the starter files (the CLI reads them at run time)', async (t) => {
  const files: string[] = JSON.parse(readFileSync(path.join(KIT_ROOT, 'package.json'), 'utf8')).files
  for (const file of STARTER_FILES) t.ok(files.includes(`fixtures/${file}`), `package.json "files" lists fixtures/${file}`)
})

t.test('the generated .env.example has the switches for metrics, tracing and CORS, and the generated app reads them', async (t) => {
  const template = path.join(KIT_ROOT, 'cli', 'templates', 'project')
  for (const file of ['_env.example', '_env']) {
    const text = readFileSync(path.join(template, file), 'utf8')
    for (const name of ['METRICS', 'METRICS_TOKEN', 'TRACING', 'CORS_ORIGIN']) t.match(text, new RegExp(`^(# )?${name}=`, 'm'), `${file}: ${name}`)
  }
  const { loadEnv } = await import(path.join(template, 'src', 'env.ts'))
  t.match(loadEnv({}), { metrics: false, tracing: false, corsOrigins: undefined }, 'all off (any origin) by default')
  const token = 'a-metrics-token-of-32-characters'
  t.match(loadEnv({ METRICS: 'true', METRICS_TOKEN: token, TRACING: 'on', CORS_ORIGIN: 'https://a.example.com, https://b.example.com' }),
    { metrics: true, metricsToken: token, tracing: true, corsOrigins: ['https://a.example.com', 'https://b.example.com'] })
  t.throws(() => loadEnv({ METRICS: 'maybe' }), /METRICS must be one of true, false/)
  const app = readFileSync(path.join(template, 'src', 'app.ts'), 'utf8')
  t.match(app, /metrics: env\.metrics && \(env\.metricsToken \? \{ token: env\.metricsToken \} : true\)/, 'the app passes metrics')
  t.match(app, /tracing: env\.tracing/, 'tracing')
  t.match(app, /cors: \{ origin: env\.corsOrigins \}/, 'and the CORS origins')
  t.match(readFileSync(path.join(KIT_ROOT, 'fixtures', 'serve.ts'), 'utf8'), /Metrics: \$\{origin\}\$\{metrics\.path\}/, 'the ready block shows /metrics when it is on')
})

t.test('SHUTDOWN_DRAIN_MS: listed in .env.example, checked by the generated env.ts, passed to the kit', async (t) => {
  const template = path.join(KIT_ROOT, 'cli', 'templates', 'project')
  t.match(readFileSync(path.join(template, '_env.example'), 'utf8'), /^# SHUTDOWN_DRAIN_MS=5000$/m)
  const { loadEnv } = await import(path.join(template, 'src', 'env.ts'))
  t.equal(loadEnv({}).shutdownDrainMs, undefined, 'unset: the kit\'s default')
  t.equal(loadEnv({ SHUTDOWN_DRAIN_MS: '8000' }).shutdownDrainMs, 8000)
  t.throws(() => loadEnv({ SHUTDOWN_DRAIN_MS: 'soon' }), /SHUTDOWN_DRAIN_MS/)
  t.match(readFileSync(path.join(template, 'src', 'app.ts'), 'utf8'), /shutdown: \{ drainDelayMs: env\.shutdownDrainMs \}/, 'the app passes it')
  t.match(readFileSync(path.join(KIT_ROOT, 'fixtures', 'serve.ts'), 'utf8'), /closeWithGrace\(\{ delay: app\.kit\.shutdownBudgetMs/, 'the server\'s force exit waits the kit\'s shutdown budget')
})

t.test('the generated app and the example app turn idleCollection on from IDLE_COLLECTION only (off by default: it costs CPU after it runs)', async (t) => {
  const line = /^ {4}\.\.\.\(Number\(process\.env\.IDLE_COLLECTION\) > 0 \? \{ idleCollection: Number\(process\.env\.IDLE_COLLECTION\) \} : \{\}\),$/m
  t.match(readFileSync(path.join(KIT_ROOT, 'cli', 'templates', 'project', 'src', 'app.ts'), 'utf8'), line, 'the generated app')
  t.match(readFileSync(path.join(KIT_ROOT, 'fixtures', 'app.ts'), 'utf8'), line, 'the example app, which the bench serves')
})

// From the former kit-build.test.ts: a checkout's files with chosen modification times.
const buildRoot = mkdtempSync(path.join(tmpdir(), 'fpk-kit-build-'))
t.teardown(() => rmSync(buildRoot, { recursive: true, force: true }))

/** Writes a file whose modification time is `at` seconds after the epoch. */
function file (relative: string, at: number): void {
  const full = path.join(buildRoot, relative)
  mkdirSync(path.dirname(full), { recursive: true })
  writeFileSync(full, '// test\n')
  utimesSync(full, at, at)
}

for (const settings of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) file(settings, 1000)
for (const source of ['plugin.ts', 'lib/index.ts', 'lib/access/gate.ts', 'cli/fpk.ts']) file(source, 2000)
file('lib/parse/parse-server-lib.d.ts', 9000) // declarations compile to nothing
file('cli/templates/resource/model.ts', 9000) // templates are copied, not compiled
for (const output of ['dist/plugin.js', 'dist/lib/index.js', 'dist/lib/access/gate.js', 'dist/cli/fpk.js']) file(output, 3000)

t.test('a build newer than every compiled source is current', async (t) => {
  t.equal(staleBuildReason(buildRoot), undefined)
})

t.test('a source edited after the build makes it stale, naming the file', async (t) => {
  file('lib/access/gate.ts', 4000)
  t.equal(staleBuildReason(buildRoot), `${path.join('lib', 'access', 'gate.ts')} changed after it was built`)
  file('lib/access/gate.ts', 2000)
})

t.test('a new source without output, or changed compiler settings, make it stale', async (t) => {
  file('cli/commands/new.ts', 2000)
  t.equal(staleBuildReason(buildRoot), `${path.join('dist', 'cli', 'commands', 'new.js')} is missing`)
  file('dist/cli/commands/new.js', 3000)
  t.equal(staleBuildReason(buildRoot), undefined)
  file('tsconfig.build.json', 5000)
  t.match(staleBuildReason(buildRoot), /compiler settings or package\.json changed/)
})

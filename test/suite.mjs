// `npm test`: the static checks (tsc, dependency rules, ESLint) and both
// database lanes. The work is CPU-bound on two cores, so what decides the
// wall time is that no long chain starts late: four runners start at once.
// The PostgreSQL lane is printed as it runs; the others are printed after it:
// the `waits` lane (test/lanes.mjs: the jobs tests and the files that mostly
// wait on the instances they spawn), the MongoDB lane, and the CLI test (the
// longest single file, a chain of builds, installs and boots) followed by the
// static checks.
// Exit status: 0 only when everything passed.
// KIT_COVERAGE=1: both lanes record V8 coverage (child processes too), one c8
// report is made at the end, and test/coverage-thresholds.ts checks the floors.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CLI_TEST } from './lanes.mjs'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const coverage = Boolean(process.env.KIT_COVERAGE)
const coverageEnv = coverage ? { NODE_V8_COVERAGE: path.join(root, 'coverage', 'tmp') } : {}
if (coverage) rmSync(path.join(root, 'coverage'), { recursive: true, force: true })

/** Runs an npm script (with `args` for it); `print: false` keeps its output for later. Answers its exit code and output. */
function run (script, { env = {}, print = true, args = [] } = {}) {
  return new Promise((resolve) => {
    const command = ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])]
    // Output is always kept (for the failure list at the end); a printed lane also streams it.
    const child = spawn('npm', command, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const chunks = []
    child.stdout.on('data', (chunk) => { chunks.push(chunk); if (print) process.stdout.write(chunk) })
    child.stderr.on('data', (chunk) => { chunks.push(chunk); if (print) process.stderr.write(chunk) })
    const name = [script, ...args].join(' ')
    child.on('close', (code, signal) => resolve({ script: name, code: code ?? 1, signal, output: Buffer.concat(chunks).toString() }))
  })
}

async function sequence (scripts, options) {
  const results = []
  for (const script of scripts) results.push(await run(script, options))
  return results
}

/**
 * tap ships built with its default plugins; package.json's "tap.plugin" drops
 * @tapjs/typescript (tsx loads the tests) and the plugins no test uses (mock's
 * loader hook alone cost every test process 0.24 CPU-s). The first tap run after `npm ci`
 * rebuilds itself, but gives that run's test processes the shipped set's
 * loaders (ts-node's beside tsx's, on every file), and the two lanes would
 * start that rebuild at once. So it is built here, once, before the lanes.
 */
function tapBuiltWithDroppedPlugins () {
  const dropped = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).tap?.plugin ?? [])
    .filter((name) => name.startsWith('!')).map((name) => name.slice(1))
  const built = path.join(root, 'node_modules', '@tapjs', 'test', 'test-built', 'dist', 'esm', 'index.js')
  if (!existsSync(built)) return false
  const source = readFileSync(built, 'utf8')
  return dropped.some((name) => source.includes(`'${name}'`) || source.includes(`"${name}"`))
}
if (tapBuiltWithDroppedPlugins()) {
  const build = await run('tap:build', { print: false })
  if (build.code !== 0) {
    process.stdout.write(build.output)
    process.exit(1)
  }
}

const started = Date.now()
const [postgres, waits, mongo, beside] = await Promise.all([
  // The lane leaves the CLI test out (test/lanes.mjs).
  run('test:postgres', { env: coverageEnv }),
  // The files that mostly wait on the instances they spawn, from the start, on a runner of their own.
  run('test:waits', { env: coverageEnv, print: false }),
  run('test:mongo', { env: coverageEnv, print: false }),
  (async () => [
    // The CLI test's chain of builds, installs and boots, the longest single file, from the start.
    // (The PostgreSQL lane's script given one file runs that file only.)
    await run('test:postgres', { env: coverageEnv, print: false, args: [CLI_TEST] }),
    ...await sequence(['typecheck', 'check:cycles', 'lint'], { print: false })
  ])()
])
for (const result of [waits, mongo, ...beside]) {
  process.stdout.write(`\n── npm run ${result.script} (ran beside the PostgreSQL lane) ──\n${result.output}`)
}
const results = [postgres, waits, mongo, ...beside]
/**
 * The failed assertions of a tap run, each under its file: a long run's log is
 * often read from its end only, and a failure printed 10,000 lines earlier is lost.
 */
function failures (output) {
  const found = []
  let file = ''
  for (const line of output.split('\n')) {
    // A file's own process, or a file of a group in a shared one (test/helpers/file-group.ts).
    const subtest = /^# Subtest: (\S+\.test\.\w+)/.exec(line) ?? /^ {4}# Subtest: (test\/\S+\.test\.ts) imports with its own declarations$/.exec(line)
    if (subtest) file = subtest[1]
    const failedLine = /^(\s*)not ok \d+ - (.*)$/.exec(line)
    if (failedLine && !/#\s*(SKIP|TODO)\b/i.test(failedLine[2])) found.push(`${file}: ${failedLine[1].length > 0 ? '  '.repeat(failedLine[1].length / 4) : ''}${failedLine[2]}`)
  }
  return found
}
for (const result of results) {
  const failedTests = result.code === 0 ? [] : failures(result.output)
  if (failedTests.length > 0) process.stdout.write(`\n── failed in npm run ${result.script} ──\n${failedTests.join('\n')}\n`)
}
if (coverage) results.push(await run('coverage:report'))
const failed = results.filter((result) => result.code !== 0)
const seconds = Math.round((Date.now() - started) / 1000)
for (const result of results) process.stdout.write(`${result.code === 0 ? 'ok    ' : 'FAILED'} npm run ${result.script}${result.signal ? ` (${result.signal})` : ''}\n`)
process.stdout.write(`npm test: ${failed.length === 0 ? 'passed' : `${failed.length} failed`} in ${seconds} s\n`)
process.exitCode = failed.length === 0 ? 0 : 1

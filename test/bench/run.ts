// `npm run bench`: every measurement in one run, so that the ratios compare
// numbers taken on the same machine at the same time.
//   1. throughput and latency: the server (test/bench/server.ts) in a child
//      process, autocannon here, interleaved rounds, medians reported;
//   2. CPU profiles of the same scenarios, one per scenario;
//   3. scale: boot and OpenAPI time with 0/10/100/1000 generated functions
//      (test/bench/scale.ts, one child process per boot), and warm-boot CPU and
//      statements with 10 and 200 generated models (test/bench/boot-models.ts).
// Writes results/latest.json and results/latest.md, and prints the table.
// Flags: --quick (1 s runs, for a smoke test), --no-nest (without the NestJS peer of test/bench/nest/), --tsx (the server under tsx instead of compiled, test/bench/compiled.ts), --no-profile, --no-scale, --no-rate-limit-store,
// --no-queue (without the queue part of test/bench/queue.ts), --queue-only (only that, printed, latest.* untouched; with --quick 500 jobs),
// --memory-only (issue 51: only the memory part — both servers under the matched load of test/bench/memory-load.ts, then
// each one's other scenarios — its rows printed, latest.* untouched), --render (only rewrite latest.md from latest.json), --scale-only (only the boot/scale part,
// printed, latest.* untouched), --data-size (add the data-size scenario of test/bench/data-size.ts:
// tables of 1k and 1M rows, several minutes), --data-size-only (only that, printed and written to
// results/data-size.json, latest.* untouched), --only=<labels or keys>
// (e.g. --only=6,6' : those scenarios and the ratios between them).
// Env: BENCH_SECONDS (4), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_SCALE_SIZES
// (10,100,1000), BENCH_SCALE_REPEATS (3 boots per size), BENCH_SCALE_RATIO_ROUNDS (9 rounds of the boot ratio: kit with 0 and 1000 functions and bare Fastify, back to back), BENCH_FSYNC=1, BENCH_SERVER_FLAGS (node flags for the server process),
// BENCH_IDLE_SECONDS (60: the idle pause after the load, issue 51's memory row), IDLE_COLLECTION=30 (the example app's idleCollection on, as a generated project's environment turns it on; off by default),
// BENCH_NOTE (a sentence printed at the top of latest.md, e.g. that the machine was busy),
// BENCH_DATA_SIZES (1000,1000000) and the other BENCH_DATA_* of test/bench/data-size.ts.
import { fork, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { tempDir } from '../helpers/kit.js'
import { summariseProfile, type ProfileSummary } from './analyze.js'
import { coreLayout, cpuAccountingAvailable, cpuMsBetween, nodeCpuMs, pin, sampleTree } from './cpu.js'
import { ARM_SECONDS, measureQueue } from './queue.js'
import { bootRatioLine, bootRatioRows, memoryRows, queueRows, renderMarkdown, type BenchResults, type BootRatioRound, type BootRatioRounds, type ScenarioProfile, type ScenarioResult, type RoundSample, type RatioResult, type ScaleResult } from './report.js'
import { compileBench } from './compiled.js'
import { formatBootModels, measureBootModels, type BootModelsResult } from './boot-models.js'
import { RATIOS, scenarios as buildScenarios, type Scenario } from './scenarios.js'
import { MATCHED_KEYS, MATCHED_LOAD, sampleResident } from './memory-load.js'
import { buildNestPeer, nestHostFile } from './nest-peer.js'
import { measureRateLimitStore, rateLimitStoreMarkdown, type RateLimitStoreOutcome } from './rate-limit-store.js'
import { dataSizeSettings, measureDataSize } from './data-size.js'
import { dataSizeMarkdown, type DataSizeResult } from './data-size-report.js'
import {
  BARE_ROUTES_RESULT_MARK, BENCH_DIR, PROFILES_DIR, RESULTS_DIR, ROOT, SCALE_RESULT_MARK, median, round,
  type BareRoutesSample, type Command, type MemorySample, type Reply, type ScaleSample, type ServerReady
} from './shared.js'

const args = new Set(process.argv.slice(2).filter((arg) => !arg.startsWith('--only=')))
const only = process.argv.slice(2).find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',').filter(Boolean)
const quick = args.has('--quick')
const memoryOnly = args.has('--memory-only')
const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? (quick ? 1 : 4)),
  rounds: Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3)),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  warmupSeconds: quick ? 1 : 2,
  profileSeconds: quick ? 1 : 3,
  // 0 is the baseline every other size is compared with.
  scaleSizes: [...new Set([0, ...(process.env.BENCH_SCALE_SIZES ?? '10,100,1000').split(',').map(Number)])].sort((a, b) => a - b),
  scaleRepeats: quick ? 1 : Math.max(1, Number(process.env.BENCH_SCALE_REPEATS ?? 3)),
  // Issue 51's boot ratio: rounds of the kit with 0 and 1000 functions and bare Fastify, back to back.
  scaleRatioRounds: quick ? 1 : Math.max(1, Number(process.env.BENCH_SCALE_RATIO_ROUNDS ?? 9)),
  profile: !args.has('--no-profile') && !memoryOnly,
  // The NestJS peer: unless --no-nest, or --only names none of its scenarios (labels N…, keys nest…).
  nest: !args.has('--no-nest') && (!only || only.some((name) => /^(N|nest)/.test(name))),
  scale: !args.has('--no-scale') && !memoryOnly,
  // Issue 51: how long both servers sit idle after the load before their memory is read again.
  idleSeconds: Number(process.env.BENCH_IDLE_SECONDS ?? (quick ? 5 : 60)),
  queueJobs: quick ? 500 : 10_000,
  // Each arm's seconds in each of the queue's rounds of orders (test/bench/queue.ts).
  queueArmSeconds: quick ? 0.5 : ARM_SECONDS,
  dataSize: args.has('--data-size') ? dataSizeSettings(quick) : undefined
}
const TSX = ['--import', 'tsx']
// The server runs compiled, as production does (test/bench/compiled.ts); --tsx runs the sources as they are.
const serverEntry = args.has('--tsx') || args.has('--render') || args.has('--scale-only') || args.has('--queue-only')
  ? { file: path.join(BENCH_DIR, 'server.ts'), loader: TSX }
  : { file: path.join(compileBench(), 'server.js'), loader: ['--enable-source-maps'] }
// Extra node/V8 flags for the bench server only (e.g. BENCH_SERVER_FLAGS=--max-semi-space-size=8), to weigh a production flag.
const serverFlags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)
const began = performance.now()
// Server (with the PostgreSQL it starts) on some cores, this process (autocannon) on the others.
const cores = coreLayout()
if (cores) pin(process.pid, cores.load)
const loadBefore = os.loadavg()

mkdirSync(RESULTS_DIR, { recursive: true })
// Modes that only print (--scale-only, --queue-only) keep the last full run's profiles.
if (!args.has('--render') && !args.has('--queue-only') && !args.has('--scale-only')) rmSync(PROFILES_DIR, { recursive: true, force: true })
const log = (line: string) => process.stderr.write(`[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(3)}s] ${line}\n`)

// ---------------------------------------------------------------- the server

/** A Command without its id (the id is added when it is sent). */
type CommandBody = Command extends infer C ? C extends unknown ? Omit<C, 'id'> : never : never

class ServerProcess {
  private nextId = 1
  private pending = new Map<number, { resolve: (value: unknown) => void, reject: (error: Error) => void }>()
  readonly ready: Promise<ServerReady>
  readonly child: ChildProcess

  constructor (logFile: string, file = serverEntry.file, argv: string[] = []) {
    const output = createWriteStream(logFile)
    // --expose-gc only lets the runner ask for the live heap after the load (memory-live); it changes no heap sizing.
    this.child = fork(file, argv, { cwd: ROOT, execArgv: [...serverEntry.loader, '--expose-gc', ...serverFlags], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    // Before it boots: PostgreSQL, started by the server, inherits the mask.
    if (cores) pin(this.child.pid!, cores.server)
    this.child.stdout!.pipe(output)
    this.child.stderr!.pipe(output)
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the bench server did not start within 180 s (see ${logFile})`)), 180_000)
      this.child.on('message', (message: ServerReady | Reply) => {
        if ('type' in message && message.type === 'ready') {
          clearTimeout(timer)
          resolve(message)
          return
        }
        const reply = message as Reply
        const waiter = this.pending.get(reply.id)
        this.pending.delete(reply.id)
        if (reply.ok) waiter?.resolve(reply.value)
        else waiter?.reject(new Error(`bench server: ${reply.error}`))
      })
      this.child.on('exit', (code, signal) => {
        clearTimeout(timer)
        const error = new Error(`the bench server exited (${signal ?? code}); its output is in ${logFile}`)
        reject(error)
        for (const waiter of this.pending.values()) waiter.reject(error)
        this.pending.clear()
      })
    })
    this.ready.catch(() => {})
  }

  send<T = unknown> (command: CommandBody): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      this.child.send({ ...command, id })
    })
  }

  async close (): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    await this.send({ cmd: 'close' }).catch(() => {})
    await Promise.race([exited, sleep(30_000).then(() => this.child.kill('SIGTERM'))])
  }
}

// ------------------------------------------------------------- load and rounds

interface Origin { origin: string }

/** A running server process and what it said when ready: the kit's bench server, or the NestJS peer. */
interface Side { process: ServerProcess, ready: ServerReady }
type Sides = { kit: Side, nest?: Side }
const sideOf = (sides: Sides, scenario: Scenario): Side => {
  const side = sides[scenario.server ?? 'kit']
  if (!side) throw new Error(`scenario ${scenario.label} needs the ${scenario.server} server, which is not running`)
  return side
}

/**
 * Waits (at most ~5 s) until the server's process tree is idle — below 3% of a
 * core over 250 ms — so that background work left by the previous run (the
 * Note table's reset, PostgreSQL's autovacuum, a late GC) is not charged to
 * the next run's CPU per request.
 */
async function settle (serverPid: number): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const before = sampleTree(serverPid)
    await sleep(250)
    if (cpuMsBetween(before, sampleTree(serverPid)) < 0.03 * 250) return
  }
}

async function fire (target: Origin, scenario: Scenario, seconds: number, serverPid?: number): Promise<RoundSample> {
  if (serverPid && cpuAccountingAvailable) await settle(serverPid)
  const before = serverPid && cpuAccountingAvailable ? sampleTree(serverPid) : undefined
  const result = await autocannon({
    url: target.origin + scenario.path,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections: settings.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10
  })
  const after = before ? sampleTree(serverPid!) : undefined
  const cpuMs = before ? cpuMsBetween(before, after!) : undefined
  // The node process alone (its threads included); the rest of the tree is PostgreSQL.
  const nodeMs = before ? nodeCpuMs(before, after!, serverPid!) : undefined
  return {
    nodeCpuUsPerRequest: nodeMs === undefined || result.requests.total === 0 ? null : round(1000 * nodeMs / result.requests.total, 0),
    reqPerSec: round(result['2xx'] / result.duration, 0),
    cpuUsPerRequest: cpuMs === undefined || result.requests.total === 0 ? null : round(1000 * cpuMs / result.requests.total, 0),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}

async function sanityCheck (target: Origin, scenario: Scenario): Promise<void> {
  const response = await fetch(target.origin + scenario.path, { method: scenario.method, headers: scenario.headers, body: scenario.body })
  const text = await response.text()
  let body: unknown
  try { body = JSON.parse(text) } catch { body = text }
  const problem = scenario.check(response.status, body)
  if (problem) throw new Error(`scenario ${scenario.label} (${scenario.method} ${scenario.path}) ${problem}: ${text.slice(0, 300)}`)
}

/** One round's running order: the groups in turn, each group's members rotated by round so none always runs first. */
function roundOrder (all: Scenario[], round: number): Scenario[] {
  const order: Scenario[] = []
  for (const group of new Set(all.map((scenario) => scenario.group))) {
    const members = all.filter((scenario) => scenario.group === group)
    const shift = round % members.length
    order.push(...members.slice(shift), ...members.slice(0, shift))
  }
  return order
}

async function measureThroughput (sides: Sides, all: Scenario[]): Promise<Map<string, RoundSample[]>> {
  log(`all ${all.length} scenarios answer correctly; warming up (${settings.warmupSeconds} s each)`)
  for (const scenario of all) {
    const side = sideOf(sides, scenario)
    await fire(side.ready, scenario, settings.warmupSeconds)
    if (scenario.group === 'write') await side.process.send({ cmd: 'reset-notes' })
  }
  const samples = new Map<string, RoundSample[]>(all.map((scenario) => [scenario.key, []]))
  for (let r = 0; r < settings.rounds; r++) {
    for (const scenario of roundOrder(all, r)) {
      await sleep(250)
      const side = sideOf(sides, scenario)
      const sample = await fire(side.ready, scenario, settings.seconds, side.process.child.pid)
      samples.get(scenario.key)!.push(sample)
      if (scenario.group === 'write') await side.process.send({ cmd: 'reset-notes' })
      log(`round ${r + 1}/${settings.rounds} ${scenario.label.padEnd(7)} ${String(sample.reqPerSec).padStart(6)} req/s  ${sample.cpuUsPerRequest ?? '–'} µs CPU/req (node ${sample.nodeCpuUsPerRequest ?? '–'})  p50 ${sample.p50Ms} ms  p99 ${sample.p99Ms} ms${sample.non2xx || sample.errors ? `  non-2xx ${sample.non2xx} errors ${sample.errors}` : ''}`)
    }
    // Growth from round to round would be a leak; a plateau is the heap V8 keeps for the load.
    const memory = await sides.kit.process.send<MemorySample>({ cmd: 'memory' })
    const peer = sides.nest ? await sides.nest.process.send<MemorySample>({ cmd: 'memory' }) : undefined
    log(`after round ${r + 1}: rss ${memory.rssMB} MB, heap used ${memory.heapUsedMB} MB${peer ? ` (NestJS peer: rss ${peer.rssMB} MB, heap used ${peer.heapUsedMB} MB)` : ''}`)
  }
  return samples
}

/** What the matched load was, for the report: the pairs and how long each ran. */
const matchedLoadLine = (all: Scenario[]) => `${MATCHED_LOAD.filter((pair) => all.some((s) => s.key === pair.kit)).map((pair) => [pair.kit, pair.nest].map((key) => all.find((s) => s.key === key)?.label).filter(Boolean).join('/')).join(', ')}: ${settings.rounds} interleaved rounds of ${settings.seconds} s per scenario at ${settings.connections} connections`

/** Issue 51's memory figures of one server (test/bench/memory-load.ts). */
type MemoryPhase = Pick<NonNullable<BenchResults['nest']>, 'memoryAfterLoad' | 'memoryAfterLoadLive' | 'memoryThroughLoad' | 'memoryAfterIdle' | 'memoryByScenario' | 'memoryThroughOthers'>

/**
 * Issue 51, before the throughput rounds: both servers under the same load (MATCHED_LOAD: the scenarios
 * both serve, paired, interleaved, each run for the same seconds), RSS sampled from /proc every 250 ms
 * from the second round on; read once more after the load (CPU settled); then each server's other
 * scenarios, once each, sampled apart; then the idle pause and a full GC (both servers, the same steps).
 */
async function measureMemory (sides: Sides, all: Scenario[]): Promise<{ kit: MemoryPhase, nest?: MemoryPhase }> {
  const matched = roundOrder(all.filter((scenario) => MATCHED_KEYS.has(scenario.key)), 0)
  const others = all.filter((scenario) => !MATCHED_KEYS.has(scenario.key))
  const pids = { kit: sides.kit.process.child.pid!, ...(sides.nest ? { nest: sides.nest.process.child.pid! } : {}) }
  const run = async (scenario: Scenario) => {
    const side = sideOf(sides, scenario)
    const sample = await fire(side.ready, scenario, settings.seconds, side.process.child.pid)
    if (scenario.group === 'write') await side.process.send({ cmd: 'reset-notes' })
    return sample
  }
  const read = async (cmd: 'memory' | 'memory-live') => ({
    kit: await sides.kit.process.send<MemorySample>({ cmd }),
    nest: sides.nest ? await sides.nest.process.send<MemorySample>({ cmd }) : undefined
  })
  log(`memory: the matched load (${matched.map((scenario) => scenario.label).join(', ')}), ${settings.rounds} rounds of ${settings.seconds} s per scenario; RSS sampled from round 2 on`)
  let sampler: ReturnType<typeof sampleResident<'kit' | 'nest'>> | undefined
  for (let r = 0; r < settings.rounds; r++) {
    if (r === 1) sampler = sampleResident<'kit' | 'nest'>(pids)
    for (const scenario of roundOrder(matched, r)) await run(scenario)
  }
  const through = sampler?.stop() ?? {}
  for (const side of [sides.kit, sides.nest]) if (side && cpuAccountingAvailable) await settle(side.process.child.pid!)
  const afterLoad = await read('memory')
  log(`memory through the matched load, median RSS: kit ${through.kit?.medianMB} MB (${through.kit?.minMB}–${through.kit?.maxMB})${through.nest ? `, NestJS peer ${through.nest.medianMB} MB (${through.nest.minMB}–${through.nest.maxMB})` : ''}; after it: kit ${afterLoad.kit.rssMB} MB${afterLoad.nest ? `, peer ${afterLoad.nest.rssMB} MB` : ''}`)
  const byScenario: { kit: Record<string, MemorySample>, nest: Record<string, MemorySample> } = { kit: {}, nest: {} }
  const othersSampler = sampleResident<'kit' | 'nest'>(pids)
  for (const scenario of roundOrder(others, 0)) {
    await run(scenario)
    byScenario[scenario.server ?? 'kit'][scenario.key] = await sideOf(sides, scenario).process.send<MemorySample>({ cmd: 'memory' })
  }
  const throughOthers = others.length > 0 ? othersSampler.stop() : (othersSampler.stop(), {})
  // The idle target is the kit's own (back near its boot figure): read after all of its load, as before the comparison was matched.
  log(`idle for ${settings.idleSeconds} s before reading memory again`)
  await sleep(settings.idleSeconds * 1000)
  const afterIdle = await read('memory')
  const live = await read('memory-live')
  log(`after ${settings.idleSeconds} s idle: kit ${afterIdle.kit.rssMB} MB${afterIdle.nest ? `, peer ${afterIdle.nest.rssMB} MB` : ''}; after a full GC, heap used: kit ${live.kit.heapUsedMB} MB${live.nest ? `, peer ${live.nest.heapUsedMB} MB` : ''}`)
  const phase = (name: 'kit' | 'nest'): MemoryPhase => ({
    memoryAfterLoad: afterLoad[name]!,
    memoryAfterLoadLive: live[name],
    memoryThroughLoad: through[name],
    memoryAfterIdle: afterIdle[name],
    memoryByScenario: byScenario[name],
    memoryThroughOthers: others.some((scenario) => (scenario.server ?? 'kit') === name) ? throughOthers[name] : undefined
  })
  return { kit: phase('kit'), ...(sides.nest ? { nest: phase('nest') } : {}) }
}

async function profileScenarios (sides: Sides, all: Scenario[]): Promise<Record<string, ScenarioProfile>> {
  const profiles: Record<string, ScenarioProfile> = {}
  for (const scenario of all) {
    const file = path.join(PROFILES_DIR, `${scenario.key}.cpuprofile`)
    const { process: server, ready } = sideOf(sides, scenario)
    await server.send({ cmd: 'profile-start' })
    const load = await fire(ready, scenario, settings.profileSeconds)
    await server.send({ cmd: 'profile-stop', file })
    if (scenario.group === 'write') await server.send({ cmd: 'reset-notes' })
    const summary = await summariseProfile(file)
    const requests = Math.max(1, load.requests)
    profiles[scenario.key] = {
      ...summary,
      requests: load.requests,
      reqPerSec: load.reqPerSec,
      cpuUsPerRequest: round(1000 * summary.busyMs / requests),
      ownerUsPerRequest: Object.fromEntries(summary.byOwner.map((owner) => [owner.origin, round(1000 * owner.ms / requests)]))
    }
    log(`profiled ${scenario.label}: server busy ${profiles[scenario.key].cpuUsPerRequest} µs per request, ${summary.kitOwnedPct}% of it in kit code`)
  }
  return profiles
}

function summarise (all: Scenario[], samples: Map<string, RoundSample[]>): { scenarios: ScenarioResult[], ratios: RatioResult[] } {
  const scenarios = all.map((scenario): ScenarioResult => {
    const rounds = samples.get(scenario.key)!
    return {
      key: scenario.key,
      label: scenario.label,
      title: scenario.title,
      request: `${scenario.method} ${scenario.path}`,
      credentials: scenario.credentials,
      reqPerSec: median(rounds.map((s) => s.reqPerSec)),
      cpuUsPerRequest: rounds.some((s) => s.cpuUsPerRequest === null) ? null : median(rounds.map((s) => s.cpuUsPerRequest!)),
      p50Ms: median(rounds.map((s) => s.p50Ms)),
      p99Ms: median(rounds.map((s) => s.p99Ms)),
      non2xx: rounds.reduce((sum, s) => sum + s.non2xx, 0),
      errors: rounds.reduce((sum, s) => sum + s.errors, 0),
      rounds
    }
  })
  const byKey = new Map(scenarios.map((scenario) => [scenario.key, scenario]))
  const ratios = RATIOS.filter((spec) => byKey.has(spec.over) && byKey.has(spec.under)).map((spec): RatioResult => {
    const over = byKey.get(spec.over)!
    const under = byKey.get(spec.under)!
    // Each round's pair ran minutes apart at most: the median of per-round ratios resists drift better than a ratio of medians.
    const perRound = over.rounds.map((sample, i) => sample.reqPerSec / under.rounds[i].reqPerSec)
    const value = median(perRound)
    // Cost form: how many times cheaper per request over is than under.
    const cpuRounds = over.rounds.map((sample, i) => sample.cpuUsPerRequest && under.rounds[i].cpuUsPerRequest ? under.rounds[i].cpuUsPerRequest! / sample.cpuUsPerRequest : NaN)
    const cpuValue = cpuRounds.some(Number.isNaN) ? undefined : median(cpuRounds)
    // Tail latency, over's p99 ÷ under's (lower is better): the median of the per-round ratios.
    const p99Value = median(over.rounds.map((sample, i) => sample.p99Ms / under.rounds[i].p99Ms))
    return {
      ...spec,
      p99: { value: round(p99Value, 2), met: spec.p99Within === undefined ? undefined : p99Value <= spec.p99Within },
      value: round(value, 2),
      ofMedians: round(over.reqPerSec / under.reqPerSec, 2),
      min: round(Math.min(...perRound), 2),
      max: round(Math.max(...perRound), 2),
      met: spec.target === undefined ? undefined : value >= spec.target,
      designMet: spec.designTarget === undefined ? undefined : value >= spec.designTarget,
      cpu: cpuValue === undefined
        ? null
        : {
            value: round(cpuValue, 2),
            min: round(Math.min(...cpuRounds), 2),
            max: round(Math.max(...cpuRounds), 2),
            met: spec.target === undefined ? undefined : cpuValue >= spec.target,
            designMet: spec.designTarget === undefined ? undefined : cpuValue >= spec.designTarget
          }
    }
  })
  return { scenarios, ratios }
}

// ---------------------------------------------------------------------- scale

/** Runs one bench child (tsx, pinned to the server's core) and parses the JSON line it prints after `mark`. */
function runMarkedChild<T> (script: string, args: string[], mark: string, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(BENCH_DIR, script), args, {
      cwd: ROOT, execArgv: TSX, stdio: ['ignore', 'pipe', 'pipe', 'ipc']
    })
    if (cores) pin(child.pid!, cores.server)
    let output = ''
    child.stdout!.on('data', (chunk) => { output += chunk })
    child.stderr!.on('data', (chunk) => { output += chunk })
    const timer = setTimeout(() => child.kill('SIGTERM'), 180_000)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      const line = output.split('\n').find((text) => text.startsWith(mark))
      if (code === 0 && line) resolve(JSON.parse(line.slice(mark.length)) as T)
      else reject(new Error(`${what} failed (${signal ?? code}):\n${output.slice(-3000)}`))
    })
  })
}

const runScaleChild = (functions: number, dataDir: string, profileFile?: string) => runMarkedChild<ScaleSample>(
  'scale.ts', [String(functions), dataDir, ...(profileFile ? [profileFile] : [])], SCALE_RESULT_MARK, `scale run with ${functions} functions`)

const runBareRoutesChild = (functions: number) => runMarkedChild<BareRoutesSample>(
  'bare-routes.ts', [String(functions)], BARE_ROUTES_RESULT_MARK, `bare Fastify run with ${functions} functions' routes`)

/** The sizes of issue 51's boot ratio: the kit with 0 and with 1000 functions, and bare Fastify with 1000's routes. */
const RATIO_SIZES = [0, 1000]

async function measureScale (): Promise<ScaleResult> {
  const dir = tempDir('fpk-bench-scale-')
  const dataDir = path.join(dir, 'postgres')
  try {
    log('scale: first boot creates the database cluster (not measured)')
    await runScaleChild(0, dataDir)
    const samples: ScaleSample[] = []
    const bareSamples: BareRoutesSample[] = []
    const logKit = (sample: ScaleSample) => log(`scale: ${String(sample.functions).padStart(4)} functions  boot ${sample.bootMs.toFixed(0)} ms (CPU ${sample.bootCpuMs?.toFixed(0) ?? '?'} ms)  routes ${sample.declaredRoutes} in ${sample.routeSpanMs.toFixed(0)} ms  docs ${sample.docsFirstMs === null ? 'n/a' : `${sample.docsFirstMs.toFixed(0)} ms`}  rss ${sample.memory.rssMB} MB`)
    const logBare = (bare: BareRoutesSample) => log(`scale: ${String(bare.functions).padStart(4)} functions  bare Fastify with the same ${bare.routes} routes ${bare.bootMs.toFixed(0)} ms (CPU ${bare.bootCpuMs.toFixed(0)} ms)`)
    const ratioMeasured = RATIO_SIZES.every((size) => settings.scaleSizes.includes(size))
    const ratioRounds: BootRatioRound[] = []
    const rounds = Math.max(settings.scaleRepeats, ratioMeasured ? settings.scaleRatioRounds : 0)
    for (let repeat = 0; repeat < rounds; repeat++) {
      // Issue 51's three processes back to back, in an order that alternates: one ratio per round.
      if (ratioMeasured && repeat < settings.scaleRatioRounds) ratioRounds.push(await ratioRound(repeat, dataDir, samples, bareSamples, logKit, logBare))
      if (repeat >= settings.scaleRepeats) continue
      const others = settings.scaleSizes.filter((size) => !ratioMeasured || !RATIO_SIZES.includes(size))
      const sizes = repeat % 2 === 0 ? others : [...others].reverse()
      for (const functions of sizes) {
        const sample = await runScaleChild(functions, dataDir)
        samples.push(sample)
        logKit(sample)
        if (functions === 0) continue
        const bare = await runBareRoutesChild(functions)
        bareSamples.push(bare)
        logBare(bare)
      }
    }
    let bootProfile: ProfileSummary | undefined
    if (settings.profile) {
      const largest = Math.max(...settings.scaleSizes)
      const file = path.join(PROFILES_DIR, `boot-${largest}.cpuprofile`)
      await runScaleChild(largest, dataDir, file)
      bootProfile = await summariseProfile(file, 12)
      log(`scale: profiled a boot with ${largest} functions`)
    }
    const sizes = settings.scaleSizes.map((functions) => {
      const mine = samples.filter((sample) => sample.functions === functions)
      const docs = mine.map((sample) => sample.docsFirstMs).filter((ms): ms is number => ms !== null)
      const bare = bareSamples.filter((sample) => sample.functions === functions)
      return {
        functions,
        declaredRoutes: mine[0].declaredRoutes,
        bootMs: round(median(mine.map((sample) => sample.bootMs))),
        routeSpanMs: round(median(mine.map((sample) => sample.routeSpanMs)), 1),
        declareMs: round(median(mine.map((sample) => sample.declareMs)), 1),
        docsFirstMs: docs.length > 0 ? round(median(docs)) : null,
        docsSecondMs: docs.length > 0 ? round(median(mine.map((sample) => sample.docsSecondMs ?? NaN))) : null,
        docsBytes: mine[0].docsBytes,
        rssMB: round(median(mine.map((sample) => sample.memory.rssMB)), 1),
        heapUsedMB: round(median(mine.map((sample) => sample.memory.heapUsedMB)), 1),
        bareFastifyMs: bare.length > 0 ? round(median(bare.map((sample) => sample.bootMs))) : null,
        bootCpuMs: round(median(mine.map((sample) => sample.bootCpuMs ?? NaN))),
        bareFastifyCpuMs: bare.length > 0 ? round(median(bare.map((sample) => sample.bootCpuMs))) : null
      }
    })
    const docsNote = samples.find((sample) => sample.docsNote)?.docsNote
    const bootRatio = ratioRounds.length > 0 ? bootRatioOfRounds(ratioRounds, bareSamples.find((sample) => sample.functions === 1000)!.routes) : undefined
    return { repeats: settings.scaleRepeats, sizes, samples, growth: growthOf(sizes), ...(docsNote ? { docsNote } : {}), bootProfile, ...(bootRatio ? { bootRatio } : {}) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The orders a boot-ratio round runs its three processes in, taken in turn: each process is first, middle and last as often. */
const RATIO_ORDERS: Array<BootRatioRound['order']> = [
  ['kit0', 'kit1000', 'bare'], ['bare', 'kit1000', 'kit0'], ['kit1000', 'bare', 'kit0'], ['kit0', 'bare', 'kit1000'], ['bare', 'kit0', 'kit1000'], ['kit1000', 'kit0', 'bare']
]

/** One round of issue 51's boot ratio: the kit with 0 and 1000 functions and bare Fastify with 1000's routes, back to back. */
async function ratioRound (index: number, dataDir: string, samples: ScaleSample[], bareSamples: BareRoutesSample[],
  logKit: (sample: ScaleSample) => void, logBare: (sample: BareRoutesSample) => void): Promise<BootRatioRound> {
  const order = RATIO_ORDERS[index % RATIO_ORDERS.length]
  const ran: Partial<Record<BootRatioRound['order'][number], { wall: number, cpu: number }>> = {}
  for (const kind of order) {
    if (kind === 'bare') {
      const bare = await runBareRoutesChild(1000)
      bareSamples.push(bare)
      logBare(bare)
      ran.bare = { wall: bare.bootMs, cpu: bare.bootCpuMs }
    } else {
      const sample = await runScaleChild(kind === 'kit0' ? 0 : 1000, dataDir)
      samples.push(sample)
      logKit(sample)
      ran[kind] = { wall: sample.bootMs, cpu: sample.bootCpuMs ?? NaN }
    }
  }
  const of = (measure: 'wall' | 'cpu') => {
    const kit0 = ran.kit0![measure]
    const kit1000 = ran.kit1000![measure]
    const bare = ran.bare![measure]
    return { kit0: round(kit0), kit1000: round(kit1000), bare: round(bare), ratio: round((kit1000 - kit0) / bare, 3) }
  }
  const result = { order, wall: of('wall'), cpu: of('cpu') }
  log(`scale: boot ratio, round ${index + 1} (${order.join(', ')}): CPU ${result.cpu.ratio.toFixed(2)}×, wall ${result.wall.ratio.toFixed(2)}×`)
  return result
}

/** The median of the rounds' ratios with the lowest and highest, and the medians of the extra and of bare Fastify beside them. */
function bootRatioOfRounds (rounds: BootRatioRound[], routes: number): BootRatioRounds {
  const over = (measure: 'wall' | 'cpu') => {
    const ratios = rounds.map((one) => one[measure].ratio)
    return {
      median: round(median(ratios), 3),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      extraMs: round(median(rounds.map((one) => one[measure].kit1000 - one[measure].kit0))),
      bareMs: round(median(rounds.map((one) => one[measure].bare)))
    }
  }
  return { rounds, routes, wall: over('wall'), cpu: over('cpu') }
}

/** Cost per function above the 0-function baseline, and whether 10× the functions costs more than 10× the time. */
function growthOf (sizes: ScaleResult['sizes']): ScaleResult['growth'] {
  const base = sizes.find((size) => size.functions === 0)!
  const measured = sizes.filter((size) => size.functions > 0)
  const perFunction = (metric: (size: ScaleResult['sizes'][number]) => number | null) => measured.map((size) => {
    const value = metric(size)
    const zero = metric(base)
    return { functions: size.functions, msPerFunction: value === null || zero === null ? null : round((value - zero) / size.functions, 3) }
  })
  // The two largest sizes: their per-function costs are the least blurred by boot-to-boot noise.
  const [smaller, larger] = measured.slice(-2).map((size) => size.functions)
  const ratio = (series: Array<{ functions: number, msPerFunction: number | null }>) => {
    const low = series.find((point) => point.functions === smaller)?.msPerFunction
    const high = series.find((point) => point.functions === larger)?.msPerFunction
    return low && high && low > 0 ? round(high / low, 2) : null
  }
  const boot = perFunction((size) => size.bootMs)
  const routes = perFunction((size) => size.routeSpanMs)
  const docs = perFunction((size) => size.docsFirstMs)
  const rss = measured.map((size) => ({ functions: size.functions, kbPerFunction: round(1024 * (size.rssMB - base.rssMB) / size.functions, 1) }))
  return { boot, routes, docs, rss, compared: [smaller, larger], bootRatio: ratio(boot), routesRatio: ratio(routes), docsRatio: ratio(docs) }
}

// ----------------------------------------------------------------------- main

function gitCommit (): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    // The results of an earlier run are no change to the code measured.
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!test/bench/results'], { cwd: ROOT, encoding: 'utf8' }).trim() !== ''
    return dirty ? `${commit} (with uncommitted changes)` : commit
  } catch {
    return 'unknown'
  }
}

async function main (): Promise<void> {
  log(`settings: ${settings.connections} connections, ${settings.seconds} s per run, ${settings.rounds} interleaved rounds${quick ? ' (quick)' : ''}`)
  const server = new ServerProcess(path.join(RESULTS_DIR, 'server.log'))
  const nestEntry = settings.nest ? buildNestPeer(log) : undefined
  const nest = nestEntry ? new ServerProcess(path.join(RESULTS_DIR, 'nest-server.log'), nestHostFile(serverEntry.file), [nestEntry]) : undefined
  let ready: ServerReady
  let nestReady: ServerReady | undefined
  let samples: Map<string, RoundSample[]> | undefined
  let profiles: Record<string, ScenarioProfile> | undefined
  let memory: Awaited<ReturnType<typeof measureMemory>>
  let all: Scenario[]
  try {
    ready = await server.ready
    log(`server up at ${ready.origin} in ${ready.bootMs.toFixed(0)} ms, rss ${ready.memory.rssMB} MB; listNotes made ${ready.requestsPerListNotes} HTTP request(s)`)
    if (ready.requestsPerListNotes !== 1) throw new Error('the SDK inside handlers goes over HTTP: directAccess is not in effect (DESIGN.md pitfall 8)')
    if (nest) {
      nestReady = await nest.ready
      log(`NestJS peer up at ${nestReady.origin} in ${nestReady.bootMs.toFixed(0)} ms (its own PostgreSQL included), rss ${nestReady.memory.rssMB} MB`)
    }
    const sides: Sides = { kit: { process: server, ready }, ...(nest && nestReady ? { nest: { process: nest, ready: nestReady } } : {}) }
    all = buildScenarios(ready, nestReady).filter((scenario) => !only || only.includes(scenario.key) || only.includes(scenario.label))
    if (all.length === 0) throw new Error(`--only=${only?.join(',')} matches no scenario`)
    for (const scenario of all) await sanityCheck(sideOf(sides, scenario).ready, scenario)
    memory = await measureMemory(sides, all)
    if (!memoryOnly) samples = await measureThroughput(sides, all)
    if (settings.profile) profiles = await profileScenarios(sides, all)
  } finally {
    await Promise.all([server.close(), nest?.close()])
  }
  const dataSize = settings.dataSize ? await measureDataSizeApart(settings.dataSize) : undefined
  const scale = settings.scale ? await measureScale() : undefined
  const ratioLine = bootRatioLine(scale)
  if (ratioLine) log(ratioLine)
  const bootModels = settings.scale ? await measureBootModels([10, 200], settings.scaleRepeats, log) : undefined
  const rateLimitStore = args.has('--no-rate-limit-store') || memoryOnly ? undefined : await measureRateLimitStore(settings, log)

  const queue = args.has('--no-queue') || memoryOnly ? undefined : await measureQueue(settings.queueJobs, settings.queueArmSeconds, log)
  const { scenarios, ratios } = samples ? summarise(all, samples) : { scenarios: [], ratios: [] }
  const results: BenchResults = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    environment: {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGB: round(os.totalmem() / 2 ** 30, 1),
      loadAverageBefore: loadBefore.map((value) => round(value, 2)),
      loadAverageAfter: os.loadavg().map((value) => round(value, 2)),
      note: cores
        ? `Pinned with taskset: the server and its PostgreSQL on core(s) ${cores.server}, the load generator (autocannon, a separate process) on core(s) ${cores.load}.`
        : `Not pinned (${os.cpus().length} core(s) or no taskset): server, PostgreSQL and load generator share the cores; the load generator is a separate process (autocannon).`,
      pinned: cores ?? null
    },
    settings: { connections: settings.connections, seconds: settings.seconds, rounds: settings.rounds, warmupSeconds: settings.warmupSeconds, pipelining: 1, fsync: process.env.BENCH_FSYNC === '1', quick },
    server: {
      bootMs: round(ready.bootMs), runtime: serverEntry.file.endsWith('.js') ? 'compiled' : 'tsx', memoryAfterBoot: ready.memory, requestsPerListNotes: ready.requestsPerListNotes, baselineSql: ready.baselineSql,
      ...memory.kit, idleSeconds: settings.idleSeconds, matchedLoad: matchedLoadLine(all)
    },
    ...(nestReady && memory.nest
      ? { nest: { bootMs: round(nestReady.bootMs), memoryAfterBoot: nestReady.memory, ...memory.nest, idleSeconds: settings.idleSeconds } }
      : {}),
    ...(process.env.BENCH_NOTE ? { note: process.env.BENCH_NOTE } : {}),
    scenarios,
    ratios,
    queue,
    profiles,
    scale,
    dataSize,
    durationSeconds: 0
  }
  results.durationSeconds = round((performance.now() - began) / 1000)
  if (memoryOnly) {
    process.stdout.write(`\nMemory (issue 51), load average before/after ${loadBefore.map((value) => value.toFixed(2)).join(', ')} / ${results.environment.loadAverageAfter.join(', ')}:\n${memoryRows({ ...results, scenarios: all }).join('\n')}\n`)
    log(`done in ${results.durationSeconds} s (--memory-only: latest.* untouched)`)
    return
  }
  const markdown = renderMarkdown(results) + bootModelsMarkdown(bootModels) + rateLimitStoreMarkdown(rateLimitStore)
  writeFileSync(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify({ ...results, bootModels, rateLimitStore }, null, 2) + '\n')
  writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown)
  process.stdout.write(markdown)
  // Issue 51's rows once more at the very end, with their targets.
  process.stdout.write(`\nMemory (issue 51):\n${memoryRows(results).join('\n')}\n${bootRatioLine(scale) ?? 'boot ratio: not measured (--no-scale)'}\n\nQueue (issue 50):\n${queueRows(queue).join('\n')}\n`)
  log(`done in ${results.durationSeconds} s: ${path.relative(ROOT, path.join(RESULTS_DIR, 'latest.md'))} and latest.json`)
}

/** Rewrites latest.md from latest.json (after a change to the report's layout). */
function renderOnly (): void {
  const results = JSON.parse(readFileSync(path.join(RESULTS_DIR, 'latest.json'), 'utf8')) as BenchResults & { rateLimitStore?: RateLimitStoreOutcome, bootModels?: BootModelsResult }
  const markdown = renderMarkdown(results) + bootModelsMarkdown(results.bootModels) + rateLimitStoreMarkdown(results.rateLimitStore)
  writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown)
  process.stdout.write(markdown)
}

/** Warm boot with many models (issue 46), a section of latest.md. */
function bootModelsMarkdown (result: BootModelsResult | undefined): string {
  if (!result) return ''
  return '\n## Warm boot with many models\n\nEach boot in a fresh process on an embedded PostgreSQL that already holds the generated models ' +
    '(three fields, an indexed field, a compound index and a class-level permission each); CPU of the Node.js process across register + ready, ' +
    'statements counted at Parse\'s pool (test/bench/boot-models.ts).\n\n' + formatBootModels(result) + '\n'
}

/** Only the scale part (boot time, CPU and memory by number of functions; warm boot by number of models): printed, latest.* left as they are. */
async function scaleOnly (): Promise<void> {
  const bootModels = await measureBootModels([10, 200], settings.scaleRepeats, log)
  process.stdout.write(bootModelsMarkdown(bootModels) + '\n')
  const scale = await measureScale()
  const base = scale.sizes[0]
  const cpu = (functions: number) => round(median(scale.samples.filter((sample) => sample.functions === functions).map((sample) => sample.bootCpuMs ?? NaN)))
  process.stdout.write('| functions | routes | boot ms | above 0 | boot CPU ms | above 0 | routes ms | bare Fastify, same routes, ms | RSS MB | heap MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n')
  for (const size of scale.sizes) {
    process.stdout.write(`| ${size.functions} | ${size.declaredRoutes} | ${size.bootMs} | ${size.bootMs - base.bootMs} | ${cpu(size.functions)} | ${cpu(size.functions) - cpu(base.functions)} | ${size.routeSpanMs} | ${size.bareFastifyMs ?? '–'} | ${size.rssMB} | ${size.heapUsedMB} |\n`)
  }
  if (scale.bootRatio) process.stdout.write(`\n${bootRatioRows(scale.bootRatio).join('\n')}\n`)
  const ratio = bootRatioLine(scale)
  if (ratio) process.stdout.write(`\n${ratio}\n`)
}

const captureSqlOf = (server: ServerProcess) => (path: string, headers: Record<string, string>) => server.send<string[]>({ cmd: 'capture-sql', path, headers })

/**
 * The data-size scenario on servers of its own (fresh ones, LiveQuery on Note for the fan-out),
 * so that filling their tables and the LiveQuery publish cost touch no other scenario.
 */
async function measureDataSizeApart (dataSettings: NonNullable<typeof settings.dataSize>): Promise<DataSizeResult> {
  const liveQuery = process.env.BENCH_LIVE_QUERY
  process.env.BENCH_LIVE_QUERY ??= '1' // read by the server process when it is forked
  const server = new ServerProcess(path.join(RESULTS_DIR, 'data-size-server.log'))
  if (liveQuery === undefined) delete process.env.BENCH_LIVE_QUERY
  const nestEntry = settings.nest ? buildNestPeer(log) : undefined
  const nest = nestEntry ? new ServerProcess(path.join(RESULTS_DIR, 'data-size-nest-server.log'), nestHostFile(serverEntry.file), [nestEntry]) : undefined
  try {
    return await measureDataSize(await server.ready, nest ? await nest.ready : undefined, dataSettings, log, captureSqlOf(server))
  } finally {
    await Promise.all([server.close(), nest?.close()])
  }
}

/** Only the data-size scenario: printed and written to results/data-size.json, latest.* left as they are. */
async function dataSizeOnly (): Promise<void> {
  const result = await measureDataSizeApart(dataSizeSettings(quick))
  writeFileSync(path.join(RESULTS_DIR, 'data-size.json'), JSON.stringify(result, null, 2) + '\n')
  process.stdout.write(dataSizeMarkdown(result))
}

/** --queue-only: the queue part alone, printed; latest.* untouched. */
async function queueOnly (): Promise<void> {
  const queue = await measureQueue(settings.queueJobs, settings.queueArmSeconds)
  process.stdout.write(`\nQueue (issue 50):\n${queueRows(queue).join('\n')}\n`)
}

const run = args.has('--queue-only') ? queueOnly() : args.has('--render') ? Promise.resolve().then(renderOnly) : args.has('--scale-only') ? scaleOnly() : args.has('--data-size-only') ? dataSizeOnly() : main()
run.catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})

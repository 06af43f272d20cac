// The shape of results/latest.json and its Markdown rendering (results/latest.md).
import type { ProfileSummary } from './analyze.js'
import type { RssSpread } from './memory-load.js'
import type { MemorySample, ScaleSample } from './shared.js'
import type { RatioSpec } from './scenarios.js'
import { dataSizeMarkdown, type DataSizeResult } from './data-size-report.js'

export interface RoundSample {
  reqPerSec: number
  /** CPU time of the server process and its PostgreSQL (postmaster + backends) per answered request, µs; null without /proc. */
  cpuUsPerRequest: number | null
  /** The part of cpuUsPerRequest spent by the server's node process alone (the rest is PostgreSQL), µs. */
  nodeCpuUsPerRequest?: number | null
  p50Ms: number
  p99Ms: number
  requests: number
  non2xx: number
  errors: number
}

export interface ScenarioResult {
  key: string
  label: string
  title: string
  request: string
  credentials: string
  /** Medians over the rounds. */
  reqPerSec: number
  cpuUsPerRequest: number | null
  p50Ms: number
  p99Ms: number
  non2xx: number
  errors: number
  rounds: RoundSample[]
}

export interface RatioResult extends RatioSpec {
  /** Median of the per-round ratios. */
  value: number
  /** Ratio of the median req/s, for comparison. */
  ofMedians: number
  min: number
  max: number
  met?: boolean
  designMet?: boolean
  /** The same ratio from CPU cost: under's CPU per request ÷ over's (higher is better, like req/s). */
  cpu: { value: number, min: number, max: number, met?: boolean, designMet?: boolean } | null
  /** over's p99 ÷ under's (lower is better); met against p99Within when the ratio has one. */
  p99?: { value: number, met?: boolean }
}

interface ScaleSize {
  functions: number
  declaredRoutes: number
  bootMs: number
  routeSpanMs: number
  declareMs: number
  docsFirstMs: number | null
  docsSecondMs: number | null
  docsBytes: number | null
  rssMB: number
  heapUsedMB: number
  /** Bare Fastify registering the same routes, register → ready (bare-routes.ts); absent in older results. */
  bareFastifyMs?: number | null
  /** CPU time of the boot (process.cpuUsage, register → ready), median; absent in older results. */
  bootCpuMs?: number | null
  bareFastifyCpuMs?: number | null
}

/** One round of the boot ratio: the kit with 0 and with 1000 functions and bare Fastify with the same routes, three processes back to back. */
export interface BootRatioRound {
  /** The order the three processes ran in (it alternates from round to round). */
  order: Array<'kit0' | 'kit1000' | 'bare'>
  wall: { kit0: number, kit1000: number, bare: number, ratio: number }
  cpu: { kit0: number, kit1000: number, bare: number, ratio: number }
}

/** A ratio over rounds: the median of the per-round ratios, with the lowest and highest round. */
export interface RoundRatio { median: number, min: number, max: number, extraMs: number, bareMs: number }

/** Issue 51's boot ratio, from rounds of back-to-back processes. */
export interface BootRatioRounds {
  rounds: BootRatioRound[]
  routes: number
  wall: RoundRatio
  cpu: RoundRatio
}

type PerFunction = Array<{ functions: number, msPerFunction: number | null }>

export interface ScaleResult {
  repeats: number
  sizes: ScaleSize[]
  samples: ScaleSample[]
  growth: {
    boot: PerFunction
    routes: PerFunction
    docs: PerFunction
    rss: Array<{ functions: number, kbPerFunction: number }>
    /** The two sizes compared (the largest two). */
    compared: number[]
    /** Cost per function at the larger size ÷ at the smaller: about 1 when cost grows linearly, well above 1 when it grows faster. */
    bootRatio: number | null
    routesRatio: number | null
    docsRatio: number | null
  }
  docsNote?: string
  bootProfile?: ProfileSummary
  /** The boot ratio's rounds (absent in older results: the ratio is then read from the medians by size). */
  bootRatio?: BootRatioRounds
}

/** A scenario's CPU profile, with the load that ran while it was taken. */
export interface ScenarioProfile extends ProfileSummary {
  requests: number
  reqPerSec: number
  /** Server main-thread busy time per request (non-idle samples ÷ requests), in µs. */
  cpuUsPerRequest: number
  ownerUsPerRequest: Record<string, number>
}

/**
 * Issue 51: a server's memory under the matched load (test/bench/memory-load.ts), after the idle pause that
 * follows it, and after each of its other scenarios (run after the comparison, once each).
 */
export interface MemoryStages {
  /** RSS sampled every 250 ms through the matched load's rounds 2 and on: what the target compares. */
  memoryThroughLoad?: RssSpread
  /** RSS sampled through the server's other scenarios (those the other server does not serve). */
  memoryThroughOthers?: RssSpread
  memoryByScenario?: Record<string, MemorySample>
  memoryAfterIdle?: MemorySample
  /** How long the idle pause was (60 s unless BENCH_IDLE_SECONDS or --quick). */
  idleSeconds?: number
}

/** Issue 51's targets: the kit's RSS against the NestJS peer's, and back near the boot figure after the idle pause. */
export const MEMORY_TARGETS = { afterBootVsNest: 1.2, afterLoadVsNest: 1.3, idleWithinOfBoot: 0.1 }
/** Issue 51: the kit's boot cost for 1000 functions ÷ bare Fastify's for the same routes. */
export const BOOT_RATIO_TARGET = 1.3

/**
 * Issue 51's boot ratio: (kit boot with 1000 functions − kit boot with 0) ÷ bare Fastify registering the same
 * routes, measured in the same run; null when not measured. The target reads CPU time (process.cpuUsage of the
 * booting process, register → ready()), the median of the rounds' ratios: a boot is one thread's work, and
 * CPU time is what a loaded machine barely moves, where wall time also counts the time the process waited
 * for a core. Older results without rounds are read from the wall-time medians by size.
 */
export function bootRatioOf (scale: ScaleResult | undefined): { ratio: number, extraMs: number, bareMs: number, routes: number, basis: 'cpu' | 'wall', min?: number, max?: number, rounds?: number, wall?: RoundRatio } | null {
  const rounds = scale?.bootRatio
  if (rounds && rounds.rounds.length > 0) {
    const { cpu, wall } = rounds
    return { ratio: cpu.median, extraMs: cpu.extraMs, bareMs: cpu.bareMs, routes: rounds.routes, basis: 'cpu', min: cpu.min, max: cpu.max, rounds: rounds.rounds.length, wall }
  }
  const zero = scale?.sizes.find((size) => size.functions === 0)
  const thousand = scale?.sizes.find((size) => size.functions === 1000)
  if (!zero || !thousand?.bareFastifyMs) return null
  const extraMs = thousand.bootMs - zero.bootMs
  return { ratio: extraMs / thousand.bareFastifyMs, extraMs, bareMs: thousand.bareFastifyMs, routes: thousand.declaredRoutes, basis: 'wall' }
}

/** The RSS that issue 51's "after the load" target compares: the median through the matched load, or (older results) the one reading after the load. */
export function loadRssMB (side: MemoryStages & { memoryAfterLoad: MemorySample }): number {
  return side.memoryThroughLoad?.medianMB ?? side.memoryAfterLoad.rssMB
}

/** The memory rows with their targets (issue 51): printed by the runner and written to latest.md. */
export function memoryRows (results: { server: BenchResults['server'], nest?: BenchResults['nest'], scenarios: Array<{ key: string, label: string }> }): string[] {
  const kit = results.server
  const peer = results.nest
  const mb = (sample: MemorySample | undefined) => sample ? `${fmt(sample.rssMB, 1)} / ${fmt(sample.heapUsedMB, 1)}` : '–'
  const spread = (rss: RssSpread | undefined) => rss ? `${fmt(rss.medianMB, 1)} (${fmt(rss.minMB, 0)}–${fmt(rss.maxMB, 0)})` : '–'
  const ratio = (a: MemorySample | undefined, b: MemorySample | undefined) => a && b ? a.rssMB / b.rssMB : undefined
  const times = (value: number | undefined) => value === undefined ? '–' : `${fmt(value, 2)}×`
  const lines = ['| when | kit RSS / heap used MB | NestJS peer RSS / heap used MB | kit ÷ peer (RSS) | target |', '|---|---:|---:|---:|---|']
  const boot = ratio(kit.memoryAfterBoot, peer?.memoryAfterBoot)
  lines.push(`| after boot | ${mb(kit.memoryAfterBoot)} | ${mb(peer?.memoryAfterBoot)} | ${times(boot)} | ≤ ${MEMORY_TARGETS.afterBootVsNest}×: ${boot === undefined ? 'not measured' : verdict(boot <= MEMORY_TARGETS.afterBootVsNest)} |`)
  const load = peer ? loadRssMB(kit) / loadRssMB(peer) : undefined
  const loadTarget = `≤ ${MEMORY_TARGETS.afterLoadVsNest}×: ${load === undefined ? 'not measured' : verdict(load <= MEMORY_TARGETS.afterLoadVsNest)}`
  if (kit.memoryThroughLoad) {
    lines.push(`| through the matched load (${kit.matchedLoad ?? 'the scenarios both serve'}): RSS every 250 ms from round 2 on, median (min–max) | ${spread(kit.memoryThroughLoad)} | ${spread(peer?.memoryThroughLoad)} | ${times(load)} | ${loadTarget} |`)
    lines.push(`| right after the matched load (one reading, CPU settled) | ${mb(kit.memoryAfterLoad)} | ${mb(peer?.memoryAfterLoad)} | ${times(ratio(kit.memoryAfterLoad, peer?.memoryAfterLoad))} | one point of each GC cycle: not the target's figure |`)
  } else {
    lines.push(`| after the load (all rounds) | ${mb(kit.memoryAfterLoad)} | ${mb(peer?.memoryAfterLoad)} | ${times(load)} | ${loadTarget} |`)
  }
  if (kit.memoryThroughOthers || peer?.memoryThroughOthers) {
    lines.push(`| then each server's other scenarios, once each: RSS median (min–max) | ${spread(kit.memoryThroughOthers)} | ${spread(peer?.memoryThroughOthers)} | not compared: different loads | |`)
  }
  if (kit.memoryAfterIdle) {
    const growth = kit.memoryAfterIdle.rssMB / kit.memoryAfterBoot.rssMB - 1
    const idle = ratio(kit.memoryAfterIdle, peer?.memoryAfterIdle)
    lines.push(`| after ${kit.idleSeconds ?? 60} s idle | ${mb(kit.memoryAfterIdle)} | ${mb(peer?.memoryAfterIdle)} | ${times(idle)} | kit within ${fmt(100 * MEMORY_TARGETS.idleWithinOfBoot)} % of its after-boot RSS: ${growth >= 0 ? '+' : ''}${fmt(100 * growth, 1)} % ${verdict(growth <= MEMORY_TARGETS.idleWithinOfBoot)} |`)
  }
  if (kit.memoryAfterLoadLive) lines.push(`| after a full GC (--expose-gc), read 3 s later | ${mb(kit.memoryAfterLoadLive)} | ${mb(peer?.memoryAfterLoadLive)} | | |`)
  const label = (key: string) => results.scenarios.find((scenario) => scenario.key === key)?.label ?? key
  for (const [key, sample] of Object.entries(kit.memoryByScenario ?? {})) lines.push(`| after ${label(key)} (${key}) | ${mb(sample)} | | | |`)
  for (const [key, sample] of Object.entries(peer?.memoryByScenario ?? {})) lines.push(`| after ${label(key)} (${key}) | | ${mb(sample)} | | |`)
  return lines
}

/**
 * Rounds whose ratios differ by more than this are flagged beside the verdict: a round differences two boots,
 * each with its own Parse Server and PostgreSQL start, and quiet runs spread 0.6 (nine rounds: 0.94–1.54×); a busy
 * machine spreads them far wider (on the shared
 * 2-core machine at load 20–30, one set read 0.85–1.34× and the next 0.73–2.57×).
 */
export const BOOT_RATIO_SETTLED_SPREAD = 0.4

/** A warning beside the boot ratio when its rounds disagree by more than BOOT_RATIO_SETTLED_SPREAD. */
function unsettled (boot: { min?: number, max?: number }): string {
  if (boot.min === undefined || boot.max === undefined || boot.max - boot.min <= BOOT_RATIO_SETTLED_SPREAD) return ''
  return ` — rounds spread ${fmt(boot.min, 2)}–${fmt(boot.max, 2)}×, wider than ${BOOT_RATIO_SETTLED_SPREAD}: each round's difference of two boots carries two Parse Server and PostgreSQL starts (±50–100 ms even on a quiet machine; more on a busy one), so read the median of several rounds, and of a quiet run`
}

/** The boot ratio's line with its target (issue 51), or undefined when the scale part did not run 0 and 1000 functions. */
export function bootRatioLine (scale: ScaleResult | undefined): string | undefined {
  const boot = bootRatioOf(scale)
  if (!boot) return undefined
  if (boot.basis === 'wall') {
    return `boot of 1000 functions: (kit with 1000 − kit with 0) ÷ bare Fastify with the same ${fmt(boot.routes)} routes = ${fmt(boot.extraMs)} ms ÷ ${fmt(boot.bareMs)} ms = ${fmt(boot.ratio, 2)}× (wall time; target ≤ ${BOOT_RATIO_TARGET}×: ${verdict(boot.ratio <= BOOT_RATIO_TARGET)})`
  }
  const wall = boot.wall!
  return `boot of 1000 functions: (kit with 1000 − kit with 0) ÷ bare Fastify with the same ${fmt(boot.routes)} routes, median of ${boot.rounds} rounds' ratios: ` +
    `CPU ${fmt(boot.ratio, 2)}× (rounds ${fmt(boot.min!, 2)}–${fmt(boot.max!, 2)}×; medians +${fmt(boot.extraMs)} ms ÷ ${fmt(boot.bareMs)} ms; target ≤ ${BOOT_RATIO_TARGET}×: ${verdict(boot.ratio <= BOOT_RATIO_TARGET)}), ` +
    `wall ${fmt(wall.median, 2)}× (rounds ${fmt(wall.min, 2)}–${fmt(wall.max, 2)}×; not the target's figure)${unsettled(boot)}`
}

/** The rounds behind the boot ratio (issue 51), one row each, for latest.md. */
export function bootRatioRows (rounds: BootRatioRounds): string[] {
  const lines = ['| round | order | kit, 0 functions: CPU / wall ms | kit, 1000: CPU / wall ms | bare Fastify, same routes: CPU / wall ms | ratio, CPU | ratio, wall |', '|---:|---|---:|---:|---:|---:|---:|']
  rounds.rounds.forEach((round, index) => {
    const pair = (kind: 'kit0' | 'kit1000' | 'bare') => `${fmt(round.cpu[kind])} / ${fmt(round.wall[kind])}`
    lines.push(`| ${index + 1} | ${round.order.join(' → ')} | ${pair('kit0')} | ${pair('kit1000')} | ${pair('bare')} | ${fmt(round.cpu.ratio, 2)}× | ${fmt(round.wall.ratio, 2)}× |`)
  })
  const spread = (ratio: RoundRatio) => `**${fmt(ratio.median, 2)}×** (${fmt(ratio.min, 2)}–${fmt(ratio.max, 2)})`
  lines.push(`| median (lowest–highest round) | | | | | ${spread(rounds.cpu)} | ${spread(rounds.wall)} |`)
  return lines
}

export interface BenchResults {
  date: string
  commit: string
  environment: { node: string, cpus: number, cpuModel: string, memoryGB: number, loadAverageBefore: number[], loadAverageAfter: number[], note: string, pinned?: { server: string, load: string } | null }
  settings: { connections: number, seconds: number, rounds: number, warmupSeconds: number, pipelining: number, fsync: boolean, quick: boolean }
  server: { bootMs: number, /** How the server ran: compiled by default (as start:prod), tsx with --tsx. */ runtime?: 'compiled' | 'tsx', memoryAfterBoot: MemorySample, memoryAfterLoad: MemorySample, memoryAfterLoadLive?: MemorySample, requestsPerListNotes: number, baselineSql?: { find: string, count: string }, /** The matched load's pairs and length (issue 51). */ matchedLoad?: string } & MemoryStages
  /** The NestJS peer (test/bench/nest/), when it ran: its boot includes starting its own PostgreSQL. */
  nest?: { bootMs: number, memoryAfterBoot: MemorySample, memoryAfterLoad: MemorySample, memoryAfterLoadLive?: MemorySample } & MemoryStages
  /** Said beside the figures when the machine was not quiet (BENCH_NOTE). */
  note?: string
  scenarios: ScenarioResult[]
  ratios: RatioResult[]
  profiles?: Record<string, ScenarioProfile>
  scale?: ScaleResult
  /** The data-size scenario (--data-size), when it ran. */
  dataSize?: DataSizeResult
  /** The queue part (issue 50, test/bench/queue.ts), unless --no-queue. */
  queue?: QueueResult
  durationSeconds: number
}

/** Issue 50's figures: two instances draining queued jobs, and createOrder with the outbox enqueue against afterCommit. */
export interface QueueResult {
  jobs: number
  instances: number
  enqueuedMs: number
  drainedMs: number
  jobsPerSec: number
  ranTwice: number
  lost: number
  mostAtOnce: number[]
  /** createOrder sending the confirmation in a plain afterCommit (in memory): ms per call, sequential. */
  afterCommitMsPerJob: number
  /** Orders of both arms on the enqueue-only instance, all rounds. */
  orders: number
  /** Each arm's seconds in a round (absent in runs from before arms were timed: `orders` was then each arm's count). */
  armSeconds?: number
  /** The orders on an instance that only enqueues (the workers run the confirmations meanwhile). */
  ordersQueuedReqPerSec: number
  ordersAfterCommitReqPerSec: number
  /** Outbox req/s ÷ afterCommit req/s, on the enqueue-only instance: the median of the rounds' paired ratios. */
  outboxRatio: number
  /** The lowest and highest of those rounds' ratios, and how many rounds (absent in runs from before rounds were kept). */
  outboxRounds?: { lowest: number, highest: number, count: number }
  /** The same pair on a worker instance: each order there also pays for a confirmation's job run. */
  workerOrdersQueuedReqPerSec?: number
  workerOrdersAfterCommitReqPerSec?: number
  workerOutboxRatio?: number
}

export const OUTBOX_RATIO_TARGET = 0.85

/** Issue 50's rows with their targets: printed by the runner and written to latest.md. */
export function queueRows (queue: QueueResult | undefined): string[] {
  const lines = ['| queue (issue 50) | measured | target | met |', '|---|---:|---|---|']
  if (!queue) return [...lines, '| queued jobs drained by two instances; createOrder with the outbox | not measured (--no-queue, or a run from before the queue part) | | |']
  const exact = queue.ranTwice === 0 && queue.lost === 0
  lines.push(`| ${fmt(queue.jobs)} queued jobs, ${queue.instances} instances (the job's concurrency: 5 each) | ${queue.ranTwice} run twice, ${queue.lost} lost; at most ${queue.mostAtOnce.join(' / ')} at once | 0 run twice, 0 lost | ${verdict(exact)} |`)
  lines.push(`| drain throughput | ${fmt(queue.jobsPerSec)} jobs/s (${fmt(queue.drainedMs / 1000, 1)} s, enqueue ${fmt(queue.enqueuedMs / 1000, 1)} s) beside plain afterCommit: ${fmt(queue.afterCommitMsPerJob, 1)} ms per createOrder call | reported | – |`)
  const rounds = queue.outboxRounds ? `; median of ${queue.outboxRounds.count} interleaved rounds, lowest ${fmt(queue.outboxRounds.lowest, 2)}×, highest ${fmt(queue.outboxRounds.highest, 2)}×` : ''
  lines.push(`| createOrder with the outbox enqueue ÷ with afterCommit (${queue.armSeconds !== undefined ? `sequential calls, ${fmt(queue.armSeconds, 1)} s per arm a round, ${fmt(queue.orders)} in all` : `${fmt(queue.orders)} sequential calls each`}, on an instance that only enqueues; the two workers run the confirmations meanwhile) | ${fmt(queue.outboxRatio, 2)}× (${fmt(queue.ordersQueuedReqPerSec)} ÷ ${fmt(queue.ordersAfterCommitReqPerSec)} req/s${rounds}) | ≥ ${OUTBOX_RATIO_TARGET}× | ${verdict(queue.outboxRatio >= OUTBOX_RATIO_TARGET)} |`)
  if (queue.workerOutboxRatio !== undefined) {
    lines.push(`| the same on a worker instance (each order there also pays for its confirmation's job run) | ${fmt(queue.workerOutboxRatio, 2)}× (${fmt(queue.workerOrdersQueuedReqPerSec)} ÷ ${fmt(queue.workerOrdersAfterCommitReqPerSec)} req/s) | reported | – |`)
  }
  return lines
}

/** Linear growth shows as a per-function cost ratio near 1; this much above 1 counts as faster than linear. */
const LINEAR_TOLERANCE = 1.5

const fmt = (value: number | null | undefined, digits = 0) => value === null || value === undefined || Number.isNaN(value)
  ? '–'
  : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const verdict = (met: boolean | undefined) => met === undefined ? '' : met ? 'met' : '**not met**'
const cell = (text: string) => text.replace(/\|/g, '\\|')

/** Every target (issues 17 and 33) on one table: the ratios, tail latency, and the boot and memory limits. */
export function targetsTable (results: BenchResults): string[] {
  const lines = ['## Targets (issues 17 and 33)', '', '| target | from | measured | met |', '|---|---|---:|---|']
  for (const r of results.ratios.filter((ratio) => ratio.target !== undefined)) {
    lines.push(`| ${r.key} ${r.label} ≥ ${r.target}× | ${r.source ?? 'issue 17'} | ${fmt(r.value, 2)}× req/s · ${r.cpu ? `${fmt(r.cpu.value, 2)}× CPU` : '–'} | req/s ${verdict(r.met)}; CPU ${r.cpu ? verdict(r.cpu.met) : '–'} |`)
  }
  for (const r of results.ratios.filter((ratio) => ratio.p99Within !== undefined && ratio.p99)) {
    lines.push(`| ${r.key} p99 ≤ ${r.p99Within}× the peer's | ${r.source ?? 'issue 17'} | ${fmt(r.p99!.value, 2)}× | ${verdict(r.p99!.met)} |`)
  }
  const boot = bootRatioOf(results.scale)
  if (boot) {
    const measured = boot.basis === 'cpu'
      ? `${fmt(boot.ratio, 2)}× CPU, median of ${boot.rounds} rounds (${fmt(boot.min!, 2)}–${fmt(boot.max!, 2)}×; +${fmt(boot.extraMs)} ms ÷ ${fmt(boot.bareMs)} ms CPU for ${fmt(boot.routes)} routes) · wall ${fmt(boot.wall!.median, 2)}× (${fmt(boot.wall!.min, 2)}–${fmt(boot.wall!.max, 2)}×)`
      : `${fmt(boot.ratio, 2)}× wall (+${fmt(boot.extraMs / 1000, 2)} s ÷ ${fmt(boot.bareMs / 1000, 2)} s for ${fmt(boot.routes)} routes)`
    lines.push(`| boot: (kit with 1000 functions − with 0) ÷ bare Fastify with the same routes ≤ ${BOOT_RATIO_TARGET}× | issue 51 (restates issues 17, 33's +1.0 s) | ${measured} | ${verdict(boot.ratio <= BOOT_RATIO_TARGET)}${unsettled(boot)} |`)
  } else {
    lines.push(`| boot: (kit with 1000 functions − with 0) ÷ bare Fastify ≤ ${BOOT_RATIO_TARGET}× | issue 51 | not measured (--no-scale or other sizes) | |`)
  }
  const { memoryAfterBoot, memoryAfterIdle } = results.server
  const peer = results.nest
  if (peer) {
    const bootVsPeer = memoryAfterBoot.rssMB / peer.memoryAfterBoot.rssMB
    const loadVsPeer = loadRssMB(results.server) / loadRssMB(peer)
    lines.push(`| RSS after boot ≤ ${MEMORY_TARGETS.afterBootVsNest}× the NestJS peer's | issue 51 | ${fmt(bootVsPeer, 2)}× (${fmt(memoryAfterBoot.rssMB, 1)} ÷ ${fmt(peer.memoryAfterBoot.rssMB, 1)} MB) | ${verdict(bootVsPeer <= MEMORY_TARGETS.afterBootVsNest)} |`)
    lines.push(`| RSS after the load ≤ ${MEMORY_TARGETS.afterLoadVsNest}× the NestJS peer's${results.server.memoryThroughLoad ? ' (median through the matched load)' : ''} | issue 51 | ${fmt(loadVsPeer, 2)}× (${fmt(loadRssMB(results.server), 1)} ÷ ${fmt(loadRssMB(peer), 1)} MB) | ${verdict(loadVsPeer <= MEMORY_TARGETS.afterLoadVsNest)} |`)
  }
  if (memoryAfterIdle) {
    const growth = memoryAfterIdle.rssMB / memoryAfterBoot.rssMB - 1
    lines.push(`| RSS after ${results.server.idleSeconds ?? 60} s idle within ${fmt(100 * MEMORY_TARGETS.idleWithinOfBoot)} % of after boot | issue 51 | ${fmt(memoryAfterIdle.rssMB, 1)} MB (${growth >= 0 ? '+' : ''}${fmt(100 * growth, 1)} %) | ${verdict(growth <= MEMORY_TARGETS.idleWithinOfBoot)} |`)
  }
  lines.push(`| RSS after boot ≤ 150 MB (bench server) | issue 17 | ${fmt(memoryAfterBoot.rssMB, 1)} MB${peer ? ` (NestJS peer ${fmt(peer.memoryAfterBoot.rssMB, 1)} MB)` : ''} | ${verdict(memoryAfterBoot.rssMB <= 150)} |`)
  lines.push(`| RSS after the load rounds ≤ 250 MB${results.server.memoryThroughLoad ? ' (median through the matched load)' : ''} | issue 17 | ${fmt(loadRssMB(results.server), 1)} MB${peer ? ` (NestJS peer ${fmt(loadRssMB(peer), 1)} MB)` : ''} | ${verdict(loadRssMB(results.server) <= 250)} |`)
  lines.push('')
  return lines
}

export function renderMarkdown (results: BenchResults): string {
  const { environment: env, settings } = results
  const lines: string[] = []
  const push = (...more: string[]) => lines.push(...more)

  push('# Benchmark results', '')
  push(`${results.date} · commit ${results.commit} · Node ${env.node} · ${env.cpus} × ${env.cpuModel} · ${env.memoryGB} GB · whole run ${results.durationSeconds} s`, '')
  push(`autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.seconds} s per run, ${settings.rounds} interleaved rounds after a ${settings.warmupSeconds} s warm-up per scenario; the **median** round is reported. ` +
    `${env.note} Load average before/after: ${env.loadAverageBefore.join(', ')} / ${env.loadAverageAfter.join(', ')}. ` +
    `Embedded PostgreSQL ${settings.fsync ? 'with' : 'without'} fsync. Absolute numbers move with the machine; the ratios are the point.` +
    (settings.quick ? ' **Quick run (1 s per run): a smoke test, not a measurement.**' : ''), '')
  if (results.note) push(`**Note on this run:** ${results.note}`, '')

  push('## Throughput and latency', '')
  push('"CPU µs/req" is the CPU time of the server process **plus its PostgreSQL** (postmaster and backends, from `/proc`) during the measured window, divided by the requests answered: the cost of a request, which other load on the machine barely moves. ' +
    'A backend that exits inside the window is charged only for what it used after the window opened (not for its whole life, which Linux adds to the postmaster when it reaps it). ' +
    'Rows N… are the NestJS 11 + TypeORM + class-validator peer (test/bench/nest/), a separate process on its own embedded PostgreSQL (same binaries and flags), pinned to the same core(s).', '')
  push('| # | scenario | request | caller | req/s | CPU µs/req | p50 ms | p99 ms | req/s by round | CPU µs/req by round | non-2xx / errors |')
  push('|---|---|---|---|---:|---:|---:|---:|---|---|---|')
  for (const s of results.scenarios) {
    const request = s.request.length > 60 ? `${s.request.slice(0, 57)}…` : s.request
    push(`| ${s.label} | ${cell(s.title)} | \`${cell(request)}\` | ${s.credentials} | ${fmt(s.reqPerSec)} | ${fmt(s.cpuUsPerRequest)} | ${fmt(s.p50Ms)} | ${fmt(s.p99Ms)} | ${s.rounds.map((r) => fmt(r.reqPerSec)).join(' · ')} | ${s.rounds.map((r) => fmt(r.cpuUsPerRequest)).join(' · ')} | ${s.non2xx} / ${s.errors} |`)
  }
  push('')
  if (results.server.baselineSql) {
    push('Scenario 5pg replays, through `pg` in a bare Fastify route, the two statements one listNotes call sent (caught on Parse\'s own connection):', '')
    push('```sql', results.server.baselineSql.find, results.server.baselineSql.count, '```', '')
  }

  push('## Ratios', '')
  push('Median of the per-round ratios (the two sides of a ratio ran seconds apart in every round), with the lowest and highest round.', '')
  push('Each ratio in two forms: **req/s** (over ÷ under) and **CPU** (under\'s CPU per request ÷ over\'s: how many times cheaper). ' +
    'Which to trust: on a quiet machine both agree and req/s is the user-visible one; when other work runs on the machine (load average above the core count, rounds far apart), ' +
    'req/s measures who won the cores, and the **CPU** form is the one to trust.', '')
  push('"p99" is over\'s p99 latency ÷ under\'s (lower is better).', '')
  push('| ratio | what | req/s | rounds | CPU | rounds | p99 | target | design target (DESIGN.md) |')
  push('|---|---|---:|---|---:|---|---:|---|---|')
  for (const r of results.ratios) {
    const both = (met: boolean | undefined, cpuMet: boolean | undefined) => `req/s ${verdict(met)}, CPU ${r.cpu ? verdict(cpuMet) : '–'}`
    const target = (r.target === undefined ? '' : `≥ ${r.target}× (${r.source ?? 'issue 17'}): ${both(r.met, r.cpu?.met)}`) +
      (r.p99Within === undefined || !r.p99 ? '' : `; p99 ≤ ${r.p99Within}×: ${verdict(r.p99.met)}`)
    const design = r.designTarget === undefined ? '' : `≥ ${r.designTarget}×: ${both(r.designMet, r.cpu?.designMet)}`
    const cpu = r.cpu ? `**${fmt(r.cpu.value, 2)}×** | ${fmt(r.cpu.min, 2)}–${fmt(r.cpu.max, 2)}` : '– | –'
    push(`| ${r.key} | ${r.label} | **${fmt(r.value, 2)}×** | ${fmt(r.min, 2)}–${fmt(r.max, 2)} | ${cpu} | ${r.p99 ? `${fmt(r.p99.value, 2)}×` : '–'} | ${target} | ${design} |`)
  }
  push('')
  push(...targetsTable(results))
  push('', '## Queued jobs and the outbox (issue 50)', '', 'Two worker instances and one that only enqueues, on one embedded PostgreSQL (test/bench/queue.ts); the order calls run one after another, on the enqueue-only instance and then on a worker.', '', ...queueRows(results.queue))
  if (results.dataSize) push(dataSizeMarkdown(results.dataSize))

  const scale = results.scale
  if (scale) {
    push('## Scale: boot and OpenAPI generation by number of functions', '')
    push(`Each boot in a fresh process on a warm database cluster (fixture models, N generated functions with validated fields, ${scale.repeats} boot(s) per size, interleaved; medians${scale.bootRatio ? `; 0 and 1000 functions ${scale.bootRatio.rounds.length} times each, in the boot ratio's rounds below` : ''}). ` +
      '"boot" is `register(kitPlugin)` → `ready()`, in wall time and in CPU time of the booting process (`process.cpuUsage()`); "routes" is the span from the first to the last declared route Fastify registered; ' +
      '"bare Fastify" is `register` → `ready()` of a bare Fastify instance given the same routes (verbs, paths, an input schema and three hooks each; test/bench/bare-routes.ts), ' +
      'in a fresh process too: the part of the boot that is Fastify\'s own cost on this machine.', '')
    push('| functions | routes | boot ms | boot CPU ms | routes ms | bare Fastify, same routes: ms / CPU ms | first GET /api-docs/json ms | second ms | docs KB | RSS after boot MB | heap MB |')
    push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const size of scale.sizes) {
      const bare = size.functions === 0 ? '–' : `${fmt(size.bareFastifyMs ?? null)} / ${fmt(size.bareFastifyCpuMs ?? null)}`
      push(`| ${size.functions} | ${size.declaredRoutes} | ${fmt(size.bootMs)} | ${fmt(size.bootCpuMs ?? null)} | ${fmt(size.routeSpanMs, 1)} | ${bare} | ${fmt(size.docsFirstMs)} | ${fmt(size.docsSecondMs)} | ${size.docsBytes === null ? '–' : fmt(size.docsBytes / 1024, 0)} | ${fmt(size.rssMB, 1)} | ${fmt(size.heapUsedMB, 1)} |`)
    }
    push('')
    if (scale.bootRatio) {
      push('### Boot ratio (issue 51), round by round', '')
      push(`Each round runs three fresh processes back to back — the kit with 0 functions, the kit with 1000, bare Fastify with the same ${fmt(scale.bootRatio.routes)} routes — in an order that alternates from round to round, ` +
        'and gives one ratio, (kit with 1000 − kit with 0) ÷ bare Fastify; the figure is the median of the rounds\' ratios, shown with the lowest and highest round. ' +
        'Three processes minutes apart see different machines; three in a row see nearly the same one. ' +
        '**The target reads the CPU ratio**: a boot is one thread\'s work, and the CPU time of the booting process is what a busy machine barely moves, ' +
        'where its wall time also counts the time it waited for a core (and, pinned to one core, the time the embedded PostgreSQL it starts ran there). ' +
        'The wall ratio is shown beside it; on a quiet machine the two agree.', '')
      push(...bootRatioRows(scale.bootRatio), '')
    }
    const perFn = (series: PerFunction) => series.map((point) => `${point.functions}: ${fmt(point.msPerFunction, 2)}`).join(' · ')
    const linear = (ratio: number | null) => ratio === null ? 'not measurable' : ratio <= LINEAR_TOLERANCE ? `${fmt(ratio, 2)} → at most linear` : `${fmt(ratio, 2)} → **faster than linear**`
    const [smaller, larger] = scale.growth.compared
    push(`Cost per function above the 0-function boot (ms per function at each size); the last column divides the cost per function at ${larger} by that at ${smaller} (≈ 1 when growth is linear, well above 1 when faster; boot-to-boot noise of some tens of ms blurs the small sizes):`, '')
    push(`| measure | ms per function | ${larger} vs ${smaller} |`)
    push('|---|---|---|')
    push(`| boot | ${perFn(scale.growth.boot)} | ${linear(scale.growth.bootRatio)} |`)
    push(`| route registration | ${perFn(scale.growth.routes)} | ${linear(scale.growth.routesRatio)} |`)
    push(`| first OpenAPI document | ${perFn(scale.growth.docs)} | ${linear(scale.growth.docsRatio)} |`)
    push(`| resident memory | ${scale.growth.rss.map((point) => `${point.functions}: ${fmt(point.kbPerFunction, 1)} KB`).join(' · ')} | |`)
    push('')
    push('Small sizes add only tens of ms to a boot that varies by more than that, so their per-function figures are mostly noise; ' +
      `to see how growth continues past ${larger}, add a larger size (\`BENCH_SCALE_SIZES=10,100,1000,3000\`).`, '')
    if (scale.docsNote) push(`Note: ${scale.docsNote}.`, '')
  }

  push('## Memory', '')
  push(`Bench server (fixture app + bench endpoints, one process; PostgreSQL's own processes not included): booted in ${fmt(results.server.bootMs)} ms; ` +
    `RSS ${results.server.memoryAfterBoot.rssMB} MB (heap ${results.server.memoryAfterBoot.heapUsedMB} MB) after boot, ` +
    `${results.server.memoryAfterLoad.rssMB} MB (heap ${results.server.memoryAfterLoad.heapUsedMB} MB) after the ${results.server.memoryThroughLoad ? 'matched load' : 'load rounds'}` +
    (results.server.memoryAfterLoadLive
      ? `; after a full garbage collection ${results.server.memoryAfterLoadLive.rssMB} MB (heap ${results.server.memoryAfterLoadLive.heapUsedMB} MB): ` +
        'the difference is garbage V8 had not yet collected, not memory the server keeps'
      : '') + (results.server.runtime === 'compiled'
      ? '. The server runs compiled (node on tsc\'s output with --enable-source-maps), as `start:prod` does.'
      : '. The server runs under tsx (its loader thread adds about 30 MB of RSS that a compiled `start:prod` does not have).'), '')
  push(results.server.memoryThroughLoad
    ? 'By stage, side by side (issue 51), before the throughput rounds: after boot; through the matched load (the scenarios both servers serve, paired and interleaved, each run for the same seconds), ' +
      'the RSS of both read from /proc every 250 ms from the second round on, whose median the target compares (a single reading is one point of each server\'s GC cycle); ' +
      'then each server\'s other scenarios, once each, apart (not compared: the loads differ); after the idle pause that follows all of it (no forced GC before it); after a full GC (both servers).'
    : 'By stage, side by side (issue 51): RSS and heap used after boot, after each scenario\'s last run, after the whole load, and after the idle pause that follows it (no forced GC before it); "after a full GC" is taken last.', '')
  push(...memoryRows(results), '')
  if (results.nest) {
    const peer = results.nest
    push(`NestJS peer (one process, its PostgreSQL not included): booted in ${fmt(peer.bootMs)} ms including its own PostgreSQL start; ` +
      `RSS ${peer.memoryAfterBoot.rssMB} MB (heap ${peer.memoryAfterBoot.heapUsedMB} MB) after boot, ${peer.memoryAfterLoad.rssMB} MB (heap ${peer.memoryAfterLoad.heapUsedMB} MB) after the ${results.server.memoryThroughLoad ? 'matched load' : 'load rounds'}` +
      (peer.memoryAfterLoadLive ? `; after a full garbage collection ${peer.memoryAfterLoadLive.rssMB} MB (heap ${peer.memoryAfterLoadLive.heapUsedMB} MB)` : '') + '.', '')
  }

  if (results.profiles) {
    const profiles = results.profiles
    push('## Where the time goes (CPU profiles of the server, one per scenario)', '')
    push('Each scenario ran once more under the inspector\'s sampling profiler (the numbers above were taken without it). ' +
      '"busy/req" is the server main thread\'s non-idle time per request; the profiler samples wall-clock time, so on a loaded machine it also counts time spent waiting for a core: compare it within one run only. ' +
      'Time is charged to its *owner*: the nearest frame of a package or of the project, ' +
      'so a builtin (JSON.stringify, a hash, a socket write) counts for the code that called it. "kit" is lib/** and plugin.ts. ' +
      'Profiles: `test/bench/results/profiles/*.cpuprofile` (Chrome DevTools, speedscope); kit frames point at TypeScript lines.', '')
    push('| # | busy/req µs | kit-owned | kit functions owning most (share of busy time) | busy time by owner |')
    push('|---|---:|---:|---|---|')
    for (const s of results.scenarios) {
      const profile = profiles[s.key]
      if (!profile) continue
      const kit = profile.kitOwners.slice(0, 4).map((frame) => `${frame.function} (${frame.location}) ${fmt(frame.ownedPct, 1)}%`).join('; ')
      const owners = profile.byOwner.slice(0, 5).map((owner) => `${owner.origin} ${fmt(owner.pct, 0)}%`).join(', ')
      push(`| ${s.label} | ${fmt(profile.cpuUsPerRequest)} | ${fmt(profile.kitOwnedPct, 1)}% | ${cell(kit)} | ${cell(owners)} |`)
    }
    push('')
    push('Side by side, server busy time per request by owner (µs), for the pairs the targets compare:', '')
    for (const ratio of results.ratios.filter((r) => r.target !== undefined || r.compareProfiles)) {
      const a = profiles[ratio.over]
      const b = profiles[ratio.under]
      if (!a || !b) continue
      const owners = [...new Set([...Object.keys(a.ownerUsPerRequest), ...Object.keys(b.ownerUsPerRequest)])]
        .sort((x, y) => Math.max(b.ownerUsPerRequest[y] ?? 0, a.ownerUsPerRequest[y] ?? 0) - Math.max(b.ownerUsPerRequest[x] ?? 0, a.ownerUsPerRequest[x] ?? 0))
        .slice(0, 8)
      const label = (key: string) => results.scenarios.find((scenario) => scenario.key === key)?.label ?? key
      push(`| ${ratio.key} | ${label(ratio.over)} µs/req | ${label(ratio.under)} µs/req | difference |`)
      push('|---|---:|---:|---:|')
      push(`| **all** | **${fmt(a.cpuUsPerRequest)}** | **${fmt(b.cpuUsPerRequest)}** | **${fmt(a.cpuUsPerRequest - b.cpuUsPerRequest)}** |`)
      for (const owner of owners) {
        const x = a.ownerUsPerRequest[owner] ?? 0
        const y = b.ownerUsPerRequest[owner] ?? 0
        push(`| ${owner} | ${fmt(x)} | ${fmt(y)} | ${x - y > 0 ? '+' : ''}${fmt(x - y)} |`)
      }
      push('')
    }
  }
  const boot = results.scale?.bootProfile
  if (boot) {
    const largest = Math.max(...(results.scale?.sizes.map((size) => size.functions) ?? [0]))
    push(`### Boot with ${largest} functions`, '')
    push(`Busy ${fmt(boot.busyMs)} ms under the profiler (the boot alone: register → ready(); the docs requests after it are not in the profile); kit code on the stack ${fmt(boot.kitInclusivePct, 1)}% of it, kit-owned ${fmt(boot.kitOwnedPct, 1)}%. ` +
      `By owner: ${boot.byOwner.slice(0, 8).map((owner) => `${owner.origin} ${fmt(owner.pct, 0)}%`).join(', ')}.`, '')
    push('| kit function | location | inclusive ms | inclusive % | self ms |')
    push('|---|---|---:|---:|---:|')
    for (const frame of boot.kitFrames.slice(0, 10)) push(`| ${cell(frame.function)} | ${frame.location} | ${fmt(frame.inclusiveMs)} | ${fmt(frame.inclusivePct, 1)} | ${fmt(frame.selfMs, 1)} |`)
    push('')
    push('| hottest function (self time) | origin | location | self ms | self % |')
    push('|---|---|---|---:|---:|')
    for (const frame of boot.hottest.slice(0, 8)) push(`| ${cell(frame.function)} | ${frame.origin} | ${frame.location} | ${fmt(frame.selfMs)} | ${fmt(frame.selfPct, 1)} |`)
    push('')
  }
  return lines.join('\n') + '\n'
}

// `npx tsx test/bench/memory-owners.ts`: where the bench server's memory goes
// (issue 51), beside the NestJS peer's. Boots both (compiled, as the bench
// runs them; --tsx for the sources), then for each: process.memoryUsage(), V8's
// heap spaces, a heap snapshot summed by type and constructor, and the
// modules loaded by package (test/bench/heap-summary.ts) after boot; RSS and
// heap after each of three soak rounds (every scenario of test/bench/scenarios.ts
// for --seconds each), after --idle seconds left alone, and the heap summary
// again after the load. The heap snapshot is taken last (--boot-only: right
// after boot, and no load): taking one leaves memory with the allocator that
// every later RSS reading would include. Prints Markdown; writes
// results/memory-owners.json.
// With --matched, the soak is the matched load of test/bench/memory-load.ts
// (the scenarios both servers serve, paired), and halfway through each run
// the loaded server reports its memory as it is, no GC first (RSS by kind and
// V8's spaces): where the RSS under load goes, side by side.
// Flags: --tsx, --no-nest, --seconds=N (5 per scenario and round), --rounds=N (3),
// --idle=N (60), --boot-only, --matched, --prebuilt (use .bench-build as it is, without compiling).
// Env: BENCH_SERVER_FLAGS (node flags for both servers, e.g. --max-semi-space-size=4).
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { BUILD_DIR, compileBench } from './compiled.js'
import type { HeapSummary } from './heap-summary.js'
import { buildNestPeer, nestHostFile } from './nest-peer.js'
import { MATCHED_KEYS } from './memory-load.js'
import { median } from './shared.js'
import { scenarios as buildScenarios, type Scenario } from './scenarios.js'
import { BENCH_DIR, RESULTS_DIR, type MemorySample } from './shared.js'
import { startServer } from './server-process.js'

const argv = process.argv.slice(2)
const flag = (name: string, fallback: number) => Number(argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)
const settings = { seconds: flag('seconds', 5), rounds: flag('rounds', 3), idle: flag('idle', 60), nest: !argv.includes('--no-nest'), tsx: argv.includes('--tsx'), bootOnly: argv.includes('--boot-only'), matched: argv.includes('--matched') }
const serverFile = settings.tsx
  ? path.join(BENCH_DIR, 'server.ts')
  : path.join(argv.includes('--prebuilt') ? path.join(BUILD_DIR, 'test', 'bench') : compileBench(), 'server.js')
const loader = settings.tsx ? ['--import', 'tsx'] : ['--enable-source-maps']
const extraFlags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)
const log = (line: string) => process.stderr.write(`[memory] ${line}\n`)

async function load (origin: string, scenario: Scenario, halfway?: () => Promise<void>): Promise<void> {
  const running = autocannon({ url: origin + scenario.path, method: scenario.method, headers: scenario.headers, body: scenario.body, connections: 50, duration: settings.seconds })
  if (halfway) await sleep(settings.seconds * 500).then(halfway)
  await running
}

const execArgv = [...loader, '--expose-gc', ...extraFlags]
const kit = startServer(serverFile, [], execArgv)
const nestEntry = settings.nest ? buildNestPeer(log) : undefined
const nest = nestEntry ? startServer(nestHostFile(serverFile), [nestEntry], execArgv) : undefined
type Side = NonNullable<typeof nest>
const sides: Array<[string, Side]> = [['kit', kit], ...(nest ? [['NestJS peer', nest] as [string, Side]] : [])]
const report: Record<string, { afterBoot: HeapSummary, rounds: MemorySample[], underLoad: HeapSummary[], afterIdle?: MemorySample, afterLoad?: HeapSummary }> = {}
try {
  const kitReady = await kit.ready
  const nestReady = nest ? await nest.ready : undefined
  for (const [name, side] of sides) {
    report[name] = { afterBoot: await side.send<HeapSummary>({ cmd: 'heap-summary', snapshot: settings.bootOnly }), rounds: [], underLoad: [] }
    log(`${name} after boot: rss ${report[name].afterBoot.rssMB} MB, heap used ${report[name].afterBoot.heapUsedMB} MB`)
  }
  const all = settings.bootOnly ? [] : buildScenarios(kitReady, nestReady).filter((scenario) => !settings.matched || MATCHED_KEYS.has(scenario.key))
  for (let round = 1; round <= (settings.bootOnly ? 0 : settings.rounds); round++) {
    for (const scenario of all) {
      const side = scenario.server === 'nest' ? nest! : kit
      const name = scenario.server === 'nest' ? 'NestJS peer' : 'kit'
      const halfway = settings.matched ? async () => { report[name].underLoad.push(await side.send<HeapSummary>({ cmd: 'heap-summary', snapshot: false, gc: false })) } : undefined
      await load(scenario.server === 'nest' ? nestReady!.origin : kitReady.origin, scenario, halfway)
      if (scenario.group === 'write') await side.send({ cmd: 'reset-notes' })
    }
    for (const [name, side] of sides) {
      const sample = await side.send<MemorySample>({ cmd: 'memory' })
      report[name].rounds.push(sample)
      log(`${name} after soak round ${round}: rss ${sample.rssMB} MB, heap used ${sample.heapUsedMB} MB`)
    }
  }
  if (!settings.bootOnly) {
    log(`idle for ${settings.idle} s`)
    await sleep(settings.idle * 1000)
    for (const [name, side] of sides) report[name].afterIdle = await side.send<MemorySample>({ cmd: 'memory' })
    for (const [name, side] of sides) report[name].afterLoad = await side.send<HeapSummary>({ cmd: 'heap-summary', snapshot: true })
  }
} finally {
  await Promise.all(sides.map(([, side]) => side.send({ cmd: 'close' }).catch(() => {})))
}

mkdirSync(RESULTS_DIR, { recursive: true })
writeFileSync(path.join(RESULTS_DIR, 'memory-owners.json'), JSON.stringify({ settings, flags: extraFlags, report }, null, 2) + '\n')

const out: string[] = [`# Memory owners (${settings.tsx ? 'tsx' : 'compiled'}${extraFlags.length ? `, ${extraFlags.join(' ')}` : ''}; ${settings.rounds} soak rounds of ${settings.seconds} s per scenario, ${settings.idle} s idle)`, '']
const names = Object.keys(report)
out.push(`| | ${names.map((name) => `${name} boot | ${name} after load`).join(' | ')} |`, `|---|${names.map(() => '---:|---:').join('|')}|`)
const row = (label: string, value: (summary: HeapSummary) => number | undefined) =>
  out.push(`| ${label} | ${names.map((name) => `${value(report[name].afterBoot) ?? '–'} | ${report[name].afterLoad ? value(report[name].afterLoad!) ?? '–' : '–'}`).join(' | ')} |`)
row('RSS MB (after a full GC)', (summary) => summary.rssMB)
row('RSS in anonymous pages MB', (summary) => summary.rssAnonMB)
row('RSS in mapped files MB', (summary) => summary.rssFileMB)
row('heap used MB', (summary) => summary.heapUsedMB)
row('heap committed MB', (summary) => summary.heapTotalMB)
row('external MB', (summary) => summary.externalMB)
for (const space of ['new_space', 'old_space', 'code_space', 'large_object_space']) {
  row(`${space} used MB`, (summary) => summary.spaces.find((entry) => entry.space === space)?.usedMB)
  row(`${space} committed MB`, (summary) => summary.spaces.find((entry) => entry.space === space)?.committedMB)
}
row('CommonJS files loaded', (summary) => summary.modules.reduce((sum, entry) => sum + entry.files, 0))
out.push('')
if (settings.matched) {
  // Halfway through each run of the matched load, no GC first: the median of each figure over the runs.
  const at = (name: string, value: (summary: HeapSummary) => number | undefined) => {
    const values = report[name].underLoad.map(value).filter((v): v is number => v !== undefined)
    return values.length ? Math.round(median(values) * 10) / 10 : '–'
  }
  const committed = (space: string) => (summary: HeapSummary) => summary.spaces.find((entry) => entry.space === space)?.committedMB
  const split: Array<[string, (summary: HeapSummary) => number | undefined]> = [
    ['RSS', (s) => s.rssMB], ['RSS in anonymous pages', (s) => s.rssAnonMB], ['RSS in mapped files', (s) => s.rssFileMB],
    ['V8 heap committed', (s) => s.heapTotalMB], ['heap used (live and garbage)', (s) => s.heapUsedMB],
    ['new space committed', committed('new_space')], ['old space committed', committed('old_space')], ['code space committed', committed('code_space')],
    ['large objects committed', committed('large_object_space')], ['external (buffers)', (s) => s.externalMB],
    ['anonymous RSS outside the V8 heap (malloc, stacks)', (s) => s.rssAnonMB === undefined ? undefined : s.rssAnonMB - s.heapTotalMB]
  ]
  out.push(`Under the matched load (halfway through each run, no GC first; median of ${names.map((name) => `${report[name].underLoad.length} for the ${name}`).join(', ')}), MB:`, '')
  out.push(`| | ${names.join(' | ')} |`, `|---|${names.map(() => '---:').join('|')}|`)
  for (const [label, value] of split) out.push(`| ${label} | ${names.map((name) => at(name, value)).join(' | ')} |`)
  out.push('')
}
for (const name of names) {
  const { afterBoot, rounds, afterIdle, afterLoad } = report[name]
  out.push(`## ${name}`, '')
  out.push(`RSS after boot ${afterBoot.rssMB} MB; after each soak round ${rounds.map((sample) => sample.rssMB).join(' → ')} MB (heap used ${rounds.map((sample) => sample.heapUsedMB).join(' → ')}); after ${settings.idle} s idle ${afterIdle?.rssMB ?? '–'} MB.`, '')
  const snapshot = settings.bootOnly ? afterBoot : afterLoad
  const when = settings.bootOnly ? 'after boot' : 'after the load'
  out.push(`| heap by node type (${when}) | MB | count |`, '|---|---:|---:|')
  for (const type of snapshot?.byType.slice(0, 10) ?? []) out.push(`| ${type.type} | ${type.MB} | ${type.count} |`)
  out.push('', `| constructor (self size, ${when}) | MB | count |`, '|---|---:|---:|')
  for (const entry of snapshot?.byConstructor.slice(0, 20) ?? []) out.push(`| ${entry.name.replace(/\|/g, '\\|').slice(0, 60)} | ${entry.MB} | ${entry.count} |`)
  out.push('', `Modules by package (files): ${afterBoot.modules.slice(0, 15).map((entry) => `${entry.owner} ${entry.files}`).join(', ')}`, '')
}
process.stdout.write(out.join('\n') + '\n')

// `npx tsx test/bench/memory-stages.ts`: where the bench server's resident set
// sits after boot, after a load, through an idle minute and after a full GC
// (issue 51's idle target). The kit's server alone, compiled as the bench runs
// it: the matched load's kit scenarios (test/bench/memory-load.ts) for
// --rounds, then every other kit scenario once, --seconds each at 50
// connections; then a reading every 15 s of --idle; then gc() (the bench's
// 'memory-live', which waits 3 s for V8 to unmap the freed pages) and one more
// reading 5 s later. Each reading: RSS (anonymous, file),
// V8's heap committed and used by space, and the process's anonymous memory
// from /proc/<pid>/smaps by kind (glibc's main heap and its 64 MB thread
// arenas apart from the rest: V8's pages, large allocations). With --trim,
// a last reading after glibc's malloc_trim(0), called in the server through
// gdb: what the allocator held that it could give back.
// Flags: --seconds=N (4), --rounds=N (3), --idle=N (60), --trim, --prebuilt (use .bench-build as it is).
// Env: BENCH_SERVER_FLAGS (node flags for the server), BENCH_IDLE_COLLECTION=off (test/bench/server.ts), MALLOC_ARENA_MAX…
// Prints one line per reading; writes results/memory-stages.json.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { BUILD_DIR, compileBench } from './compiled.js'
import type { HeapSummary } from './heap-summary.js'
import { MATCHED_KEYS } from './memory-load.js'
import { scenarios as buildScenarios, type Scenario } from './scenarios.js'
import { RESULTS_DIR } from './shared.js'
import { startServer } from './server-process.js'

const argv = process.argv.slice(2)
const flag = (name: string, fallback: number) => Number(argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)
const settings = { seconds: flag('seconds', 4), rounds: flag('rounds', 3), idle: flag('idle', 60), trim: argv.includes('--trim') }
const serverFile = path.join(argv.includes('--prebuilt') ? path.join(BUILD_DIR, 'test', 'bench') : compileBench(), 'server.js')
const serverFlags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)
const log = (line: string) => process.stderr.write(`[memory-stages] ${line}\n`)

const { ready, send, child } = startServer(serverFile, [], ['--enable-source-maps', '--expose-gc', ...serverFlags])

const MB = (kB: number) => Math.round(kB / 1024 * 10) / 10
const ARENA = 64n * 1024n * 1024n

/** The process's resident anonymous memory by kind, MB. A glibc thread arena is a 64 MB-aligned mapping of 64 MB (its used part, then the rest reserved). */
function anonymousByKind (pid: number): { mallocMain: number, mallocArenas: number, otherAnon: number, files: number } {
  const maps: Array<{ start: bigint, end: bigint, perms: string, name: string, rssKB: number }> = []
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3], name: head[4], rssKB: 0 })
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss && maps.length > 0) maps[maps.length - 1].rssKB = Number(rss[1])
  }
  const sums = { mallocMain: 0, mallocArenas: 0, otherAnon: 0, files: 0 }
  maps.forEach((map, i) => {
    const next = maps[i + 1]
    const reserved = next && next.start === map.end && next.perms === '---p' ? next.end - next.start : 0n
    if (map.name.startsWith('/')) sums.files += map.rssKB
    else if (map.name === '[heap]') sums.mallocMain += map.rssKB
    else if (map.start % ARENA === 0n && map.perms.startsWith('rw') && map.end - map.start + reserved === ARENA) sums.mallocArenas += map.rssKB
    else sums.otherAnon += map.rssKB
  })
  return { mallocMain: MB(sums.mallocMain), mallocArenas: MB(sums.mallocArenas), otherAnon: MB(sums.otherAnon), files: MB(sums.files) }
}

/** CPU time of the server process, all its threads, ms. */
function cpuMs (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1000 / 100
}

const readings: Array<Record<string, unknown>> = []
async function reading (stage: string): Promise<void> {
  const heap = await send<HeapSummary>({ cmd: 'heap-summary', snapshot: false, gc: false })
  const space = (name: string) => heap.spaces.find((entry) => entry.space === name)
  const row = {
    stage,
    rss: heap.rssMB,
    rssAnon: heap.rssAnonMB,
    rssFile: heap.rssFileMB,
    heapCommitted: heap.heapTotalMB,
    heapUsed: heap.heapUsedMB,
    external: heap.externalMB,
    newCommitted: space('new_space')?.committedMB,
    oldCommitted: space('old_space')?.committedMB,
    oldUsed: space('old_space')?.usedMB,
    codeCommitted: space('code_space')?.committedMB,
    ...anonymousByKind(child.pid!),
    cpuMs: cpuMs(child.pid!)
  }
  readings.push(row)
  log(Object.entries(row).map(([key, value]) => `${key} ${value}`).join('  '))
}

async function run (origin: string, scenario: Scenario): Promise<number> {
  const result = await autocannon({ url: origin + scenario.path, method: scenario.method, headers: scenario.headers, body: scenario.body, connections: 50, duration: settings.seconds })
  if (scenario.group === 'write') await send({ cmd: 'reset-notes' })
  return result.requests.total
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
try {
  const server = await ready
  log(`server up (flags: ${serverFlags.join(' ') || 'none'}; idleCollection ${process.env.BENCH_IDLE_COLLECTION === 'off' ? 'off' : `IDLE_COLLECTION=${process.env.IDLE_COLLECTION ?? 'unset (off)'}`}), load average ${loadAverage()}`)
  await reading('after boot')
  const all = buildScenarios(server)
  let requests = 0
  const cpuBefore = cpuMs(child.pid!)
  for (let round = 0; round < settings.rounds; round++) {
    for (const scenario of all.filter((entry) => MATCHED_KEYS.has(entry.key))) requests += await run(server.origin, scenario)
  }
  log(`matched load: ${requests} requests, ${Math.round((cpuMs(child.pid!) - cpuBefore) * 1000 / requests)} µs CPU per request (all threads)`)
  for (const scenario of all.filter((entry) => !MATCHED_KEYS.has(entry.key))) await run(server.origin, scenario)
  await reading('after the load')
  for (let second = 15; second <= settings.idle; second += 15) {
    await sleep(15_000)
    await reading(`after ${second} s idle`)
  }
  await send({ cmd: 'memory-live' })
  await reading('3 s after gc()')
  await sleep(5000)
  await reading('8 s after gc()')
  if (settings.trim) {
    execFileSync('gdb', ['-p', String(child.pid), '-batch', '-ex', 'call (void)malloc_trim(0)'], { stdio: 'ignore' })
    await reading('after malloc_trim(0)')
  }
  log(`done, load average ${loadAverage()}`)
} finally {
  await send({ cmd: 'close' }).catch(() => {})
}

mkdirSync(RESULTS_DIR, { recursive: true })
writeFileSync(path.join(RESULTS_DIR, 'memory-stages.json'), JSON.stringify({ settings, serverFlags, idleCollection: process.env.BENCH_IDLE_COLLECTION !== 'off', readings }, null, 2) + '\n')

// Prints the per-file CPU ledger a lane wrote with KIT_CPU_LEDGER=<dir>
// (test/helpers/cpu-ledger-record.mjs), largest first:
//   KIT_CPU_LEDGER=/tmp/ledger /usr/bin/time -f '%e %U %S' npm run test:postgres -- --exclude=test/cli.test.ts
//   node test/cpu-ledger.mjs /tmp/ledger [--total <CPU-s of the whole lane, e.g. user + system from /usr/bin/time>]
// CPU = the test process's own user + system, plus its waited-for children's
// (the kit processes it spawned, the embedded PostgreSQL servers it stopped).
// "runner" is tap's own process (the largest reading its test processes took
// of their parent); with --total, what neither accounts for is printed too.
import { readFileSync } from 'node:fs'
import path from 'node:path'

const [dir, ...rest] = process.argv.slice(2)
if (!dir) {
  process.stderr.write('usage: node test/cpu-ledger.mjs <dir> [--total <CPU-s>]\n')
  process.exit(2)
}
const totalIndex = rest.indexOf('--total')
const measuredTotal = totalIndex >= 0 ? Number(rest[totalIndex + 1]) : undefined

const lines = readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
const files = new Map()
const runners = new Map()
for (const line of lines) {
  const key = `${line.file}${line.lane === 'postgres' ? '' : ` (${line.lane})`}`
  const row = files.get(key) ?? { file: key, self: 0, children: 0, unreaped: 0, wall: 0, runs: 0, loads: [] }
  row.self += line.self
  row.children += line.children
  row.unreaped += line.unreaped
  row.wall += line.wall
  row.runs += 1
  row.loads.push(...line.load)
  files.set(key, row)
  if (line.runner) runners.set(line.runner.pid, Math.max(runners.get(line.runner.pid) ?? 0, line.runner.cpu))
}

const rows = [...files.values()].map((row) => ({ ...row, cpu: row.self + row.children }))
rows.sort((a, b) => b.cpu - a.cpu)
const filesTotal = rows.reduce((sum, row) => sum + row.cpu, 0)
const runnerTotal = [...runners.values()].reduce((sum, cpu) => sum + cpu, 0)
const counted = filesTotal + runnerTotal
const whole = measuredTotal ?? counted

const fixed = (value) => value.toFixed(1)
const share = (value) => `${(100 * value / whole).toFixed(1)} %`
const table = [
  ['file', 'CPU-s', 'own', 'children', 'unreaped', 'wall s', 'load', 'share'],
  ...rows.map((row) => [
    row.file, fixed(row.cpu), fixed(row.self), fixed(row.children), row.unreaped > 0 ? fixed(row.unreaped) : '',
    fixed(row.wall), `${fixed(Math.min(...row.loads))}–${fixed(Math.max(...row.loads))}`, share(row.cpu)
  ]),
  [`files (${rows.length}, ${lines.length} processes)`, fixed(filesTotal), '', '', '', '', '', share(filesTotal)],
  [`tap runner (${runners.size})`, fixed(runnerTotal), '', '', '', '', '', share(runnerTotal)]
]
if (measuredTotal !== undefined) table.push(['not in the ledger (npm, tap start, unreaped servers)', fixed(measuredTotal - counted), '', '', '', '', '', share(measuredTotal - counted)])
table.push(['total', fixed(whole), '', '', '', '', '', '100 %'])

process.stdout.write(`| ${table[0].join(' | ')} |\n|${table[0].map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|\n`)
for (const row of table.slice(1)) process.stdout.write(`| ${row.join(' | ')} |\n`)

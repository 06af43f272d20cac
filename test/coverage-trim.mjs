// Before `c8 report`: each process's V8 coverage file (NODE_V8_COVERAGE) holds
// every script the process loaded — Node's own, node_modules, the tests — and
// the suite's few hundred processes write gigabytes of it, more than c8 can
// merge in memory. Only the files c8 reports on (.c8rc.json: plugin.ts, lib/,
// cli/) are kept, and their compiled copies under dist/ (the fpk command runs
// those; c8 maps them back to the sources), one file at a time, so the report
// reads a small fraction.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const folder = path.join(root, 'coverage', 'tmp')
const base = pathToFileURL(root).href
const kept = (url) => ['plugin.', 'lib/', 'cli/', 'dist/'].some((start) => url.startsWith(`${base}/${start}`))

let before = 0
let after = 0
for (const name of readdirSync(folder)) {
  if (!name.endsWith('.json')) continue
  const file = path.join(folder, name)
  const text = readFileSync(file, 'utf8')
  before += text.length
  let coverage
  try {
    coverage = JSON.parse(text)
  } catch {
    continue // a process killed mid-write: c8 skips what it cannot read, as before
  }
  coverage.result = (coverage.result ?? []).filter((script) => kept(script.url))
  const maps = coverage['source-map-cache']
  if (maps) coverage['source-map-cache'] = Object.fromEntries(Object.entries(maps).filter(([url]) => kept(url)))
  const trimmed = JSON.stringify(coverage)
  after += trimmed.length
  writeFileSync(file, trimmed)
}
process.stdout.write(`coverage: ${(before / 2 ** 20).toFixed(0)} MB of V8 coverage trimmed to ${(after / 2 ** 20).toFixed(0)} MB (plugin.ts, lib/, cli/, dist/)\n`)

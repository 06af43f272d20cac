// Loaded by tap into every test process (package.json "tap.node-arg"): the
// processes a test starts (kit instances, npm, tsc, the example app) start
// without tap's process recorder, @tapjs/processinfo. tap puts it in
// NODE_OPTIONS and re-adds it on every spawn; in each Node process it then
// records every module loaded (its line lengths, a look for a source map),
// some 0.15 CPU-s for an empty process and 0.25 for one that loads the kit.
// What it records serves tap's own coverage (off here: coverage is Node's
// NODE_V8_COVERAGE, which children still inherit) and `tap --changed`, which
// needs only the test processes, where it stays.
import { createRequire } from 'node:module'

const RECORDER = /(^|\s)"?--(import|loader|experimental-loader)=\S*@tapjs[\\/]processinfo\S*/g

try {
  // The copy tap's recorder registered its re-adding with (a process-wide singleton).
  const fromRecorder = createRequire(import.meta.resolve('@tapjs/processinfo'))
  fromRecorder('process-on-spawn').removeAllListeners()
  if (process.env.NODE_OPTIONS) process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(RECORDER, '').trim()
} catch {
  // Another tap layout: children keep the recorder, as before.
}

// Loaded by tap into every test process (package.json "tap.node-arg"): the
// per-file timeout (tap's `timeout`, 240 s) stretched by how busy the machine
// is when the file starts, as test/helpers/time-scale.ts stretches the tests'
// own waits, so a file that passes on a quiet machine is not killed on a
// loaded one. The runner learns the new value from the file's root test.
import { availableParallelism, loadavg } from 'node:os'
import t from 'tap'

const BASE_SECONDS = Number(process.env.TAP_TIMEOUT) > 0 ? Number(process.env.TAP_TIMEOUT) : 240
const busy = Math.min(4, Math.max(1, loadavg()[0] / availableParallelism()))
const factor = Number(process.env.FPK_TEST_TIME_SCALE) > 0 ? Number(process.env.FPK_TEST_TIME_SCALE) : 1
if (busy * factor > 1) t.setTimeout(Math.round(BASE_SECONDS * 1000 * busy * factor))

// The per-process CPU ledger (test/cpu-ledger.mjs); nothing is loaded without it.
if (process.env.KIT_CPU_LEDGER) await import('./cpu-ledger-record.mjs')

// What the benchmark's processes agree on: credentials, the constant every
// "constant" endpoint answers, the role the role-checked endpoints require,
// and the messages the runner and the server exchange over IPC.
import { chmodSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url))
export const ROOT = path.resolve(BENCH_DIR, '..', '..')
export const RESULTS_DIR = path.join(BENCH_DIR, 'results')
export const PROFILES_DIR = path.join(RESULTS_DIR, 'profiles')

export const APP_ID = 'bench-app'
export const MASTER_KEY = 'bench-master-key'
export const MOUNT = '/parse'

/** Answered by the bare route, the declared constant endpoint and the Parse.Cloud.define function alike. */
export const BENCH_CONSTANT = Object.freeze({ ok: true, answer: 42, text: 'constant' })

export const BENCH_ROLE = 'BenchReader'
/** Name of the Parse.Cloud.define function (not declared: it must fall through to Parse's own /functions route). */
export const PARSE_FUNCTION = 'benchConstantParse'
/** Rows the Note table holds at the start of every read scenario. */
export const SEEDED_NOTES = 100
/** Title of the notes the write scenarios create (removed between rounds). */
export const WRITE_TITLE = 'bench write'

/** A request from the runner to the server, answered by a Reply with the same id. */
export type Command =
  | { id: number, cmd: 'reset-notes' }
  | { id: number, cmd: 'profile-start' }
  | { id: number, cmd: 'profile-stop', file: string }
  | { id: number, cmd: 'memory' }
  /** After a full garbage collection: what the heap really holds (the server runs with --expose-gc for this); read 3 s after it, once V8 has unmapped the freed pages. */
  | { id: number, cmd: 'memory-live' }
  /** A heap snapshot summed by type and constructor, V8's spaces and the modules loaded (test/bench/heap-summary.ts; memory-owners.ts). */
  | { id: number, cmd: 'heap-summary', snapshot: boolean, /** false: as the process is, under load (no full GC first) */ gc?: boolean }
  | { id: number, cmd: 'close' }
  /** The SQL one request sends on Parse's pool, in order (the kit's server only; the data-size scenario EXPLAINs it). */
  | { id: number, cmd: 'capture-sql', path: string, headers: Record<string, string> }

export type Reply = { id: number, ok: true, value?: unknown } | { id: number, ok: false, error: string }

export interface MemorySample { rssMB: number, heapUsedMB: number }

/** Sent once by the server when it listens, is seeded and has checked itself. */
export interface ServerReady {
  type: 'ready'
  origin: string
  sessionToken: string
  userId: string
  bootMs: number
  memory: MemorySample
  /** Requests the server saw while one listNotes call ran: 1 means the SDK ran in-process (directAccess). */
  requestsPerListNotes: number
  /** The two statements one listNotes call sends, replayed by scenario 5pg. */
  baselineSql: { find: string, count: string }
  /** The server's database (postgres://…), where the data-size scenario fills its tables (test/bench/data-size.ts). */
  databaseUrl?: string
  /** Where LiveQuery listens (ws://…), when the server runs it on Note (BENCH_LIVE_QUERY=1; the data-size scenario's fan-out). */
  liveQueryUrl?: string
}

/** One scale measurement (test/bench/scale.ts), printed on a line starting with SCALE_RESULT_MARK. */
export interface ScaleSample {
  functions: number
  /** Routes Fastify registered under the mount for the declared functions (each gets 3–4). */
  declaredRoutes: number
  /** Creating and decorating the N functions. */
  declareMs: number
  /** register(kitPlugin) → ready(): database, Parse Server, mount, routes, schemas. */
  bootMs: number
  /** CPU time of this process (user + system) over the same span: steadier than bootMs on a busy machine. */
  bootCpuMs?: number
  /** First to last declared route registered (the part of boot that depends on N before schema compilation). */
  routeSpanMs: number
  /** First GET /api-docs/json (the document is built), then a second one; null when the docs option is unavailable. */
  docsFirstMs: number | null
  docsSecondMs: number | null
  docsBytes: number | null
  docsNote?: string
  /** Right after ready(), before the docs are built. */
  memory: MemorySample
}

export const SCALE_RESULT_MARK = 'BENCH_SCALE_RESULT '

/** Bare Fastify registering the routes of N generated functions (test/bench/bare-routes.ts): the scale boot's baseline. */
export interface BareRoutesSample {
  functions: number
  /** Routes Fastify registered (counted as the kit's are). */
  routes: number
  /** register → ready() */
  bootMs: number
  bootCpuMs: number
}

export const BARE_ROUTES_RESULT_MARK = 'BENCH_BARE_ROUTES_RESULT '

/**
 * A fresh directory for a bench server's database. Not test/helpers/kit.ts's
 * tempDir: that module loads the MongoDB driver (for the tests' MongoDB lane),
 * which the bench server's memory must not include.
 */
export function benchTempDir (prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  chmodSync(dir, 0o755) // PostgreSQL runs as user postgres when the bench runs as root
  return dir
}

export function memorySample (): MemorySample {
  const { rss, heapUsed } = process.memoryUsage()
  return { rssMB: round(rss / 2 ** 20, 1), heapUsedMB: round(heapUsed / 2 ** 20, 1) }
}

export function round (value: number, digits = 0): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

export function median (values: number[]): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

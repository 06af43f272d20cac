// The test lanes, and which test files share a process.
//
// A test process costs some 2.5 CPU-s before its first assertion (tsx, tap,
// Fastify, Parse Server, the first kit's cold code), more than most files'
// own work. So the files that run in-process and mostly compute share a few
// long-lived processes: test/_groups/<group>.test.ts runs its list one file
// after another (test/helpers/file-group.ts), each file's declarations its
// own. Files that spawn instances, wait on clocks, install hooks on the root
// test or on process-wide singletons run in processes of their own.
//
// `node test/lanes.mjs <lane> [tap options] [files]` runs a lane; given
// files, it runs those files alone, each in its own process.
import { spawn } from 'node:child_process'
import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readdirSync, statfsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

/**
 * Files of each group, in running order: a file that adds a hook to the root
 * test goes last, `parse-contract` (it reads Parse's functions before a kit
 * wraps them) first. Files with snapshots run alone (their keys name the file).
 * The `waits` lane is PostgreSQL's too: files that mostly wait on the instances
 * they spawn (leases expiring, schedules ticking), some three minutes of little
 * CPU. tap's start order among parallel files is not the listed one, so they
 * get a runner of their own, which test/suite.mjs starts at once.
 */
export const GROUPS = {
  'waits-a': ['jobs-lost', 'jobs-lost-race', 'jobs-cluster'],
  'postgres-a': ['adapter-read', 'attack-roles', 'schema-changes', 'attack-scale', 'attack-model', 'attack-version'],
  'postgres-b': ['function-aliases', 'rest-edges', 'hostile-requests', 'index-builds', 'indexes', 'sessions'],
  'postgres-c': ['postgres-edges', 'cors', 'endpoints', 'restriction', 'attack-gate', 'attack-jobs', 'attack-triggers'],
  'postgres-d': ['parse-contract', 'attack-admission', 'cli-served', 'function-serving', 'schema-conformance', 'index-commands', 'shared-schema'],
  'postgres-e': ['faults', 'client-contract', 'dashboard', 'shared-lookups', 'queue', 'attack-system-classes', 'attack-cli', 'attack-auth-routes', 'attack-rate-limits', 'attack-live-query', 'query-refusals', 'attack-functions', 'job-lease-upgrade', 'rate-limit-stores'],
  'postgres-f': ['live-query', 'example-app', 'docs', 'deferred-subsystems', 'start', 'install', 'jobs'],
  'unit-a': ['docs-code-blocks', 'parse-seam-lint', 'layering', 'error-codes', 'keyword-scan', 'head-route', 'schema-generations', 'forget-declarations', 'role-cache'],
  'unit-b': ['starter', 'parse-logger', 'pure-rules', 'mongo-logic', 'unavailable', 'trigger-declarations', 'function-declarations', 'schema-declarations', 'redis-bound', 'no-module-state', 'parse-seam-inventory', 'admission', 'lanes', 'bench-cpu', 'options'],
  'mongo-a': ['parse-contract', 'adapter-read', 'faults', 'indexes', 'index-commands', 'shared-schema', 'sessions'],
  'mongo-b': ['rest-edges', 'restriction', 'endpoints', 'schema-changes', 'schema-conformance', 'attack-version', 'attack-scale', 'attack-model', 'query-refusals', 'queue', 'jobs']
}

/** The MongoDB lane's files outside its groups (a kit per process, or spawned instances). */
const MONGO_ALONE = ['boot-many-models']
/**
 * The `waits` lane's files outside its group: they spawn instances and mostly
 * wait on them, so they run from the start beside the jobs group, not at the
 * end of the PostgreSQL lane (tap starts files in the order of their paths).
 */
const WAITS_ALONE = ['boot-failures', 'boot-many-models', 'cluster', 'queue-cluster', 'rolling-restart']
/** Run beside the lanes by test/suite.mjs, on a track of its own. */
export const CLI_TEST = 'test/cli.test.ts'

const asPath = (name) => `test/${name}.test.ts`
const groupsOf = (prefix) => Object.keys(GROUPS).filter((name) => name.startsWith(`${prefix}-`))
const groupEntries = (prefix) => groupsOf(prefix).map((name) => `test/_groups/${name}.test.ts`)
const groupedFiles = (prefix) => new Set(groupsOf(prefix).flatMap((name) => GROUPS[name]).map(asPath))

/** Every test file directly under test/. */
export function testFiles () {
  return readdirSync(here).filter((name) => name.endsWith('.test.ts')).sort().map((name) => `test/${name}`)
}

/** The files tap runs for a lane: its groups first (the longest work), then the files that run alone. */
export function laneFiles (lane) {
  if (lane === 'unit') return groupEntries('unit')
  if (lane === 'mongo') return [...groupEntries('mongo'), ...MONGO_ALONE.map(asPath)]
  if (lane === 'waits') return [...groupEntries('waits'), ...WAITS_ALONE.map(asPath)]
  if (lane === 'postgres') {
    const grouped = new Set([...groupedFiles('postgres'), ...groupedFiles('unit'), ...groupedFiles('waits'), ...WAITS_ALONE.map(asPath)])
    return [...groupEntries('postgres'), ...groupEntries('unit'), ...testFiles().filter((file) => !grouped.has(file) && file !== CLI_TEST)]
  }
  throw new Error(`unknown lane "${lane}": postgres, waits, mongo or unit`)
}

const LANE_SETTINGS = {
  // One slot more than the cores: boots and PostgreSQL leave a core idle at times.
  postgres: { jobs: 3, env: {} },
  // The jobs group's three minutes of waiting in one slot, the other files one after another in the other.
  waits: { jobs: 2, env: {} },
  mongo: { jobs: 2, env: { KIT_TEST_DATABASE: 'mongo' } },
  unit: { jobs: 2, env: {} }
}

/**
 * The tests' temporary folder: a folder of this user's on /dev/shm (memory)
 * when it is writable with 2 GB free and TMPDIR is not set, else the OS's.
 * Test clusters, databases and scratch folders are made and removed by the
 * thousand files: on the disk's ext4, finding a free inode among recently
 * deleted ones made that some 25 CPU-s of a run (docs/internals/testing.md).
 */
export function testTmpdir (env = process.env) {
  if (env.TMPDIR) return undefined
  try {
    accessSync('/dev/shm', constants.W_OK)
    const { bavail, bsize } = statfsSync('/dev/shm')
    if (bavail * bsize < 2 * 1024 ** 3) return undefined
    const uid = process.getuid()
    const dir = `/dev/shm/fpk-tests-${uid}`
    // 1777 as /tmp: the embedded PostgreSQL's OS user works in it too. Not one someone else made.
    mkdirSync(dir, { mode: 0o1777, recursive: true })
    const made = lstatSync(dir)
    if (!made.isDirectory() || made.uid !== uid) return undefined
    chmodSync(dir, 0o1777) // mkdir's mode passes through the umask
    return dir
  } catch {
    return undefined // no /dev/shm (not Linux), or not ours to use
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `postgres,waits`: both lanes' files in one run (the first lane's settings).
  const [laneList = '', ...rest] = process.argv.slice(2)
  const lanes = laneList.split(',')
  const settings = LANE_SETTINGS[lanes[0]]
  if (!settings || lanes.some((lane) => !LANE_SETTINGS[lane])) {
    process.stderr.write('usage: node test/lanes.mjs <postgres|waits|mongo|unit>[,<lane>…] [tap options] [files]\n')
    process.exit(2)
  }
  const named = rest.filter((arg) => !arg.startsWith('-'))
  const files = named.length > 0 ? named : lanes.flatMap(laneFiles)
  const options = rest.filter((arg) => arg.startsWith('-'))
  const tmp = testTmpdir()
  const child = spawn(path.join(here, '..', 'node_modules', '.bin', 'tap'), [`--jobs=${settings.jobs}`, ...options, ...files], {
    stdio: 'inherit', env: { ...process.env, ...settings.env, ...(tmp ? { TMPDIR: tmp } : {}) }
  })
  child.on('close', (code, signal) => { process.exitCode = code ?? (signal ? 1 : 0) })
}

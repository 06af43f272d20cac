// The lanes and groups of test/lanes.mjs stay consistent with the files on
// disk, and what a group's process relies on holds (test/helpers/file-group.ts).
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { CLI_TEST, GROUPS, laneFiles, testFiles, testTmpdir } from './lanes.mjs'
import { importClosure } from './helpers/file-group.js'

const testDir = import.meta.dirname
const root = path.dirname(testDir)
const lanesOf = { postgres: ['postgres', 'waits', 'unit'], mongo: ['mongo'] }
const groupsOfLane = (lane: keyof typeof lanesOf) => Object.keys(GROUPS).filter((name) => lanesOf[lane].includes(name.split('-')[0]))

t.test('every group has its entry file, and every entry file its group', async (t) => {
  const entries = readdirSync(path.join(testDir, '_groups')).filter((name) => name.endsWith('.test.ts')).map((name) => name.slice(0, -'.test.ts'.length))
  t.same(entries.sort(), Object.keys(GROUPS).sort())
  t.same(Object.keys(GROUPS).filter((name) => !/^(postgres|waits|unit|mongo)-/.test(name)), [], 'a group\'s name starts with its lane')
})

t.test('every grouped file exists, once per lane, without snapshots', async (t) => {
  for (const [group, files] of Object.entries(GROUPS)) {
    for (const name of files) t.ok(existsSync(path.join(testDir, `${name}.test.ts`)), `${group}: test/${name}.test.ts exists`)
  }
  for (const lane of ['postgres', 'mongo'] as const) {
    const names = groupsOfLane(lane).flatMap((group) => GROUPS[group])
    t.same(names.filter((name, index) => names.indexOf(name) !== index), [], `no file in two ${lane} groups`)
  }
  const snapshotted = Object.values(GROUPS).flat().filter((name) => existsSync(path.join(root, 'tap-snapshots', 'test', `${name}.test.ts.test.cjs`)))
  t.same(snapshotted, [], 'a snapshot key names the file tap runs: files with snapshots run alone')
})

t.test('the PostgreSQL lanes run every test file once, the CLI test aside', async (t) => {
  const lane = [...laneFiles('postgres'), ...laneFiles('waits')]
  const grouped = groupsOfLane('postgres').flatMap((group) => GROUPS[group]).map((name) => `test/${name}.test.ts`)
  const alone = lane.filter((file) => !file.startsWith('test/_groups/'))
  t.same([...grouped, ...alone].sort(), testFiles().filter((file) => file !== CLI_TEST).sort())
  t.notOk(lane.includes(CLI_TEST), 'the CLI test runs on the other track (test/suite.mjs)')
})

t.test('a grouped file that hooks every later test of the root runs last in its group', async (t) => {
  for (const [group, files] of Object.entries(GROUPS)) {
    files.forEach((name, index) => {
      const source = readFileSync(path.join(testDir, `${name}.test.ts`), 'utf8')
      const hook = /^t\.(before|beforeEach|afterEach|after)\(/m.exec(source)
      if (hook && index !== files.length - 1) t.fail(`${group}: test/${name}.test.ts calls t.${hook[1]} on the root test; it would run for the files after it`)
    })
  }
  t.pass('checked every grouped file')
})

t.test('importClosure: the project files a file runs, dependencies first, type-only imports left out', async (t) => {
  const dir = path.join(testDir, 'scratch', `closure-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const write = (name: string, text: string) => writeFileSync(path.join(dir, name), text)
  write('leaf.ts', 'export const leaf = 1\n')
  write('types.ts', 'export interface Shape { a: number }\n')
  write('middle.ts', "import { leaf } from './leaf.js'\nimport type { Shape } from './types.js'\nexport const middle: Shape = { a: leaf }\n")
  write('lazy.ts', 'export const lazy = 2\n')
  write('top.ts', "import {\n  middle\n} from './middle.js'\nimport 'node:fs'\nimport './leaf.js'\nexport { lazy } from './lazy.js'\nexport async function later () { return await import('./lazy.js') }\nconsole.log(middle)\n")
  const order = importClosure(path.join(dir, 'top.ts')).map((file) => path.basename(file))
  t.same(order, ['leaf.ts', 'middle.ts', 'lazy.ts', 'top.ts'])
})

t.test('the lanes\' temporary folder: on memory when /dev/shm has room, the user\'s TMPDIR when set', async (t) => {
  t.equal(testTmpdir({ TMPDIR: '/somewhere/else' }), undefined, 'a TMPDIR the user set is left alone')
  const dir = testTmpdir({})
  if (!existsSync('/dev/shm')) {
    t.equal(dir, undefined, 'no /dev/shm: the OS temp folder')
    return
  }
  t.ok(dir?.startsWith('/dev/shm/'), `on memory: ${dir}`)
  const stat = statSync(dir!)
  t.equal(stat.uid, process.getuid!(), 'a folder of this user\'s')
  t.equal(stat.mode & 0o7777, 0o1777, 'open to the embedded PostgreSQL\'s OS user, sticky as /tmp')
})

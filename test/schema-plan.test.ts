// `fpk schema plan` against a database a real boot left behind: no change → 0,
// an added field → 1, a removed unique index → 2, each change named.
import t from 'tap'
import path from 'node:path'
import { rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Io } from '../cli/context.js'
import { main } from '../cli/fpk.js'
import { lane, startKit, tempDir } from './helpers/kit.js'
import { mongoReplicaSet } from './helpers/mongo.js'

/** PlanItem, one version per directory (test/plan-models/v1…v4). */
const MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'plan-models')
const models = (version: string) => path.join(MODELS, version)

function io (cwd: string, env: Record<string, string | undefined>) {
  const out: string[] = []
  const err: string[] = []
  const value: Io = { cwd, env, out: (text) => { out.push(text) }, err: (text) => { err.push(text) }, interactive: false, fancyProgress: false, ask: async () => '' }
  return { value, out, err }
}

t.test('fpk schema plan', async (t) => {
  const root = tempDir()
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'plan-project', type: 'module' }))
  const dataDir = path.join(root, '.data', 'postgres')
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const env = mongo ? { DATABASE_URI: mongo.uri } : {}
  const plan = async (modelsDir: string) => {
    const run = io(root, env)
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', modelsDir], run.value)
    return { code, out: run.out.join(''), err: run.err.join('') }
  }

  const first = models('v1')
  const kit = await startKit(t, { models: first, dataDir, ...(mongo ? { databaseURI: mongo.uri } : {}) })
  await kit.app.kit.indexesApplied
  await kit.app.close()

  t.test('nothing changed: exit 0', async (t) => {
    const result = await plan(first)
    t.equal(result.code, 0, result.out + result.err)
    t.match(result.out, /^No changes: the database matches the declarations\./)
  })

  t.test('a field added: exit 1, and the change named', async (t) => {
    const result = await plan(models('v2'))
    t.equal(result.code, 1, result.out + result.err)
    t.match(result.out, /^ {2}PlanItem: field added: weight \(Number\)$/m)
    t.match(result.out, /1 change at the next boot\./)
  })

  t.test('a unique index removed, a rule and a permission changed: exit 2, each named', async (t) => {
    const result = await plan(models('v3'))
    t.equal(result.code, 2, result.out + result.err)
    const unique = lane.kind === 'postgres' ? 'PlanItem_unique_sku' : 'PlanItem_sku_1_unique'
    t.match(result.out, new RegExp(`^! PlanItem: index ${unique} dropped: .*\\(no longer declared\\) {2}\\[destructive\\]$`, 'm'))
    if (lane.kind === 'postgres') t.match(result.out, /^ {2}PlanItem: constraint PlanItem_kind_check replaced: enum a,b → a,b,c$/m)
    t.match(result.out, /^ {2}PlanItem: class-level permission delete: \{\} → \{"requiresAuthentication":true\}$/m)
    t.match(result.out, /destructive \(marked !\)/)
  })

  t.test('a type change is destructive; a missing database is a clear refusal', async (t) => {
    const result = await plan(models('v4'))
    t.equal(result.code, 2)
    t.match(result.out, /^! PlanItem: field type changed: kind String → Number \(the boot fails until recreateModifiedFields: true/m)
    const nowhere = io(root, {})
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', first, '--data-dir', path.join(root, 'none')], nowhere.value)
    t.equal(code, 1)
    t.match(nowhere.err.join(''), /^fpk: no DATABASE_URI and no embedded database at .*none: set DATABASE_URI, or pass --data-dir/)
  })

  t.test('an embedded database the application holds is refused in one line', { skip: lane.kind === 'postgres' ? false : 'the embedded PostgreSQL' }, async (t) => {
    // A database of its own: the process now holds the last version (v4) of PlanItem.
    const held = path.join(root, 'held', 'postgres')
    const running = await startKit(t, { models: models('v4'), dataDir: held })
    await running.app.kit.indexesApplied
    const run = io(root, {})
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', models('v4'), '--data-dir', held], run.value)
    const result = { code, err: run.err.join('') }
    await running.app.close()
    t.equal(result.code, 1)
    // A line before it may say where the embedded database runs from (a data directory user postgres cannot reach).
    t.match(result.err, /^fpk: cannot open the database: The data directory .* is in use by PostgreSQL \(pid \d+\) of another running instance/m)
    t.notMatch(result.err, /\n\s+at /, 'no stack trace')
  })
})

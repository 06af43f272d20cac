// `fpk schema plan` against a database a real boot left behind: no change → 0,
// an added field → 1, a removed unique index → 2, could not run → 3, each
// change named; the plan under the boot's own options (adminRole, strict,
// DATA_DIR) equals what the next boot does; what the stored rows say about a
// change; the statements PostgreSQL will run.
import t, { type Test } from 'tap'
import path from 'node:path'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Io } from '../cli/context.js'
import { main } from '../cli/fpk.js'
import { BaseModel, ParseClass, ParseField } from '../lib/index.js'
import { lane, masterHeaders, startKit, tempDir } from './helpers/kit.js'
import { mongoReplicaSet } from './helpers/mongo.js'

const EXAMPLE_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'models')

/**
 * PlanItem, version 1 to 4, declared here (one model class, one file: each
 * declaration replaces the one before). 2 adds weight; 3 drops sku's unique
 * index, adds 'c' to kind and closes delete; 4 retypes kind to Number.
 */
function declarePlanItem (version: 1 | 2 | 3 | 4) {
  const PlanItem = class extends BaseModel {}
  Object.defineProperty(PlanItem, 'name', { value: 'PlanItem' })
  ParseField({ type: 'String', ...(version === 3 ? {} : { unique: true }) })(PlanItem.prototype, 'sku')
  ParseField(version === 4 ? { type: 'Number' } : { type: 'String', enum: version === 3 ? ['a', 'b', 'c'] : ['a', 'b'] })(PlanItem.prototype, 'kind')
  if (version === 2) ParseField({ type: 'Number' })(PlanItem.prototype, 'weight')
  return ParseClass('PlanItem', { clp: { delete: version === 3 ? { requiresAuthentication: true } : {} } })(PlanItem)
}

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
  // The models are declared in this file: the command loads an empty directory and plans what is declared.
  const first = path.join(root, 'models')
  mkdirSync(first)
  const plan = async (version: 1 | 2 | 3 | 4) => {
    declarePlanItem(version)
    const run = io(root, env)
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', first], run.value)
    return { code, out: run.out.join(''), err: run.err.join('') }
  }

  declarePlanItem(1)
  const kit = await startKit(t, { dataDir, ...(mongo ? { databaseURI: mongo.uri } : {}) })
  await kit.app.kit.indexesApplied
  await kit.app.close()

  t.test('nothing changed: exit 0', async (t) => {
    const result = await plan(1)
    t.equal(result.code, 0, result.out + result.err)
    t.match(result.out, /^No changes: the database matches the declarations\./)
  })

  t.test('a field added: exit 1, and the change named', async (t) => {
    const result = await plan(2)
    t.equal(result.code, 1, result.out + result.err)
    t.match(result.out, /^ {2}PlanItem: field added: weight \(Number\)$/m)
    t.match(result.out, /1 change at the next boot\./)
  })

  t.test('a unique index removed, a rule and a permission changed: exit 2, each named', async (t) => {
    const result = await plan(3)
    t.equal(result.code, 2, result.out + result.err)
    const unique = lane.kind === 'postgres' ? 'PlanItem_unique_sku' : 'PlanItem_sku_1_unique'
    t.match(result.out, new RegExp(`^! PlanItem: index ${unique} dropped: .*\\(no longer declared\\) {2}\\[destructive\\]$`, 'm'))
    if (lane.kind === 'postgres') t.match(result.out, /^ {2}PlanItem: constraint PlanItem_kind_check replaced: enum a,b → a,b,c$/m)
    t.match(result.out, /^ {2}PlanItem: class-level permission delete: \{\} → \{"requiresAuthentication":true\}$/m)
    t.match(result.out, /destructive \(marked !\)/)
  })

  t.test('a type change is destructive; a missing database is a clear refusal', async (t) => {
    const result = await plan(4)
    t.equal(result.code, 2)
    t.match(result.out, /^! PlanItem: field type changed: kind String → Number \(the boot fails until recreateModifiedFields: true/m)
    const nowhere = io(root, {})
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', first, '--data-dir', path.join(root, 'none')], nowhere.value)
    t.equal(code, 3, 'could not run: neither "no change" nor "changes"')
    t.match(nowhere.err.join(''), /^fpk: no DATABASE_URI and no embedded database at .*none: set DATABASE_URI \(or DATA_DIR\), or pass --data-dir/)
  })

  t.test('an embedded database the application holds is refused in one line', { skip: lane.kind === 'postgres' ? false : 'the embedded PostgreSQL' }, async (t) => {
    // A database of its own: the process now holds the last version (4) of PlanItem.
    const held = path.join(root, 'held', 'postgres')
    const running = await startKit(t, { dataDir: held })
    await running.app.kit.indexesApplied
    const run = io(root, {})
    const code = await main(['node', 'fpk', 'schema', 'plan', '--models', first, '--data-dir', held], run.value)
    const result = { code, err: run.err.join('') }
    await running.app.close()
    t.equal(result.code, 3)
    // A line before it may say where the embedded database runs from (a data directory user postgres cannot reach).
    t.match(result.err, /^fpk: cannot open the database: The data directory .* is in use by PostgreSQL \(pid \d+\) of another running instance/m)
    t.notMatch(result.err, /\n\s+at /, 'no stack trace')
  })
})

/** A project directory for the CLI, and `fpk schema plan …` run in it. */
function planProject (t: Test) {
  const root = tempDir()
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'plan-options', type: 'module' }))
  const dataDir = path.join(root, '.data', 'postgres')
  // The models of these tests are declared in this file: the CLI loads an empty directory and plans what the registry holds.
  const none = path.join(root, 'models')
  mkdirSync(none)
  return {
    root,
    dataDir,
    none,
    async plan (env: Record<string, string | undefined>, ...args: string[]) {
      const run = io(root, env)
      const code = await main(['node', 'fpk', 'schema', 'plan', ...args], run.value)
      return { code, out: run.out.join(''), err: run.err.join('') }
    }
  }
}

t.test('the plan takes the boot\'s options, and equals what the next boot does (the example application)', async (t) => {
  const project = planProject(t)
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const env = mongo ? { DATABASE_URI: mongo.uri } : { DATA_DIR: project.dataDir }
  const database = mongo ? { databaseURI: mongo.uri } : {}
  const first = await startKit(t, { models: EXAMPLE_MODELS, dataDir: project.dataDir, adminRole: 'Boss', ...database })
  await first.app.kit.indexesApplied
  await first.app.close()

  // DATA_DIR (as generated projects set it) finds the embedded database: no --data-dir.
  const same = await project.plan(env, '--models', EXAMPLE_MODELS, '--admin-role', 'Boss', '--no-strict')
  t.equal(same.code, 0, same.out + same.err)
  t.match(same.out, /^No changes: the database matches the declarations\./)
  const otherRole = await project.plan(env, '--models', EXAMPLE_MODELS)
  t.equal(otherRole.code, 1, 'without the application\'s adminRole the plan predicts what the boot never does')
  t.match(otherRole.out, /^ {2}_Role: class-level permission create: \{"role:Boss":true\} → \{"role:SuperAdmin":true\}$/m)

  // A class declared since: strict: false creates nothing at boot, and the plan says so.
  @ParseClass('PlanLater')
  class PlanLater extends BaseModel {
    @ParseField({ type: 'String' }) declare title: string
  }
  t.ok(PlanLater)
  const strict = await project.plan(env, '--models', EXAMPLE_MODELS, '--admin-role', 'Boss')
  t.equal(strict.code, 1)
  t.match(strict.out, /^ {2}PlanLater: class created with title \(String\)$/m)
  const notStrict = await project.plan(env, '--models', EXAMPLE_MODELS, '--admin-role', 'Boss', '--no-strict')
  t.equal(notStrict.code, 0, notStrict.out + notStrict.err)

  const second = await startKit(t, { models: EXAMPLE_MODELS, dataDir: project.dataDir, adminRole: 'Boss', schema: { strict: false }, ...database })
  await second.app.kit.indexesApplied
  const later = await second.request('GET', '/parse/schemas/PlanLater', { headers: masterHeaders })
  t.equal(later.status, 400, 'the boot created no class, as planned')
  await second.app.close()
  const after = await project.plan(env, '--models', EXAMPLE_MODELS, '--admin-role', 'Boss', '--no-strict')
  t.equal(after.code, 0, after.out + after.err)
})

t.test('data checks, --sql, and a plan that could not run', async (t) => {
  const project = planProject(t)
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const env = mongo ? { DATABASE_URI: mongo.uri } : {}
  const database = mongo ? { databaseURI: mongo.uri } : {}
  const where = ['--models', project.none, '--data-dir', project.dataDir]

  // Two versions of one model class (same name, same file): the later declaration replaces the earlier.
  const declareFirst = () => {
    @ParseClass('PlanCheck')
    class PlanCheck extends BaseModel {
      @ParseField({ type: 'String' }) declare sku: string
      @ParseField({ type: 'String' }) declare kind: string
      @ParseField({ type: 'Number' }) declare n: number
    }
    return PlanCheck
  }
  // The next version: sku unique, kind an enum, n required, w a new required field.
  const declareNext = () => {
    @ParseClass('PlanCheck')
    class PlanCheck extends BaseModel {
      @ParseField({ type: 'String', unique: true }) declare sku: string
      @ParseField({ type: 'String', enum: ['a', 'b'] }) declare kind: string
      @ParseField({ type: 'Number', required: true }) declare n: number
      @ParseField({ type: 'Number', required: true }) declare w: number
    }
    return PlanCheck
  }
  t.ok(declareFirst())
  const kit = await startKit(t, { dataDir: project.dataDir, ...database, allowedRoutes: [{ path: '/classes/*' }] })
  await kit.app.kit.indexesApplied
  for (const row of [{ sku: 'A', kind: 'a', n: 1 }, { sku: 'A', kind: 'z' }, { sku: 'B', kind: 'a' }]) {
    t.equal((await kit.request('POST', '/parse/classes/PlanCheck', { headers: masterHeaders, body: row })).status, 201)
  }
  await kit.app.close()

  t.ok(declareNext())
  const result = await project.plan(env, ...where, '--sql')
  t.equal(result.code, 1, result.out + result.err)
  const unique = lane.kind === 'postgres' ? 'PlanCheck_unique_sku' : 'PlanCheck_sku_1_unique'
  t.match(result.out, new RegExp(`^ {2}PlanCheck: index ${unique} created: .*\\(will fail: 1 value is held by more than one row \\(2 rows\\); remove the duplicates first\\)$`, 'm'), 'duplicates under a new unique index')
  t.match(result.out, /^ {2}PlanCheck: field required: n \(was optional\) \(2 stored rows hold no value: kept/m, 'rows without a value under a new required field')
  t.match(result.out, /^ {2}PlanCheck: field added: w \(Number, required\) \(3 stored rows hold no value/m)
  t.match(result.out, /of them will fail on the stored rows/)
  if (lane.kind === 'postgres') {
    t.match(result.out, /^ {2}PlanCheck: constraint PlanCheck_kind_check created: enum a,b \(will fail on 1 stored row: /m, 'rows an added CHECK rejects')
    t.match(result.out, /^ {6}ALTER TABLE "PlanCheck" ADD COLUMN IF NOT EXISTS "w" double precision$/m, '--sql: the column')
    t.match(result.out, /^ {6}CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "PlanCheck_unique_sku" ON "PlanCheck" \("sku"\)$/m, '--sql: the index')
    t.match(result.out, /^ {6}ALTER TABLE "PlanCheck" ADD CONSTRAINT "PlanCheck_kind_check" CHECK \("kind" IS NULL OR \("kind" IN \('a','b'\)\)\) NOT VALID$/m, '--sql: the CHECK')
    const plain = await project.plan(env, ...where)
    t.notMatch(plain.out, /ALTER TABLE/, 'no statements without --sql')
  }

  // The next version boots (generation 2); the first one's plan is then behind, and its boot would change nothing.
  const next = await startKit(t, { dataDir: project.dataDir, ...database })
  await next.app.kit.indexesApplied
  await next.app.close()
  declareFirst()
  const older = await project.plan(env, ...where)
  t.equal(older.code, 0, older.out + older.err)
  t.match(older.out, /^\[schema\] this instance is behind: the database was reconciled to generation 2 .*\nNo changes: these declarations are older than the database's, and their boot changes nothing\.\n$/)

  // Could not run: exit 3, whatever the reason.
  const missing = await project.plan({}, '--models', project.none, '--data-dir', path.join(project.root, 'nowhere'))
  t.equal(missing.code, 3, missing.err)
  const unknown = await project.plan(env, ...where, '--no-such-option')
  t.equal(unknown.code, 3, 'an option the command does not know')
  const broken = path.join(project.root, 'broken')
  mkdirSync(broken)
  writeFileSync(path.join(broken, 'Broken.js'), 'throw new Error("this model file does not load")\n')
  const unloadable = await project.plan(env, '--models', broken, '--data-dir', project.dataDir)
  t.equal(unloadable.code, 3)
  t.match(unloadable.err, /^fpk: could not plan: this model file does not load/)
})

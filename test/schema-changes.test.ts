// A model changes between two boots on the same database: the database then
// enforces exactly the new declaration (CHECK constraints and indexes read back
// from the catalogue, and answers over REST), and a broken constraint answers
// 142 naming the field on every save path.
// And, from the former schema-plan.test.ts (its tests keep their names, after
// this file's own): `fpk schema plan` against a database a real boot left
// behind: no change → 0, an added field → 1, a removed unique index → 2, could
// not run → 3, each change named; the plan under the boot's own options
// (adminRole, strict, DATA_DIR) equals what the next boot does; what the stored
// rows say about a change; the statements PostgreSQL will run. (Mig, declared
// here at import, is in every boot's schema there too.)
import t, { type Test } from 'tap'
import path from 'node:path'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, catchError, type CloudRequest } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import type { Io } from '../cli/context.js'
import { main } from '../cli/fpk.js'
import { lane, masterHeaders, needsRealMongo, startKit, tempDir, type Kit } from './helpers/kit.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { sharedPostgres } from './helpers/shared-postgres.js'

// The first version of the model.
function declareFirst () {
  @ParseClass('Mig', {
    compoundIndexes: [
      { name: 'Mig_ab', fields: ['a', 'b'] },
      { name: 'Mig_part', fields: ['a'], unique: true, partial: { active: true } }
    ]
  })
  class Mig extends BaseModel {
    @ParseField({ type: 'String', maxLength: 10 }) declare name: string
    @ParseField({ type: 'String', maxLength: 3 }) declare label: string
    @ParseField({ type: 'String', enum: ['a', 'b'] }) declare kind: string
    @ParseField({ type: 'Number', min: 0 }) declare qty: number
    @ParseField({ type: 'Number', max: 10 }) declare score: number
    @ParseField({ type: 'String' }) declare sku: string
    @ParseField({ type: 'String', unique: true }) declare code: string
    @ParseField({ type: 'Number', index: 1 }) declare rank: number
    @ParseField({ type: 'String' }) declare dup: string
    @ParseField({ type: 'String' }) declare a: string
    @ParseField({ type: 'String' }) declare b: string
    @ParseField({ type: 'Boolean' }) declare active: boolean
    @ParseField({ type: 'Date' }) declare due: Date
  }
  return Mig
}

// The second: each kind of change, and one index the data cannot take (dup holds duplicates).
function declareSecond () {
  @ParseClass('Mig', {
    compoundIndexes: [
      { name: 'Mig_ab', fields: ['b', 'a'] },
      { name: 'Mig_part', fields: ['a'], unique: true, partial: { active: false } }
    ]
  })
  class Mig extends BaseModel {
    @ParseField({ type: 'String', maxLength: 5 }) declare name: string
    @ParseField({ type: 'String', maxLength: 8 }) declare label: string
    @ParseField({ type: 'String', enum: ['a', 'c'] }) declare kind: string
    @ParseField({ type: 'Number' }) declare qty: number
    @ParseField({ type: 'Number' }) declare score: number
    @ParseField({ type: 'String', unique: true }) declare sku: string
    @ParseField({ type: 'String' }) declare code: string
    @ParseField({ type: 'Number' }) declare rank: number
    @ParseField({ type: 'String', unique: true }) declare dup: string
    @ParseField({ type: 'String' }) declare a: string
    @ParseField({ type: 'String' }) declare b: string
    @ParseField({ type: 'Boolean' }) declare active: boolean
    @ParseField({ type: 'Date' }) declare due: Date
  }
  return Mig
}

// The second with one field added and another retyped: a boot that refuses the retype applies neither.
function declareRetyped () {
  @ParseClass('Mig', {
    compoundIndexes: [
      { name: 'Mig_ab', fields: ['b', 'a'] },
      { name: 'Mig_part', fields: ['a'], unique: true, partial: { active: false } }
    ]
  })
  class Mig extends BaseModel {
    @ParseField({ type: 'String', maxLength: 5 }) declare name: string
    @ParseField({ type: 'String', maxLength: 8 }) declare label: string
    @ParseField({ type: 'String', enum: ['a', 'c'] }) declare kind: string
    @ParseField({ type: 'String' }) declare qty: string
    @ParseField({ type: 'Number' }) declare score: number
    @ParseField({ type: 'String', unique: true }) declare sku: string
    @ParseField({ type: 'String' }) declare code: string
    @ParseField({ type: 'Number' }) declare rank: number
    @ParseField({ type: 'String', unique: true }) declare dup: string
    @ParseField({ type: 'String' }) declare a: string
    @ParseField({ type: 'String' }) declare b: string
    @ParseField({ type: 'Boolean' }) declare active: boolean
    @ParseField({ type: 'Date' }) declare due: Date
    @ParseField({ type: 'String' }) declare extra: string
  }
  return Mig
}

let Mig = declareFirst()

// A declared handler that saves what it is sent, through fromParams.
@Route('migs')
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class MigFunctions {
  @CloudFunction({ methods: ['POST'] })
  static async saveMig (request: CloudRequest) {
    const object = (Mig as unknown as { fromParams (params: unknown): Parse.Object }).fromParams(request.params)
    await object.save(null, { useMasterKey: true })
    return { id: object.id }
  }
}

interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>> }

/** Log lines of one boot (pino JSON, `msg` only). */
function logLines () {
  const lines: string[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        try { lines.push(JSON.parse(line).msg) } catch { lines.push(line) }
      }
      done()
    }
  })
  return { lines, server: { logger: { level: 'info', stream } } }
}

const save = (kit: Kit, body: Record<string, unknown>) => kit.request('POST', '/parse/classes/Mig', { headers: masterHeaders, body })

t.test('boot, change every kind of declaration, boot again on the same database', async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  // One database for every boot (a database on the process's shared PostgreSQL); the dataDir keeps the files beside it.
  const same = { dataDir: path.join(dir, 'postgres'), ...(mongo ? { databaseURI: mongo.uri } : await sharedPostgres(t)), allowedRoutes: [{ path: '/classes/*' }, { path: '/batch' }] }
  const checks = async () => new Map((await pg().any(`
    SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
    WHERE r.relname = 'Mig' AND c.contype = 'c'`)).map((row) => [row.name as string, row.def as string]))
  const indexes = async () => new Map((await pg().any("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'Mig'")).map((row) => [row.indexname as string, row.indexdef as string]))
  const pg = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client

  // Boot 1.
  const first = await startKit(t, same)
  await first.app.kit.indexesApplied
  t.equal((await save(first, { name: '0123456789', label: 'abc', kind: 'a', qty: 0, score: 10, code: 'X', sku: 'S1', dup: 'd', a: 'p', active: true })).status, 201)
  t.equal((await save(first, { code: 'Y', sku: 'S2', dup: 'd', a: 'p', active: false })).status, 201)

  if (lane.kind === 'postgres') {
    const before = await checks()
    t.match(before.get('Mig_name_check'), /char_length\(name\) <= 10/, 'boot 1: maxLength 10')
    t.match(before.get('Mig_kind_check'), /'a'.*'b'/, 'boot 1: enum a, b')
    t.ok(before.has('Mig_qty_check') && before.has('Mig_score_check'), 'boot 1: min and max')
    const made = await indexes()
    t.ok(made.has('Mig_unique_code') && made.has('Mig_rank_1'), 'boot 1: unique and ordered')
    t.match(made.get('Mig_ab'), /\(a, b\)/)
    t.match(made.get('Mig_part'), /WHERE \(active = true\)/)
    // An index the kit did not make is left alone at every boot.
    await pg().any('CREATE INDEX "Mig_by_hand" ON "Mig" ("b")')
  }
  const [duplicate] = [await save(first, { code: 'X' })]
  t.equal(duplicate.json?.code, Parse.Error.DUPLICATE_VALUE, 'boot 1: code is unique')
  await first.app.close()

  // Boot 2, same database, the second declaration.
  Mig = declareSecond()
  const log = logLines()
  const second = await startKit(t, same, log.server)
  await second.app.kit.indexesApplied

  t.test('the catalogue holds exactly the new declaration', { skip: lane.kind === 'postgres' ? false : 'reads PostgreSQL\'s catalogue' }, async (t) => {
    const after = await checks()
    t.match(after.get('Mig_name_check'), /char_length\(name\) <= 5/, 'maxLength down')
    t.match(after.get('Mig_label_check'), /char_length\(label\) <= 8/, 'maxLength up')
    t.match(after.get('Mig_kind_check'), /'a'.*'c'/, 'enum value added')
    t.notMatch(after.get('Mig_kind_check'), /'b'/, 'enum value removed')
    t.notOk(after.has('Mig_qty_check'), 'min removed')
    t.notOk(after.has('Mig_score_check'), 'max removed')
    const made = await indexes()
    t.ok(made.has('Mig_unique_sku'), 'unique added')
    t.notOk(made.has('Mig_unique_code'), 'unique removed')
    t.notOk(made.has('Mig_rank_1'), 'index removed')
    t.match(made.get('Mig_ab'), /\(b, a\)/, 'compound index changed')
    t.match(made.get('Mig_part'), /WHERE \(active = false\)/, 'partial filter changed')
    t.ok(made.has('Mig_by_hand'), 'an index the kit did not make is kept')
    t.notOk(made.has('Mig_unique_dup'), 'the unique index the data cannot take is missing…')
  })

  // The stand-in has no dropIndexes command: replacing and dropping need a real MongoDB.
  t.test('MongoDB: the indexes follow the new declaration', { skip: lane.kind === 'mongo' ? needsRealMongo() : 'the MongoDB lane' }, async (t) => {
    const adapter = currentDatabase()!.adapter as unknown as { connect (): Promise<unknown>, database: { collection (name: string): { indexes (): Promise<Array<{ name: string, key: object, partialFilterExpression?: object }>> } } }
    await adapter.connect()
    const made = new Map((await adapter.database.collection('Mig').indexes()).map((index) => [index.name, index]))
    t.ok(made.has('Mig_sku_1_unique'), 'unique added')
    t.notOk(made.has('Mig_code_1_unique'), 'unique removed')
    t.notOk(made.has('Mig_rank_1'), 'index removed')
    t.same(made.get('Mig_ab')?.key, { b: 1, a: 1 }, 'compound index changed')
    t.same(made.get('Mig_part')?.partialFilterExpression, { active: false }, 'partial filter changed')
  })

  t.test('each change is one log line; the failure is named and stops nothing else', { skip: lane.kind === 'postgres' ? false : 'log lines of the PostgreSQL reconciliation' }, async (t) => {
    const text = log.lines.join('\n')
    t.ok(log.lines.includes('[constraints] Mig_kind_check replaced: enum a,b → a,c'), text)
    t.ok(log.lines.includes('[constraints] Mig_name_check replaced: maxLength 10 → 5; 1 existing row breaks it: kept, and refused when next saved unless corrected'), 'a rule old rows break')
    t.ok(log.lines.includes('[constraints] Mig_qty_check dropped: min 0 (no longer declared)'), 'a removed rule')
    t.ok(log.lines.includes('[constraints] Mig_label_check replaced: maxLength 3 → 8'), 'a changed rule')
    t.ok(log.lines.some((line) => /^\[indexes\] Mig_unique_code dropped: unique \(code\)/.test(line)), 'a removed unique index')
    t.ok(log.lines.some((line) => /^\[indexes\] Mig_ab replaced: compound \(a, b\) → compound \(b, a\)/.test(line)), 'a changed compound index')
    t.ok(log.lines.some((line) => /^\[indexes\] Mig\.Mig_unique_dup failed: /.test(line)), 'the failure, with its reason')
    t.ok(log.lines.some((line) => /^\[indexes\] 1 created, 2 replaced, 2 dropped, \d+ already present, 1 failed \(Mig\.Mig_unique_dup\)$/.test(line)), 'the summary names it')
    t.ok(log.lines.some((line) => /^\[constraints\] 0 created, 3 replaced, 2 dropped, 0 already present, 0 failed$/.test(line)), 'constraints are counted apart')
  })

  t.test('valid saves succeed and the new rules hold', async (t) => {
    t.equal((await save(second, { name: 'ok', kind: 'c' })).status, 201, 'the added enum value')
    t.equal((await save(second, { qty: -5, score: 50 })).status, 201, 'min and max removed')
    t.equal((await save(second, { label: 'abcdefgh' })).status, 201, 'the longer maxLength')
    t.equal((await save(second, { code: 'X' })).status, 201, 'code is no longer unique', { skip: needsRealMongo() })
    t.equal((await save(second, { a: 'p', active: true })).status, 201, 'the old partial filter no longer applies', { skip: needsRealMongo() })
    t.equal((await save(second, { a: 'q', active: false })).status, 201)
    t.equal((await save(second, { a: 'q', active: false })).json?.code, Parse.Error.DUPLICATE_VALUE, 'the new partial filter does', { skip: needsRealMongo() })
    t.equal((await save(second, { sku: 'S9' })).status, 201)
    t.equal((await save(second, { sku: 'S9' })).json?.code, Parse.Error.DUPLICATE_VALUE, 'sku became unique')
  })

  t.test('a broken constraint answers 142 naming the field and the rule on every save path', { skip: lane.kind === 'postgres' ? false : needsRealMongo() || false }, async (t) => {
    const rest = await save(second, { kind: 'b' })
    t.equal(rest.status, 400, 'REST')
    t.same(rest.json, { code: 142, error: 'Mig is invalid: kind must be one of a, c' })
    const long = await save(second, { name: 'toolong' })
    t.same(long.json, { code: 142, error: 'Mig is invalid: name must be at most 5 characters' }, 'the lowered maxLength')
    const label = await save(second, { label: 'abcdefghi' })
    t.same(label.json, { code: 142, error: 'Mig is invalid: label must be at most 8 characters' })

    const batch = await second.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'POST', path: '/parse/classes/Mig', body: { kind: 'z' } }] } })
    t.equal(batch.status, 200, batch.text)
    t.same(batch.json, [{ error: { code: 142, error: 'Mig is invalid: kind must be one of a, c' } }], '/batch')

    const handler = await second.request('POST', '/parse/migs/saveMig', { headers: masterHeaders, body: { kind: 'b' } })
    t.equal(handler.status, 400, 'declared handler')
    t.same(handler.json, { code: 142, error: 'Mig is invalid: kind must be one of a, c' })

    const [sdk] = await catchError(new Mig({ kind: 'b' }).save(null, { useMasterKey: true }))
    t.equal((sdk as Parse.Error).code, 142, 'in-process SDK')
    t.equal((sdk as Parse.Error).message, 'Mig is invalid: kind must be one of a, c')

    // An update with an operation the database refuses: the value is not known, the rule is named.
    const created = await save(second, { name: 'a', qty: 1 })
    const old = (await second.request('GET', '/parse/classes/Mig?where=' + encodeURIComponent(JSON.stringify({ name: '0123456789' })), { headers: masterHeaders })).json.results[0]
    const update = await second.request('PUT', `/parse/classes/Mig/${old.objectId}`, { headers: masterHeaders, body: { qty: { __op: 'Increment', amount: 1 } } })
    t.same(update.json, { code: 142, error: 'Mig is invalid: name must be at most 5 characters' }, 'a row saved under the old rule is refused when next saved')
    t.equal(created.status, 201)
  })

  t.test('the handler\'s fromParams refuses non-ISO dates and Parse operations', async (t) => {
    const increment = await second.request('POST', '/parse/migs/saveMig', { headers: masterHeaders, body: { qty: { __op: 'Increment', amount: 5 } } })
    t.same(increment.json, { code: 142, error: 'qty must be a value, not a Parse operation (__op)' })
    const typed = await second.request('POST', '/parse/migs/saveMig', { headers: masterHeaders, body: { name: { __type: 'Bytes', base64: 'AA==' } } })
    t.same(typed.json, { code: 142, error: 'name must be a value, not a typed Parse value (__type "Bytes")' })
    const date = await second.request('POST', '/parse/migs/saveMig', { headers: masterHeaders, body: { due: '1' } })
    t.same(date.json, { code: 142, error: 'due must be an ISO 8601 date' })
    const iso = await second.request('POST', '/parse/migs/saveMig', { headers: masterHeaders, body: { due: '2026-11-25T10:00:00.000Z' } })
    t.equal(iso.status, 200, iso.text)
  })
})

// A rolling deploy: the newer declaration (second) booted last; an instance of
// the older one (first) restarts. It must leave the newer schema alone.
t.test('an older declaration booting after a newer one changes nothing and says it is behind', async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const same = { dataDir: path.join(dir, 'postgres'), ...(mongo ? { databaseURI: mongo.uri } : await sharedPostgres(t)), allowedRoutes: [{ path: '/classes/*' }] }
  const pg = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  const schemaLines = (lines: string[]) => lines.filter((line) => line.startsWith('[schema]'))
  const boot = async (declare: () => typeof Mig) => {
    Mig = declare()
    const log = logLines()
    const kit = await startKit(t, same, log.server)
    await kit.app.kit.indexesApplied
    return { kit, log }
  }

  const first = await boot(declareFirst)
  t.match(schemaLines(first.log.lines), [/^\[schema\] the declarations \([0-9a-f]{12}\) are newer than any recorded: recorded as generation 1$/])
  await first.kit.app.close()
  const newer = await boot(declareSecond)
  t.match(schemaLines(newer.log.lines), [/^\[schema\] the declarations \([0-9a-f]{12}\) are newer than generation 1 of .*: recorded as generation 2$/])
  await newer.kit.app.close()

  const older = await boot(declareFirst)
  const said = schemaLines(older.log.lines)
  t.equal(said.length, 1, 'one line')
  t.match(said[0], /^\[schema\] this instance is behind: the database was reconciled to generation 2 of .* and they are generation 1 of .*; this boot changes no field, permission, index or constraint/)
  t.notOk(older.log.lines.some((line) => /^\[(indexes|constraints)\]/.test(line)), 'no index or constraint work at all')
  if (lane.kind === 'postgres') {
    const checks = new Map((await pg().any(`SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
      WHERE r.relname = 'Mig' AND c.contype = 'c'`)).map((row) => [row.name as string, row.def as string]))
    t.match(checks.get('Mig_kind_check'), /'a'.*'c'/, 'the newer enum stays')
    t.notMatch(checks.get('Mig_kind_check'), /'b'/)
    t.notOk(checks.has('Mig_qty_check'), 'a rule the newer dropped is not restored')
    const indexes = new Set((await pg().any("SELECT indexname FROM pg_indexes WHERE tablename = 'Mig'")).map((row) => row.indexname as string))
    t.ok(indexes.has('Mig_unique_sku') && !indexes.has('Mig_unique_code'), 'the newer unique index stays, the older one is not made again')
    // What the newer instances write still passes the database's own rule.
    await pg().any('INSERT INTO "Mig" ("objectId", kind) VALUES ($1, $2)', ['rollingC', 'c'])
    t.pass('the database accepts kind "c" while the older instance runs')
  }
  await older.kit.app.close()

  // The newer instances keep working: a restart of the newer declaration is current and accepts "c".
  const again = await boot(declareSecond)
  t.match(schemaLines(again.log.lines), [/^\[schema\] the declarations are generation 2 of .* \([0-9a-f]{12}\), the latest recorded$/])
  t.equal((await save(again.kit, { kind: 'c' })).status, 201, 'kind "c" accepted')
  if (lane.kind === 'postgres') t.ok(again.log.lines.includes('[constraints] 0 created, 0 replaced, 0 dropped, 3 already present, 0 failed'), 'nothing had to be restored')
  await again.kit.app.close()

  // Plan first, then apply: a field added beside a refused retype is not added either, and no generation is recorded.
  await t.rejects(boot(declareRetyped as unknown as typeof declareSecond), {
    code: 'FPK_ERR_SCHEMA_MIGRATION',
    message: /^the declared schema was not applied, nothing was changed: one change is refused: field Mig\.qty is Number in the database but declared String\. /
  })
  const reverted = await boot(declareSecond)
  t.match(schemaLines(reverted.log.lines), [/^\[schema\] the declarations are generation 2 of .*, the latest recorded$/], 'the refused boot recorded nothing')
  const stored = await reverted.kit.request('GET', '/parse/schemas/Mig', { headers: masterHeaders })
  t.equal(stored.status, 200, stored.text)
  t.notOk('extra' in stored.json.fields, 'the field added beside the refused change is not in the database')
  t.equal(stored.json.fields.qty.type, 'Number')
  t.notOk(reverted.log.lines.some((line) => /extra/.test(line)), 'no warning about an undeclared field')
})

// ── from the former schema-plan.test.ts ──
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
  t.match(unloadable.err, /^fpk: could not plan: \S*Broken\.js threw while it was imported: Error: this model file does not load/)
})

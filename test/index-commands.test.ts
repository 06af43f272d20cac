// What applyAllIndexes / applyFieldConstraints print when the database cannot be
// reached (the exact SQL or mongosh commands, counted as not applied), the MongoDB
// version check, and an equivalent index under another name.
import t from 'tap'
import { BaseModel, ParseClass, ParseField, applyAllIndexes, applyFieldConstraints } from '../lib/index.js'
import { openDatabase, currentDatabase } from '../lib/storage/database.js'
import { printMongoIndexes, printMongoValidators } from '../lib/storage/mongo/indexes.js'
import { planIndexes } from '../lib/storage/indexes/plan.js'
import { allModels, modelByName } from '../lib/model/registry.js'
import { mongoVersionProblem } from '../lib/storage/mongo/probe.js'
import { lane, startKit, tempDir } from './helpers/kit.js'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { rmSync } from 'node:fs'
import path from 'node:path'
import { clusterFromTemplate } from './helpers/pg-template.js'

@ParseClass('Gadget', { compoundIndexes: [{ fields: ['code'], unique: true, partial: { active: true }, name: 'Gadget_active_code' }] })
class Gadget extends BaseModel {
  @ParseField({ type: 'String', unique: true }) declare sku: string
  @ParseField({ type: 'Number', index: -1 }) declare rank: number
  @ParseField({ type: 'String' }) declare code: string
  @ParseField({ type: 'Boolean' }) declare active: boolean
  @ParseField({ type: 'Number', min: 0, max: 5 }) declare stars: number
}

function capture () {
  const lines: string[] = []
  return { lines, log: { info: (line: string) => { lines.push(line) }, warn: (line: string) => { lines.push(line) } } }
}

t.test('PostgreSQL unreachable: the exact SQL is printed and nothing counts as applied', async (t) => {
  t.equal(modelByName('Gadget')?.model, Gadget, '@ParseClass registered Gadget')
  // Reachable at boot (the kit refuses to boot otherwise), gone by the time the indexes are applied.
  const dir = tempDir()
  await clusterFromTemplate(path.join(dir, 'pg'))
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), ephemeral: true, onNotice: () => {} })
  const database = await openDatabase({ databaseURI: server.uri })
  t.teardown(async () => {
    await database.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })
  await server.stop()
  const { lines, log } = capture()
  const reports = await applyAllIndexes(undefined, { log })
  t.same(reports.map((r) => r.status), ['printed', 'printed', 'printed', 'printed', 'printed'], 'the three declared, and the two session indexes')
  const printed = lines.join('\n')
  t.match(printed, /could not be reached .*nothing was applied/)
  // CONCURRENTLY: what the boot would have run, and what a person should run on a live table.
  t.ok(printed.includes('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Gadget_unique_sku" ON "Gadget" ("sku")'), 'unique, under the name Parse gives it')
  t.ok(printed.includes('CREATE INDEX CONCURRENTLY IF NOT EXISTS "Gadget_rank_-1" ON "Gadget" ("rank" DESC)'), 'ordered, descending')
  t.ok(printed.includes('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Gadget_active_code" ON "Gadget" ("code") WHERE "active" = true'), 'unique and partial details')
  t.ok(printed.includes('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "_Session_unique_sessionToken" ON "_Session" ("sessionToken")'), 'the session token')
  t.ok(printed.includes('CREATE INDEX CONCURRENTLY IF NOT EXISTS "_Session_user_1" ON "_Session" ("user")'), 'the sessions of a user')
  t.match(lines.at(-1), /0 created, 0 replaced, 0 dropped, 0 already present, 0 failed, 5 not applied/)
  const checks = capture()
  const constraints = await applyFieldConstraints(undefined, { log: checks.log })
  t.same(constraints.map((r) => r.status), ['printed'])
  t.ok(checks.lines.join('\n').includes('ALTER TABLE "Gadget" ADD CONSTRAINT "Gadget_stars_check" CHECK ("stars" IS NULL OR ("stars" >= 0 AND "stars" <= 5))'), checks.lines.join('\n'))
  t.match(checks.lines.at(-1), /1 not applied/)
})

t.test('MongoDB: the printed commands are the exact createIndex / collMod calls', async (t) => {
  const adapter = { _collectionPrefix: '' } as never
  const commands = printMongoIndexes(adapter, planIndexes(), allModels()).map((r) => r.command)
  t.same(commands, [
    'db.getCollection("Gadget").createIndex({"sku":1}, {"name":"Gadget_sku_1_unique","unique":true,"sparse":true})',
    'db.getCollection("Gadget").createIndex({"rank":-1}, {"name":"Gadget_rank_-1"})',
    'db.getCollection("Gadget").createIndex({"code":1}, {"name":"Gadget_active_code","unique":true,"partialFilterExpression":{"active":true}})'
  ])
  const [validator] = printMongoValidators(adapter, allModels())
  t.match(validator, { status: 'printed', command: /^db\.runCommand\(\{"collMod":"Gadget","validator":\{"\$jsonSchema":.*"stars":\{"bsonType":\[.*\],"minimum":0,"maximum":5\}.*"validationLevel":"moderate"\}\)$/ })
})

t.test('MongoDB older than 7.0.16 is refused, naming the version found', async (t) => {
  t.match(mongoVersionProblem('6.0.14'), /version 6\.0\.14 is too old: Parse Server 9 needs MongoDB 7\.0\.16 or newer/)
  t.match(mongoVersionProblem('7.0.15'), /7\.0\.15 is too old/)
  t.equal(mongoVersionProblem('7.0.16'), undefined)
  t.equal(mongoVersionProblem('8.0.0-jongodb'), undefined, 'what the wire stand-in reports')
  t.equal(mongoVersionProblem('10.1.0'), undefined)
})

t.test('PostgreSQL: a unique index on the column under another name is reported as existing', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL lane' }, async (t) => {
  await startKit(t, { indexes: false })
  const client = (currentDatabase()!.adapter as unknown as { _client: { none (sql: string): Promise<null> } })._client
  await client.none('CREATE UNIQUE INDEX sku_by_hand ON "Gadget" ("sku")')
  const reports = await applyAllIndexes()
  t.match(reports.find((r) => r.name === 'Gadget_unique_sku'), { status: 'exists', detail: /as sku_by_hand/ })
  t.same(reports.filter((r) => r.status === 'failed'), [])
})

t.test('MongoDB: an equivalent index under another name is reported as existing', { skip: lane.kind === 'mongo' ? false : 'MongoDB lane (KIT_TEST_DATABASE=mongo)' }, async (t) => {
  await startKit(t, { indexes: false })
  const adapter = currentDatabase()!.adapter as unknown as { connect (): Promise<unknown>, database: { collection (name: string): { createIndex (key: object, options: object): Promise<string>, insertOne (doc: object): Promise<unknown> } } }
  await adapter.connect()
  await adapter.database.collection('Gadget').insertOne({ _id: 'g1' })
  await adapter.database.collection('Gadget').createIndex({ sku: 1 }, { name: 'sku_by_hand', unique: true, sparse: true })
  const reports = await applyAllIndexes()
  t.match(reports.find((r) => r.name === 'Gadget_sku_1_unique'), { status: 'exists', detail: /as sku_by_hand/ })
  t.same(reports.filter((r) => r.status === 'failed'), [])
})

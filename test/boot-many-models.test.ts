// Boot cost does not grow with the declared models: a warm boot with unchanged
// declarations writes nothing to the stored schema and reads it as many times
// with 50 models as with 10 (before the kit skipped unchanged writes, each class
// cost a write and a full reload, so five times the models shows the growth as
// twenty times did, for less). Declarations changed between two boots on the
// same database are still applied, also by two instances booting at once,
// and a permission changed in the database behind the kit's back is put back; an
// instance of an older version booting after the newer one changes nothing.
// Each counted boot is a process of its own (test/helpers/many-models-node.ts), as
// a deploy starts one; what it sends is counted at the database driver (statements
// on PostgreSQL, collection operations on MongoDB). The warm boot with 50 models is
// the one after the two instances: its declarations are the ones they applied, so it
// is warm, and a boot of its own for version 1 would prove the same for a process more.
// The boot that puts back a permission changed behind the kit's back is that process's
// second (many-models-node.ts `again`): the counts are of that boot alone, and a
// process of its own would add a start, not a check.
import t, { type Test } from 'tap'
import { rmSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../lib/storage/postgres/embedded.js'
import { lane, tempDir } from './helpers/kit.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { forkManyModelsBoot, forkManyModelsBootTwice, type ManyModelsBoot } from './helpers/many-models.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { clusterFromTemplate } from './helpers/pg-template.js'

const withSql = lane.kind === 'postgres' ? false : 'changes _SCHEMA with SQL'
const MANY = 50

/** The database every boot of this file shares: embedded PostgreSQL started here, or the MongoDB lane's. */
async function sharedDatabase (t: Test): Promise<{ uri: string, sql?: pg.Client }> {
  if (lane.kind === 'mongo') return { uri: (await mongoReplicaSet(t)).uri }
  const dir = tempDir('fpk-many-models-')
  await clusterFromTemplate(path.join(dir, 'postgres'))
  const database = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), ephemeral: true })
  t.teardown(async () => {
    await database.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const sql = new pg.Client({ connectionString: database.uri })
  await sql.connect()
  t.teardown(() => sql.end())
  return { uri: database.uri, sql }
}

function boot (uri: string, models: number, version: number, report = false): Promise<ManyModelsBoot> {
  return forkManyModelsBoot([String(models), String(version), ...(report ? ['report'] : [])], { DATABASE_URI: uri, KIT_DATA_DIR: '' }, `boot with ${models} models (version ${version})`, true)
}

/** A cold boot, not counted; on MongoDB followed, in the same process, by the boot that settles the index list. */
function coldBoot (uri: string, models: number, report = false): Promise<ManyModelsBoot> {
  return forkManyModelsBoot([String(models), '1', ...(report ? ['report'] : []), ...(lane.kind === 'mongo' ? ['twice'] : [])], { DATABASE_URI: uri, KIT_DATA_DIR: '' }, `cold boot with ${models} models`, true)
}

const describe = (b: ManyModelsBoot) => `${b.models} models: ${b.boot.total} statements, ${b.boot.schemaReads} full _SCHEMA reads, ${b.boot.schemaWrites} _SCHEMA writes ` +
  `(until the indexes were applied: ${b.untilIndexed.total}, ${b.untilIndexed.schemaReads}, ${b.untilIndexed.schemaWrites}); CPU ${b.cpuMs.toFixed(0)} ms`

function storedClass (b: ManyModelsBoot, className: string) {
  const found = b.stored?.find((schema) => schema.className === className)
  if (!found) throw new Error(`${className} is not in the stored schema`)
  return found
}

t.test('boots on one database: warm, changed, several at once', async (t) => {
  const { uri, sql } = await sharedDatabase(t)
  const indexDef = async (name: string) => (await sql!.query('SELECT indexdef FROM pg_indexes WHERE indexname = $1', [name])).rows[0]?.indexdef as string | undefined

  // Cold boots are not counted: they create the classes. On MongoDB the boot after
  // the kit made a class's indexes stores them in Parse's index list once: not counted either.
  await coldBoot(uri, 10)
  const warmFew = await boot(uri, 10, 1)
  const created = await coldBoot(uri, MANY, true)
  t.comment(`warm boot, ${describe(warmFew)}`)

  t.test('the stored schema holds the declarations', async (t) => {
    t.equal(created.stored?.length, MANY, `all ${MANY} classes are stored`)
    t.same(storedClass(created, 'Gen1').classLevelPermissions?.delete, { requiresAuthentication: true })
    t.notOk(storedClass(created, 'Gen0').fields.note, 'Gen0 has no note yet')
  })

  // Version 2 adds a field to Gen0, opens Gen1's delete and turns Gen2's compound index around.
  const changed = await boot(uri, MANY, 2, true)
  t.comment(`boot with three changed classes, ${describe(changed)}`)

  t.test('declarations changed between two boots are applied', async (t) => {
    t.same(storedClass(changed, 'Gen0').fields.note, { type: 'String' }, 'the added field is stored')
    t.same(storedClass(changed, 'Gen1').classLevelPermissions?.delete, { '*': true }, 'the changed permission is stored')
    t.same(storedClass(changed, 'Gen5').classLevelPermissions?.delete, { requiresAuthentication: true }, 'an unchanged class keeps its permission')
    if (sql) {
      t.match(await indexDef('Gen2_title_due'), /\(due, title\)/, 'the changed compound index is rebuilt')
      t.match(await indexDef('Gen3_title_due'), /\(title, due\)/, 'an unchanged compound index stays')
    }
  })

  t.test('only the changed classes are written', async (t) => {
    t.ok(changed.boot.schemaWrites > 0, `the changes were written (${changed.boot.schemaWrites} _SCHEMA writes)`)
    if (!FAST_PATHS) return // Parse's migration alone writes every class
    t.ok(changed.boot.schemaWrites <= 6, `at most a few writes for two classes Parse changes (${changed.boot.schemaWrites})`)
    t.ok(changed.boot.schemaReads <= warmFew.boot.schemaReads + 8, `reloads for the changed classes only (${changed.boot.schemaReads}; a warm boot reads ${warmFew.boot.schemaReads})`)
  })

  // An instance of version 1 restarting during the rollout, in a process of its own: the database
  // records version 2 as the newer declaration, so this boot is behind and changes nothing.
  const older = await boot(uri, MANY, 1, true)

  t.test('an older version booting after the newer one changes nothing', async (t) => {
    t.same(storedClass(older, 'Gen1').classLevelPermissions?.delete, { '*': true }, 'the newer permission stays')
    t.same(storedClass(older, 'Gen0').fields.note, { type: 'String' }, 'the newer field stays')
    if (sql) {
      if (FAST_PATHS) t.equal(older.untilIndexed.schemaWrites, 0, 'no _SCHEMA write')
      t.match(await indexDef('Gen2_title_due'), /\(due, title\)/, 'the newer compound index stays')
      const [generation] = (await sql.query('SELECT max(generation)::int AS latest FROM fpk_schema_generations')).rows
      t.equal(generation.latest, 3, `no generation recorded for it (10 models, ${MANY} models and version 2 are generations 1 to 3)`)
    }
  })

  // Version 3, two instances at once (two make the race; a third adds a process, not a case):
  // a field for Gen3, Gen4's create closed to anonymous callers.
  const together = await Promise.all([boot(uri, MANY, 3), boot(uri, MANY, 3)])
  for (const [i, b] of together.entries()) t.comment(`instance ${i + 1} of ${together.length} booting at once, ${describe(b)}`)
  // Nothing changed since they booted: a warm boot of version 3. On PostgreSQL its process then
  // boots once more after a permission is changed in the database behind the kit's back (the last case).
  const tamper = async () => {
    const changed = await sql!.query('UPDATE "_SCHEMA" SET schema = jsonb_set(schema, $1, $2::jsonb) WHERE "className" = $3', [['classLevelPermissions', 'find'], '{}', 'Gen7'])
    if (changed.rowCount !== 1) throw new Error(`Gen7's permission was not changed (${changed.rowCount} rows)`)
  }
  const [warmMany, repaired] = withSql
    ? [await boot(uri, MANY, 3, true), undefined]
    : await forkManyModelsBootTwice([String(MANY), '3', 'report'], { DATABASE_URI: uri, KIT_DATA_DIR: '' }, `warm boot with ${MANY} models, then a boot after a permission changed`, tamper, true)
  t.comment(`warm boot after them, ${describe(warmMany)}`)

  t.test('instances booting at once converge on the new declaration', async (t) => {
    t.same(storedClass(warmMany, 'Gen3').fields.note, { type: 'String' }, 'the field one of them added')
    t.same(storedClass(warmMany, 'Gen4').classLevelPermissions?.create, { requiresAuthentication: true }, 'the permission they changed')
    t.same(storedClass(warmMany, 'Gen0').fields.note, { type: 'String' }, 'the earlier change stays')
  })

  t.test(`a warm boot with unchanged declarations (the boot after them): no _SCHEMA write, as many reads with ${MANY} models as with 10`, { skip: !FAST_PATHS && 'FPK_FAST_PATHS=false: Parse\'s migration writes every class, as it does alone' }, async (t) => {
    t.equal(warmFew.untilIndexed.schemaWrites, 0, '10 models: no _SCHEMA write, until the indexes are applied')
    t.equal(warmMany.untilIndexed.schemaWrites, 0, `${MANY} models: no _SCHEMA write, until the indexes are applied`)
    t.equal(warmMany.boot.schemaReads, warmFew.boot.schemaReads, `${MANY} models: ${warmMany.boot.schemaReads} full _SCHEMA reads, as with 10`)
    t.ok(warmMany.boot.schemaReads > 0, 'the boot does read the stored schema (the count sees Parse\'s reads)')
  })

  t.test('a permission changed in the database behind the kit is put back at the next boot', { skip: withSql }, async (t) => {
    if (!repaired) throw new Error('no boot after the change')
    t.same(storedClass(warmMany, 'Gen7').classLevelPermissions?.find, { '*': true }, 'find is open before the change')
    t.same(storedClass(repaired, 'Gen7').classLevelPermissions?.find, { '*': true }, 'find is open again, as declared')
    t.ok(repaired.boot.schemaWrites > 0 && (repaired.boot.schemaWrites <= 3 || !FAST_PATHS), `one class written (${repaired.boot.schemaWrites} _SCHEMA writes; every class with FPK_FAST_PATHS=false)`)
  })
})

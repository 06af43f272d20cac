// Declared indexes and constraints, read back from the database's own catalogue
// (pg_indexes / pg_constraint on PostgreSQL, listIndexes / listCollections on MongoDB).
import t from 'tap'
import Parse from 'parse/node'
import type { Db } from 'mongodb'
import { BaseModel, ParseClass, ParseField, applyAllIndexes, applyFieldConstraints, catchError } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { modelByName } from '../lib/model/registry.js'
import { lane, needsRealMongo, startKit } from './helpers/kit.js'

@ParseClass('Place', {
  compoundIndexes: [
    { fields: ['owner', 'createdAt'] },
    { fields: ['code'], unique: true, partial: { active: true }, name: 'Place_active_code' },
    { fields: ['title', 'summary'], text: true }
  ]
})
class Place extends BaseModel {
  @ParseField({ type: 'String', unique: true }) declare slug: string
  @ParseField({ type: 'Number', index: -1 }) declare rank: number
  @ParseField({ type: 'GeoPoint', geo: true }) declare location: Parse.GeoPoint
  @ParseField({ type: 'Date', ttlSeconds: 3600 }) declare expiresAt: Date
  @ParseField({ type: 'Pointer', targetClass: '_User' }) declare owner: Parse.User
  @ParseField({ type: 'String' }) declare code: string
  @ParseField({ type: 'Boolean' }) declare active: boolean
  @ParseField({ type: 'String' }) declare title: string
  @ParseField({ type: 'String' }) declare summary: string
  @ParseField({ type: 'String', enum: ['open', 'closed'] }) declare status: string
  @ParseField({ type: 'Number', min: 0, max: 5, integer: true }) declare stars: number
  @ParseField({ type: 'String', maxLength: 5, pattern: '[A-Z]+' }) declare tag: string
}

interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>>, none (query: string, values?: unknown): Promise<null> }

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('indexes and constraints on PostgreSQL', async (t) => {
  t.equal(modelByName('Place')?.model, Place, '@ParseClass registered Place')
  await startKit(t, { indexes: false })
  const pg = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  const catalogue = async () => new Map((await pg.any("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'Place'")).map((row) => [row.indexname as string, row.indexdef as string]))

  // A plain index on the field that is about to become unique must give way.
  await pg.none('CREATE INDEX "Place_slug_plain" ON "Place" ("slug")')

  t.test('applyAllIndexes creates every kind', async (t) => {
    const reports = await applyAllIndexes()
    t.same(reports.filter((r) => r.status === 'failed'), [], 'nothing failed')
    const indexes = await catalogue()
    t.match(indexes.get('Place_unique_slug'), /UNIQUE INDEX .* \(slug\)/, 'unique')
    t.notOk(indexes.has('Place_slug_plain'), 'the conflicting plain index was dropped first')
    t.match(indexes.get('Place_rank_-1'), /\(rank DESC\)/, 'ordered, descending')
    t.match(indexes.get('Place_location_1_2dsphere'), /USING gist \(location\)/, 'geospatial')
    t.match(indexes.get('Place_expiresAt_1_ttl'), /\("expiresAt"\)/, 'expiry field indexed')
    t.match(reports.find((r) => r.kind === 'ttl')?.detail, /no expiring index/, 'and the missing expiry is reported')
    t.match(indexes.get('Place_owner_1_createdAt_1'), /\(owner, "createdAt"\)/, 'compound')
    t.match(indexes.get('Place_active_code'), /UNIQUE INDEX .* \(code\) WHERE \(active = true\)/, 'compound unique partial')
    t.match(indexes.get('Place_title_1_summary_1_text'), /USING gin \(to_tsvector\('english'::regconfig, title\), to_tsvector\('english'::regconfig, summary\)\)/, 'text')
  })

  t.test('running it again reports what exists and fails nothing', async (t) => {
    const again = await applyAllIndexes()
    t.ok(again.length >= 7)
    t.ok(again.every((r) => r.status === 'exists'), JSON.stringify(again.filter((r) => r.status !== 'exists')))
  })

  t.test('unique indexes hold for saves through Parse', async (t) => {
    await new Place({ slug: 'the-mill' }).save(null, { useMasterKey: true })
    const [error] = await catchError(new Place({ slug: 'the-mill' }).save(null, { useMasterKey: true }))
    t.equal((error as Parse.Error).code, Parse.Error.DUPLICATE_VALUE)
    await new Place({ code: 'A', active: false }).save(null, { useMasterKey: true })
    await new Place({ code: 'A', active: false }).save(null, { useMasterKey: true })
    await new Place({ code: 'A', active: true }).save(null, { useMasterKey: true })
    const [partial] = await catchError(new Place({ code: 'A', active: true }).save(null, { useMasterKey: true }))
    t.equal((partial as Parse.Error).code, Parse.Error.DUPLICATE_VALUE, 'the partial unique index covers active rows only')
  })

  t.test('the database itself refuses writes that bypass the code', async (t) => {
    const reports = await applyFieldConstraints()
    t.same(reports.filter((r) => r.status === 'failed'), [])
    t.same(reports.map((r) => r.name).sort(), ['Place_stars_check', 'Place_status_check', 'Place_tag_check'])
    const insert = (column: string, value: unknown) =>
      pg.none('INSERT INTO "Place" ("objectId", "createdAt", "updatedAt", $1:name) VALUES ($2, now(), now(), $3)', [column, Math.random().toString(36).slice(2, 12), value])
        .then(() => 'accepted', (error: { code?: string }) => error.code)
    t.equal(await insert('status', 'weird'), '23514', 'enum')
    t.equal(await insert('stars', 7), '23514', 'max')
    t.equal(await insert('stars', -1), '23514', 'min')
    t.equal(await insert('stars', 1.5), '23514', 'integer')
    t.equal(await insert('tag', 'TOOLONG'), '23514', 'maxLength')
    t.equal(await insert('tag', 'abc'), '23514', 'pattern')
    t.equal(await insert('status', 'open'), 'accepted', 'a valid row still goes in')
    t.equal(await insert('stars', null), 'accepted', 'and so does an empty field')
    const again = await applyFieldConstraints()
    t.ok(again.every((r) => r.status === 'exists'))
  })
})

// eslint-disable-next-line curly -- the whole subtest is the body
if (lane.kind === 'postgres') t.test('kitPlugin applies them once listening', async (t) => {
  const kit = await startKit(t)
  await kit.app.kit.indexesApplied
  const pg = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  const names = (await pg.any("SELECT indexname FROM pg_indexes WHERE tablename = 'Place'")).map((row) => row.indexname)
  const constraints = await pg.any("SELECT conname FROM pg_constraint WHERE conname = 'Place_stars_check'")
  t.ok(names.includes('Place_unique_slug'))
  t.ok(names.includes('Place_title_1_summary_1_text'))
  t.equal(constraints.length, 1, 'and the constraints')
})

if (lane.kind === 'mongo') mongoTests()

interface IndexInfo { name: string, key: Record<string, unknown>, unique?: boolean, sparse?: boolean, partialFilterExpression?: Record<string, unknown>, expireAfterSeconds?: number, weights?: Record<string, number> }

/** The driver's database under Parse's MongoDB adapter. */
async function mongoDatabase (): Promise<Db> {
  const adapter = currentDatabase()!.adapter as unknown as { connect (): Promise<unknown>, database: Db }
  await adapter.connect()
  return adapter.database
}

function mongoTests (): void {
  t.test('indexes and validators on MongoDB', async (t) => {
    t.equal(modelByName('Place')?.model, Place, '@ParseClass registered Place')
    await startKit(t, { indexes: false })
    const db = await mongoDatabase()
    const catalogue = async () => new Map((await db.collection('Place').indexes() as IndexInfo[]).map((index) => [index.name, index]))
    const master = { useMasterKey: true }

    // The stand-in has no dropIndexes command.
    t.test('a plain index on a field that becomes unique gives way to the unique one', { skip: needsRealMongo() }, async (t) => {
      await db.collection('Place').createIndex({ slug: 1 }, { name: 'Place_slug_plain' })
      const reports = await applyAllIndexes()
      t.same(reports.filter((r) => r.status === 'failed'), [], 'nothing failed')
      const indexes = await catalogue()
      t.notOk(indexes.has('Place_slug_plain'), 'the conflicting plain index was dropped first')
      t.match(indexes.get('Place_slug_1_unique'), { key: { slug: 1 }, unique: true })
    })

    t.test('applyAllIndexes creates unique, ordered and compound indexes', async (t) => {
      const reports = await applyAllIndexes()
      t.same(reports.filter((r) => r.status === 'failed'), [], 'nothing failed')
      t.same(reports.map((r) => r.name).sort(), [
        'Place_active_code', 'Place_expiresAt_1_ttl', 'Place_location_1_2dsphere', 'Place_owner_1_createdAt_1',
        'Place_rank_-1', 'Place_slug_1_unique', 'Place_title_1_summary_1_text',
        '_Session_sessionToken_1_unique', '_Session_user_1'
      ], 'one report per declared index, and the session indexes')
      const indexes = await catalogue()
      t.match(indexes.get('Place_slug_1_unique'), { key: { slug: 1 }, unique: true, sparse: true }, 'unique, leaving objects without a slug free')
      t.same(indexes.get('Place_rank_-1')?.key, { rank: -1 }, 'ordered, descending')
      t.same(indexes.get('Place_owner_1_createdAt_1')?.key, { _p_owner: 1, _created_at: 1 }, 'compound, on the names Parse stores')
      t.match(indexes.get('Place_active_code'), { key: { code: 1 }, unique: true, partialFilterExpression: { active: true } }, 'compound unique partial')
    })

    // The stand-in accepts these indexes into its catalogue but has no geo queries, no $text and no expiry.
    t.test('geospatial, text and expiring indexes', { skip: needsRealMongo() }, async (t) => {
      const indexes = await catalogue()
      t.same(indexes.get('Place_location_1_2dsphere')?.key, { location: '2dsphere' }, 'geospatial')
      t.equal(indexes.get('Place_expiresAt_1_ttl')?.expireAfterSeconds, 3600, 'expiring after an hour')
      t.same(indexes.get('Place_expiresAt_1_ttl')?.key, { expiresAt: 1 })
      const text = indexes.get('Place_title_1_summary_1_text')
      t.same(text?.key, { _fts: 'text', _ftsx: 1 }, 'text')
      t.same(text?.weights, { title: 1, summary: 1 }, 'over both fields')
    })

    t.test('running it again reports what exists and fails nothing', async (t) => {
      const again = await applyAllIndexes()
      t.equal(again.length, 9)
      t.ok(again.every((r) => r.status === 'exists'), JSON.stringify(again.filter((r) => r.status !== 'exists')))
    })

    t.test('unique indexes hold for saves through Parse', async (t) => {
      await new Place({ slug: 'the-mill' }).save(null, master)
      const [error] = await catchError(new Place({ slug: 'the-mill' }).save(null, master))
      t.equal((error as Parse.Error).code, Parse.Error.DUPLICATE_VALUE)
      await new Place({ code: 'A', active: false }).save(null, master)
      await new Place({ code: 'A', active: false }).save(null, master)
      await new Place({ code: 'A', active: true }).save(null, master)
      const [partial] = await catchError(new Place({ code: 'A', active: true }).save(null, master))
      t.equal((partial as Parse.Error).code, Parse.Error.DUPLICATE_VALUE, 'the partial unique index covers active rows only')
    })

    // The stand-in has no listCollections, create or collMod commands, and no validation.
    t.test('the database itself refuses writes that bypass the code', { skip: needsRealMongo() }, async (t) => {
      const reports = await applyFieldConstraints()
      t.same(reports.filter((r) => r.status === 'failed'), [])
      t.same(reports.map((r) => r.name), ['Place_validator'])
      const insert = (field: string, value: unknown) =>
        db.collection<{ _id: string }>('Place').insertOne({ _id: Math.random().toString(36).slice(2, 12), [field]: value })
          .then(() => 'accepted', (error: { code?: number }) => error.code)
      t.equal(await insert('status', 'weird'), 121, 'enum')
      t.equal(await insert('stars', 7), 121, 'max')
      t.equal(await insert('stars', -1), 121, 'min')
      t.equal(await insert('stars', 1.5), 121, 'integer')
      t.equal(await insert('tag', 'TOOLONG'), 121, 'maxLength')
      t.equal(await insert('tag', 'abc'), 121, 'pattern')
      t.equal(await insert('status', 'open'), 'accepted', 'a valid document still goes in')
      t.equal(await insert('stars', null), 'accepted', 'and so does an empty field')
      const again = await applyFieldConstraints()
      t.same(again.filter((r) => r.status === 'failed'), [], 'applying it again is harmless')
    })
  })

  t.test('kitPlugin applies them once listening', async (t) => {
    const kit = await startKit(t)
    await kit.app.kit.indexesApplied
    const db = await mongoDatabase()
    const names = (await db.collection('Place').indexes().catch(() => [])).map((index) => index.name!)
    t.ok(names.includes('Place_slug_1_unique'), names.join(', '))
    t.ok(names.includes('Place_owner_1_createdAt_1'))

    t.test('and the validator', { skip: needsRealMongo() }, async (t) => {
      const [info] = await db.listCollections({ name: 'Place' }).toArray() as Array<{ options?: { validator?: unknown } }>
      t.match(info?.options?.validator, { $jsonSchema: { properties: { stars: { maximum: 5 } } } })
    })
  })
}

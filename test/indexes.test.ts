// Declared indexes and constraints, read back from the database's own catalogue.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, ParseClass, ParseField, applyAllIndexes, applyMongoValidators, catchError } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { startKit } from './helpers/kit.js'

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

t.test('indexes and constraints on PostgreSQL', async (t) => {
  t.ok(Place)
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
    const reports = await applyMongoValidators()
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
    const again = await applyMongoValidators()
    t.ok(again.every((r) => r.status === 'exists'))
  })
})

t.test('kitPlugin applies them once listening', async (t) => {
  await startKit(t)
  const pg = (currentDatabase()!.adapter as unknown as { _client: Pg })._client
  const deadline = Date.now() + 10_000
  let names: string[] = []
  while (Date.now() < deadline) {
    names = (await pg.any("SELECT indexname FROM pg_indexes WHERE tablename = 'Place'")).map((row) => row.indexname)
    const constraints = await pg.any("SELECT conname FROM pg_constraint WHERE conname = 'Place_stars_check'")
    if (names.includes('Place_unique_slug') && constraints.length === 1) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(names.includes('Place_unique_slug'))
  t.ok(names.includes('Place_title_1_summary_1_text'))
})

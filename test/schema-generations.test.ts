// Which declaration is newer when two versions of the application share a
// database: the rule alone (model/schema-generations.ts), each case once.
// The boots themselves are in schema-changes.test.ts.
import t from 'tap'
import { describeStanding, standingOf, type GenerationRecord } from '../lib/model/schema-generations.js'
import { fingerprintDeclarations } from '../lib/model/schema-fingerprint.js'

const at = new Date('2026-11-28T10:00:00.000Z')
const record = (generation: number, fingerprint: string, version?: number): GenerationRecord => ({ generation, fingerprint, declaredAt: at, ...(version === undefined ? {} : { version }) })

t.test('without schema.version: the order in which declarations first booted', async (t) => {
  t.same(standingOf([], 'a'), { kind: 'newer' }, 'nothing recorded: newer')
  const history = [record(1, 'a'), record(2, 'b')]
  t.equal(standingOf(history, 'b').kind, 'current', 'the latest: current')
  t.equal(standingOf(history, 'c').kind, 'newer', 'never seen: newer')
  const behind = standingOf(history, 'a')
  t.equal(behind.kind, 'behind', 'seen before the latest: behind')
  t.equal(behind.kind === 'behind' ? behind.matches?.generation : undefined, 1, 'its own generation is named')
  t.equal(standingOf([record(2, 'b'), record(1, 'a')], 'a').kind, 'behind', 'the generation orders, not the row order')
  t.equal(standingOf([record(1, 'a'), record(2, 'b'), record(3, 'a', 5)], 'b').kind, 'behind', 'a declaration made newest again puts the one after it behind')
})

t.test('with schema.version: the higher version is newer', async (t) => {
  const history = [record(1, 'a', 2), record(2, 'b', 3)]
  t.equal(standingOf(history, 'a', 2).kind, 'behind')
  t.equal(standingOf(history, 'x', 2).kind, 'behind', 'a lower version is behind whatever its fingerprint')
  t.equal(standingOf(history, 'a', 4).kind, 'newer', 'a higher version is newer, even a declaration seen before (a rollback on purpose)')
  t.equal(standingOf(history, 'b', 3).kind, 'current')
  t.equal(standingOf(history, 'c', 3).kind, 'newer', 'an equal version falls back to the fingerprints')
  t.equal(standingOf([record(1, 'a')], 'a', 1).kind, 'newer', 'a version is newer than a history without one')
})

t.test('the lines', async (t) => {
  t.equal(describeStanding({ kind: 'newer' }, 'abcdef0123456789', 1), '[schema] the declarations (abcdef012345) are newer than any recorded: recorded as generation 1')
  t.equal(describeStanding({ kind: 'current', latest: record(2, 'abcdef0123456789') }, 'abcdef0123456789'),
    '[schema] the declarations are generation 2 of 2026-11-28T10:00:00.000Z (abcdef012345), the latest recorded')
  t.equal(describeStanding({ kind: 'behind', latest: record(3, 'b', 4), matches: record(1, 'a', 2) }, 'a'),
    '[schema] this instance is behind: the database was reconciled to generation 3 (schema.version 4) of 2026-11-28T10:00:00.000Z and they are generation 1 (schema.version 2) of 2026-11-28T10:00:00.000Z; ' +
    'this boot changes no field, permission, index or constraint (the newer declarations stay in force). Deploy the newer version here too.')
})

t.test('the fingerprint: what the database would hold, not how it is written down', async (t) => {
  const field = (extra: Record<string, unknown> = {}) => ({ name: 'kind', type: 'String', ...extra })
  const model = (fields: Array<Record<string, unknown>>, options: Record<string, unknown> = {}) =>
    ({ className: 'Item', model: class {}, options, fields: new Map(fields.map((f) => [f.name as string, f])) }) as never
  const of = (models: unknown[], definitions = [{ className: 'Item', fields: { kind: { type: 'String' } } }]) => fingerprintDeclarations({ definitions, models: models as never })
  const base = of([model([field({ enum: ['a', 'b'] })])])
  t.equal(of([model([field({ enum: ['a', 'b'] })])]), base, 'the same declarations: the same fingerprint')
  t.not(of([model([field({ enum: ['a', 'b', 'c'] })])]), base, 'an enum value added')
  t.equal(of([model([field({ enum: ['a', 'b'], validate: () => true })])]), of([model([field({ enum: ['a', 'b'], validate: () => false })])]), 'code the database never sees does not count')
  t.not(of([model([field({ pattern: /^a/ })])]), of([model([field({ pattern: /^a/i })])]), 'a pattern by its source and flags')
  t.not(fingerprintDeclarations({ definitions: [], models: [], deleteExtraFields: true }), fingerprintDeclarations({ definitions: [], models: [] }), 'deleteExtraFields changes what a boot does')
})

// The MongoDB path's pure logic (always runs; no database needed).
import t from 'tap'
import { BaseModel, ParseClass, ParseField, ParseVersionField } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { planIndexes } from '../lib/storage/indexes/plan.js'
import { jsonSchemaFor, mongoFilter, mongoIndex } from '../lib/storage/mongo/indexes.js'
import { MongoOperationTimeoutError } from 'mongodb'
import { isTransient } from '../lib/storage/transient.js'
import { isDatabaseUnavailable } from '../lib/storage/unavailable.js'
import { expectedVersion } from '../lib/storage/version.js'

@ParseClass('Shipment', { compoundIndexes: [{ fields: ['customer', 'createdAt'], partial: { customer: 'u1', createdAt: { $gte: '2026-01-01T00:00:00.000Z' } }, sparse: true }] })
class Shipment extends BaseModel {
  @ParseField({ type: 'Pointer', targetClass: '_User' }) declare customer: unknown
  @ParseField({ type: 'GeoPoint', geo: true }) declare drop: unknown
  @ParseField({ type: 'String', unique: true }) declare trackingCode: string
  @ParseField({ type: 'Date', ttlSeconds: 60 }) declare expiresAt: Date
  @ParseField({ type: 'String', enum: ['new', 'sent'], maxLength: 10, pattern: '[a-z]+' }) declare status: string
  @ParseField({ type: 'Number', min: 0, max: 9, integer: true }) declare weight: number
  @ParseVersionField() declare version: number
}

t.test('index specs use the names Parse stores fields under', async (t) => {
  t.equal(modelByName('Shipment')?.model, Shipment, '@ParseClass registered Shipment')
  const model = modelByName('Shipment')!
  const specs = planIndexes([model])
  const types = new Map([...model.fields.values()].map((f) => [f.name, f.type]))
  const targets = new Map([['customer', '_User']])
  const byKind = Object.fromEntries(specs.map((spec) => [spec.kind, mongoIndex(spec, types, targets)]))
  t.same(byKind.geo, { key: { drop: '2dsphere' }, options: { name: 'Shipment_drop_1_2dsphere' } })
  t.same(byKind.unique, { key: { trackingCode: 1 }, options: { name: 'Shipment_trackingCode_1_unique', unique: true, sparse: true } }, 'objects without the field do not collide')
  t.same(byKind.ttl, { key: { expiresAt: 1 }, options: { name: 'Shipment_expiresAt_1_ttl', expireAfterSeconds: 60 } })
  t.same(byKind.compound.key, { _p_customer: 1, _created_at: 1 })
  t.same(byKind.compound.options.partialFilterExpression, { _p_customer: '_User$u1', _created_at: { $gte: new Date('2026-01-01T00:00:00.000Z') } })
  t.equal(byKind.compound.options.sparse, true)
})

t.test('filter rewriting', async (t) => {
  const types = new Map([['owner', 'Pointer'], ['due', 'Date'], ['tags', 'Array']])
  t.same(mongoFilter({ owner: { $in: ['a', 'b'] }, due: { $exists: true }, tags: 'x', objectId: 'o1' }, types, new Map([['owner', 'Team']])), {
    _p_owner: { $in: ['Team$a', 'Team$b'] }, due: { $exists: true }, tags: 'x', _id: 'o1'
  })
})

t.test('$jsonSchema carries the declared constraints', async (t) => {
  const schema = jsonSchemaFor(modelByName('Shipment')!) as { properties: Record<string, any> }
  t.same(schema.properties.status, { bsonType: ['string', 'null'], enum: ['new', 'sent', null], maxLength: 10, pattern: '^(?:[a-z]+)$' })
  t.same(schema.properties.weight, { bsonType: ['double', 'int', 'long', 'decimal', 'null'], minimum: 0, maximum: 9, multipleOf: 1 })
  t.same(schema.properties._p_customer, { bsonType: ['string', 'null'] })
  t.same(schema.properties.expiresAt, { bsonType: ['date', 'null'] })
})

t.test('transient errors are recognised under Parse\'s wrapping', async (t) => {
  const mongoConflict = Object.assign(new Error('WriteConflict'), { code: 112, hasErrorLabel: (label: string) => label === 'TransientTransactionError' })
  t.ok(isTransient(mongoConflict))
  t.ok(isTransient({ code: 1, message: 'Internal server error.', underlyingError: mongoConflict }), 'Parse turns it into code 1; the label still counts')
  t.ok(isTransient({ code: '40P01' }), 'PostgreSQL deadlock')
  t.ok(isTransient({ code: '40001' }), 'PostgreSQL serialization failure')
  t.notOk(isTransient({ code: 137, message: 'duplicate' }))
  t.notOk(isTransient({ code: 112 }), 'a Parse code that happens to be 112 is not a MongoDB error')
})

t.test('a command past the driver\'s timeoutMS means the database did not answer: 503, not a conflict to re-run', async (t) => {
  const timedOut = new MongoOperationTimeoutError('Timed out during socket read (4963ms)')
  timedOut.addErrorLabel('TransientTransactionError') // as the driver labels a failure inside a transaction
  t.ok(isDatabaseUnavailable(timedOut), 'unavailable')
  t.ok(isDatabaseUnavailable({ code: 1, message: 'Internal server error.', underlyingError: timedOut }), 'also under Parse\'s wrapping')
  t.notOk(isTransient(timedOut), 'not re-run as a conflict')
})

t.test('version filter', async (t) => {
  t.equal(expectedVersion(4), 3)
  t.same(expectedVersion(1), { $exists: false }, 'an object saved before it had a version')
})

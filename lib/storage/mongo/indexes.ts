// Indexes and $jsonSchema validators on MongoDB. Parse stores pointers as
// `_p_<field>` ("Class$id"), createdAt/updatedAt as `_created_at`/`_updated_at`,
// and GeoPoints as [longitude, latitude].
import type { FieldDefinition } from '../../model/field-options.js'
import type { ModelDefinition } from '../../model/registry.js'
import type { IndexReport, IndexSpec } from '../indexes/plan.js'
import type { MongoAdapter as ParseMongoAdapter } from '../../parse/internals.js'
import { mongoCollectionPrefix } from '../../parse/adapter-internals.js'
import type { IndexSpecification } from 'mongodb'
import type { ObjectChange } from '../indexes/reconcile.js'
import { plainFallbackName } from '../indexes/sessions.js'

const DUPLICATE_KEY = 11000

type MongoAdapter = Pick<ParseMongoAdapter, 'connect' | 'database'>

const BUILT_IN: Record<string, string> = { createdAt: '_created_at', updatedAt: '_updated_at', objectId: '_id' }
/** Fields Parse stores under another name in every class (MongoTransform). */
const STORED_AS: Record<string, string> = { ...BUILT_IN, sessionToken: '_session_token' }

export function mongoField (name: string, type: string): string {
  return STORED_AS[name] ?? (type === 'Pointer' ? `_p_${name}` : name)
}

/**
 * The row-ACL indexes answer PostgreSQL's form of Parse's read filter (an
 * array overlap OR IS NULL, which one index cannot serve). MongoDB gets
 * `_rperm: { $in: [null, …] }`, which a multikey index serves alone, and its
 * plan for it was not measured: nothing is made there.
 */
const ACL_ON_MONGO = 'not made on MongoDB: aclIndex serves PostgreSQL\'s form of the row-ACL filter (see the models guide)'

/** The createIndex key and options for a planned index. */
export function mongoIndex (spec: IndexSpec, fieldTypes: Map<string, string>, targetClasses: Map<string, string> = new Map()): { key: Record<string, unknown>, options: Record<string, unknown> } {
  const key: Record<string, unknown> = {}
  for (const field of spec.fields) {
    const name = mongoField(field.name, field.type)
    key[name] = spec.kind === 'geo' ? '2dsphere' : spec.kind === 'text' ? 'text' : field.direction
  }
  const options: Record<string, unknown> = { name: spec.name }
  if (spec.unique) options.unique = true
  // A unique field leaves objects without it free, as on PostgreSQL (NULLs never collide) and as
  // Parse's own unique indexes do: a non-sparse unique index would index every missing value as
  // null and let only one object lack the field.
  if (spec.sparse || spec.kind === 'unique') options.sparse = true
  if (spec.ttlSeconds !== undefined) options.expireAfterSeconds = spec.ttlSeconds
  if (spec.partial) options.partialFilterExpression = mongoFilter(spec.partial, fieldTypes, targetClasses)
  return { key, options }
}

/** A Parse-style filter rewritten to stored field names and values (pointers as "Class$id", dates as Date). */
export function mongoFilter (filter: Record<string, unknown>, fieldTypes: Map<string, string>, targetClasses: Map<string, string> = new Map()): Record<string, unknown> {
  const rewritten: Record<string, unknown> = {}
  for (const [field, condition] of Object.entries(filter)) {
    const type = fieldTypes.get(field) ?? (field in BUILT_IN ? (field === 'objectId' ? 'String' : 'Date') : 'String')
    const value = (v: unknown): unknown => {
      if (type === 'Pointer' && typeof v === 'string') return `${targetClasses.get(field) ?? '_'}$${v}`
      if (type === 'Date' && typeof v === 'string') return new Date(v)
      return v
    }
    const isOperators = condition !== null && typeof condition === 'object' && !(condition instanceof Date) &&
      Object.keys(condition).every((key) => key.startsWith('$'))
    rewritten[mongoField(field, type)] = isOperators
      ? Object.fromEntries(Object.entries(condition as Record<string, unknown>).map(([operator, v]) =>
        [operator, operator === '$exists' ? v : Array.isArray(v) ? v.map(value) : value(v)]))
      : value(condition)
  }
  return rewritten
}

/** The $jsonSchema validator for a model: types, and enum / min / max / maxLength / minLength / pattern. */
export function jsonSchemaFor (model: ModelDefinition): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const field of model.fields.values()) {
    const schema = fieldSchema(field)
    if (schema) properties[mongoField(field.name, field.type)] = schema
  }
  return { bsonType: 'object', properties }
}

const BSON_TYPES: Partial<Record<string, string | string[]>> = {
  String: 'string', Number: ['double', 'int', 'long', 'decimal'], Boolean: 'bool', Date: 'date',
  Array: 'array', Object: 'object', GeoPoint: 'array', Pointer: 'string'
}

function fieldSchema (field: FieldDefinition): Record<string, unknown> | undefined {
  const bsonType = BSON_TYPES[field.type]
  if (!bsonType) return undefined
  // Parse may store null for a cleared field; a constraint applies to values only.
  const schema: Record<string, unknown> = { bsonType: Array.isArray(bsonType) ? [...bsonType, 'null'] : [bsonType, 'null'] }
  if (field.enum) schema.enum = [...field.enum, null]
  if (field.min !== undefined) schema.minimum = field.min
  if (field.max !== undefined) schema.maximum = field.max
  if (field.maxLength !== undefined) schema.maxLength = field.maxLength
  if (field.minLength !== undefined) schema.minLength = field.minLength
  if (field.pattern !== undefined) schema.pattern = `^(?:${typeof field.pattern === 'string' ? field.pattern : field.pattern.source})$`
  if (field.integer) schema.multipleOf = 1
  return schema
}

/** The exact mongosh command that makes a planned index (run, or printed when the database is away). */
export function mongoIndexCommand (spec: IndexSpec, models: ModelDefinition[], prefix = ''): { collection: string, key: Record<string, unknown>, options: Record<string, unknown>, command: string } {
  const fields = [...(models.find((m) => m.className === spec.className)?.fields.values() ?? [])]
  const types = new Map(fields.map((field) => [field.name, field.type]))
  const targets = new Map(fields.filter((field) => field.targetClass).map((field) => [field.name, field.targetClass!]))
  const { key, options } = mongoIndex(spec, types, targets)
  const collection = prefix + spec.className
  return { collection, key, options, command: `db.getCollection(${JSON.stringify(collection)}).createIndex(${JSON.stringify(key)}, ${JSON.stringify(options)})` }
}

export function mongoValidatorCommand (model: ModelDefinition, prefix = ''): { collection: string, validator: Record<string, unknown>, command: string } {
  const validator = { $jsonSchema: jsonSchemaFor(model) }
  const collection = prefix + model.className
  return { collection, validator, command: `db.runCommand(${JSON.stringify({ collMod: collection, validator, validationLevel: 'moderate' })})` }
}

/** What would be run, for a database that cannot be reached: nothing is applied. */
export function printMongoIndexes (adapter: MongoAdapter, specs: IndexSpec[], models: ModelDefinition[]): IndexReport[] {
  return specs.filter((spec) => spec.kind !== 'acl').map((spec) => ({ className: spec.className, name: spec.name, kind: spec.kind, status: 'printed', command: mongoIndexCommand(spec, models, mongoCollectionPrefix(adapter)).command }))
}

export function printMongoValidators (adapter: MongoAdapter, models: ModelDefinition[]): IndexReport[] {
  return models.map((model) => ({ className: model.className, name: `${model.className}_validator`, kind: 'validator', status: 'printed', command: mongoValidatorCommand(model, mongoCollectionPrefix(adapter)).command }))
}

/** An index with the same keys and the same meaning under another name does the same job. */
function equivalent (index: { key: Record<string, unknown>, [option: string]: unknown }, key: Record<string, unknown>, options: Record<string, unknown>): boolean {
  if (JSON.stringify(index.key) !== JSON.stringify(key)) return false
  const same = (option: string) => JSON.stringify(index[option] ?? null) === JSON.stringify(options[option] ?? null)
  return Boolean(index.unique) === Boolean(options.unique) && same('partialFilterExpression') && same('expireAfterSeconds') &&
    (!options.unique || Boolean(index.sparse) === Boolean(options.sparse))
}

export async function applyMongoIndexes (adapter: MongoAdapter, specs: IndexSpec[], models: ModelDefinition[]): Promise<IndexReport[]> {
  await adapter.connect()
  const reports: IndexReport[] = []
  const existingBy = new Map<string, Array<{ name?: string, key: Record<string, unknown>, [option: string]: unknown }>>()
  for (const spec of specs) {
    if (spec.kind === 'acl') { reports.push({ className: spec.className, name: spec.name, kind: spec.kind, status: 'unsupported', detail: ACL_ON_MONGO }); continue }
    let planned
    try {
      planned = mongoIndexCommand(spec, models, mongoCollectionPrefix(adapter))
    } catch (error) {
      reports.push({ className: spec.className, name: spec.name, kind: spec.kind, status: 'failed', detail: (error as Error).message })
      continue
    }
    const { collection: collectionName, key, options, command } = planned
    const report = (status: IndexReport['status'], detail?: string) => reports.push({ className: spec.className, name: spec.name, kind: spec.kind, status, command, detail })
    const collection = adapter.database.collection(collectionName)
    const existing = await collection.indexes().catch(() => [])
    existingBy.set(spec.className, existing)
    const named = existing.find((index) => index.name === spec.name)
    // A text index is listed under other keys (_fts, _ftsx) than it is made with: its name decides.
    if (named && (spec.kind === 'text' || equivalent(named, key, options))) { report('exists'); continue }
    const twin = named ? undefined : existing.find((index) => equivalent(index, key, options))
    if (twin) { report('exists', `as ${twin.name} (same keys and options under another name)`); continue }
    const fallback = spec.plainIfDuplicates ? plainFallbackName(spec) : undefined
    try {
      if (named) await collection.dropIndex(spec.name)
      if (spec.unique) {
        // A plain index on the same keys would block the unique one: drop it first.
        for (const index of existing) {
          if (!index.unique && index.name !== undefined && index.name !== '_id_' && index.name !== spec.name && JSON.stringify(index.key) === JSON.stringify(key)) await collection.dropIndex(index.name)
        }
      }
      // A build on a large collection may take long: no request bound (socketTimeoutMS) on it.
      // MongoDB (4.2 and later) locks the collection only at the start and the end of a build: writes go on.
      try {
        await collection.createIndex(key as IndexSpecification, { ...options, timeoutMS: 0 })
      } catch (error) {
        if (!fallback || (error as { code?: unknown }).code !== DUPLICATE_KEY) throw error
        // Unique is what Parse means, but a database holding a duplicate must still boot, and be served by an index.
        await collection.createIndex(key as IndexSpecification, { name: fallback, timeoutMS: 0 })
        reports.push({ className: spec.className, name: spec.name, kind: spec.kind, status: 'created', command, warn: true, detail: `${spec.name} could not be made unique: ${spec.className} holds duplicate values (${(error as Error).message}); the plain index ${fallback} was made instead; remove the duplicates and the next boot makes it unique` })
        continue
      }
      if (fallback && existing.some((index) => index.name === fallback)) await collection.dropIndex(fallback)
      report(named ? 'replaced' : 'created', named ? `${spec.name} replaced: ${describeIndex(named)} → ${describeIndex({ key, ...options })}` : `${spec.name} created: ${describeIndex({ key, ...options })}`)
    } catch (error) {
      report('failed', (error as Error).message)
    }
  }
  // Unique and ordered indexes the kit made (its names) that nothing declares any more.
  for (const model of models) {
    const collection = adapter.database.collection(mongoCollectionPrefix(adapter) + model.className)
    const existing = existingBy.get(model.className) ?? await collection.indexes().catch(() => [])
    for (const name of removedKitIndexes(model.className, existing, specs)) {
      const index = existing.find((i) => i.name === name)!
      const command = `db.getCollection(${JSON.stringify(collection.collectionName)}).dropIndex(${JSON.stringify(name)})`
      try {
        await collection.dropIndex(name)
        reports.push({ className: model.className, name, kind: index.unique ? 'unique' : 'ordered', status: 'dropped', command, detail: `${name} dropped: ${describeIndex(index)} (no longer declared)` })
      } catch (error) {
        reports.push({ className: model.className, name, kind: index.unique ? 'unique' : 'ordered', status: 'failed', command, detail: (error as Error).message })
      }
    }
  }
  return reports
}

/** What the next boot would do to the indexes, without doing it. */
export async function planMongoIndexes (adapter: MongoAdapter, specs: IndexSpec[], models: ModelDefinition[]): Promise<{ changes: ObjectChange[], failures: IndexReport[] }> {
  await adapter.connect()
  const changes: ObjectChange[] = []
  const failures: IndexReport[] = []
  const existingBy = new Map<string, Array<{ name?: string, key: Record<string, unknown>, [option: string]: unknown }>>()
  const existingOf = async (className: string) => {
    if (!existingBy.has(className)) existingBy.set(className, await adapter.database.collection(mongoCollectionPrefix(adapter) + className).indexes().catch(() => []))
    return existingBy.get(className)!
  }
  for (const spec of specs) {
    if (spec.kind === 'acl') continue
    let planned
    try {
      planned = mongoIndexCommand(spec, models, mongoCollectionPrefix(adapter))
    } catch (error) {
      failures.push({ className: spec.className, name: spec.name, kind: spec.kind, status: 'failed', detail: (error as Error).message })
      continue
    }
    const { key, options } = planned
    const existing = await existingOf(spec.className)
    const named = existing.find((index) => index.name === spec.name)
    const to = describeIndex({ key, ...options })
    const base = { className: spec.className, name: spec.name, kind: spec.kind }
    if (named && (spec.kind === 'text' || equivalent(named, key, options))) changes.push({ ...base, action: 'keep', destructive: false })
    else if (named) changes.push({ ...base, action: 'replace', from: describeIndex(named), to, destructive: Boolean(named.unique) && !options.unique })
    else if (existing.some((index) => equivalent(index, key, options))) changes.push({ ...base, action: 'keep', destructive: false })
    else changes.push({ ...base, action: 'create', to, destructive: false })
  }
  for (const model of models) {
    const existing = await existingOf(model.className)
    for (const name of removedKitIndexes(model.className, existing, specs)) {
      const index = existing.find((i) => i.name === name)!
      changes.push({ className: model.className, name, kind: index.unique ? 'unique' : 'ordered', action: 'drop', from: describeIndex(index), destructive: Boolean(index.unique) })
    }
  }
  return { changes, failures }
}

/**
 * Validators the next boot would replace: those whose stored $jsonSchema
 * differs from the declared one. A database that cannot list its collections'
 * options (the wire stand-in) tells nothing: undefined.
 */
export async function planMongoValidators (adapter: MongoAdapter, models: ModelDefinition[]): Promise<ObjectChange[] | undefined> {
  await adapter.connect()
  let stored: Map<string, unknown>
  try {
    const collections = await adapter.database.listCollections({}).toArray() as Array<{ name: string, options?: { validator?: unknown } }>
    stored = new Map(collections.map((collection) => [collection.name, collection.options?.validator]))
  } catch {
    return undefined
  }
  const changes: ObjectChange[] = []
  for (const model of models) {
    const { collection, validator } = mongoValidatorCommand(model, mongoCollectionPrefix(adapter))
    const name = `${model.className}_validator`
    const before = stored.get(collection)
    if (JSON.stringify(before ?? null) === JSON.stringify(validator)) continue
    changes.push({ className: model.className, name, kind: 'validator', action: before ? 'replace' : 'create', from: before ? '$jsonSchema as stored' : undefined, to: '$jsonSchema as declared', destructive: false })
  }
  return changes
}

/** Names of unique and ordered indexes named as the kit names them, on a declared class, that no spec asks for. */
export function removedKitIndexes (className: string, existing: Array<{ name?: string }>, specs: IndexSpec[]): string[] {
  const mine = specs.filter((spec) => spec.className === className)
  // The plain index made over duplicates serves until the unique one can be made.
  const planned = new Set([...mine.map((spec) => spec.name), ...mine.filter((spec) => spec.plainIfDuplicates).map(plainFallbackName)])
  const kitName = new RegExp(`^${className}_.+_-?1(_unique)?$`)
  return existing.map((index) => index.name).filter((name): name is string => name !== undefined && kitName.test(name) && !planned.has(name))
}

function describeIndex (index: { key: Record<string, unknown>, [option: string]: unknown }): string {
  const options = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds'].filter((option) => index[option] !== undefined && index[option] !== false)
    .map((option) => `${option} ${JSON.stringify(index[option])}`)
  return [JSON.stringify(index.key), ...options].join(' ')
}

export async function applyMongoSchemaValidators (adapter: MongoAdapter, models: ModelDefinition[]): Promise<IndexReport[]> {
  await adapter.connect()
  const reports: IndexReport[] = []
  for (const model of models) {
    const { collection: name, validator, command } = mongoValidatorCommand(model, mongoCollectionPrefix(adapter))
    try {
      const found = await adapter.database.listCollections({ name }, { nameOnly: true }).toArray()
      if (found.length === 0) await adapter.database.createCollection(name, { validator, validationLevel: 'moderate' })
      else await adapter.database.command({ collMod: name, validator, validationLevel: 'moderate' })
      reports.push({ className: model.className, name: `${model.className}_validator`, kind: 'validator', status: 'created', command })
    } catch (error) {
      reports.push({ className: model.className, name: `${model.className}_validator`, kind: 'validator', status: 'failed', command, detail: (error as Error).message })
    }
  }
  return reports
}

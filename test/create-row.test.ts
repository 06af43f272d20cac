// createRow (lib/model/create-row.ts) against the SDK save it replaces in a
// handler: for every field type, ACL shape, class-level permission and
// trigger shape, and for every caller, `createRow(Class, fields, caller)`
// must store what `new Class(fields).save(null, asCaller(caller))` stores,
// refuse with the same code and message, and answer the stored row exactly as
// Parse's REST API reads it back. Parse's REST create runs beside both: the
// same status.
import t from 'tap'
import Parse from 'parse/node'
import { AfterSave, BaseModel, BeforeSave, CloudFunction, ParseClass, ParseField, Route, Type, addUsersToRole, asCaller, createRow, requireUser, withTransaction, type CloudRequest, type Static } from '../lib/index.js'
import { createObject } from '../lib/parse/direct-writes.js'
import { parseConfig, schemaMemo } from '../lib/access/parse-config.js'
import { APP_ID, appHeaders, masterHeaders, needsRealMongo, startKit } from './helpers/kit.js'

@ParseClass('RowCrate')
class RowCrate extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

/** One field of every type a create takes, a default, a required field, and no trigger. */
@ParseClass('PlainRow')
export class PlainRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
  @ParseField({ type: 'Number', default: 7 }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'RowCrate' }) declare crate: RowCrate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String', default: 'kept' }) declare secret: string
}

const afterSaves: string[] = []

/** The same fields, with a beforeSave that derives one field, drops another and refuses a name; an afterSave. */
@ParseClass('TriggerRow')
export class TriggerRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
  @ParseField({ type: 'Number', default: 7 }) declare weight: number
  @ParseField({ type: 'Boolean' }) declare fresh: boolean
  @ParseField({ type: 'Date' }) declare found: Date
  @ParseField({ type: 'Pointer', targetClass: 'RowCrate' }) declare crate: RowCrate
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @ParseField({ type: 'File' }) declare photo: Parse.File
  @ParseField({ type: 'Object' }) declare details: Record<string, unknown>
  @ParseField({ type: 'Array' }) declare tags: unknown[]
  @ParseField({ type: 'Polygon' }) declare area: Parse.Polygon
  @ParseField({ type: 'String', default: 'kept' }) declare secret: string
  @ParseField({ type: 'String' }) declare derived: string
  @ParseField({ type: 'String' }) declare contextSeen: string
  @ParseField({ type: 'String' }) declare installation: string

  @BeforeSave()
  static before (request: Parse.Cloud.BeforeSaveRequest<TriggerRow>) {
    if (request.object.name === 'refused') throw new Parse.Error(Parse.Error.VALIDATION_ERROR, 'refused by beforeSave')
    request.object.derived = `${request.object.name}|${request.user?.id ?? (request.master ? 'master' : 'nobody')}`
    request.object.unset('secret') // its default comes back
    request.object.unset('fresh') // gone for good
    const note = (request.context as { note?: string }).note
    if (note) request.object.contextSeen = note
    if (request.object.name === 'installation') request.object.installation = request.installationId ?? 'none'
  }

  @AfterSave()
  static after (request: Parse.Cloud.AfterSaveRequest<TriggerRow>) {
    afterSaves.push(request.object.name)
  }
}

/** Creating granted to one role only. */
@ParseClass('RoleRow', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { 'role:RowMakers': true }, update: {}, delete: {} } })
export class RoleRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
}

/** Signed-in users only. */
@ParseClass('AuthRow', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { requiresAuthentication: true }, update: {}, delete: {} } })
export class AuthRow extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare name: string
}

const RowJSON = Type.Object({ objectId: Type.String(), name: Type.String(), weight: Type.Number(), createdAt: Type.String(), updatedAt: Type.String() })

/** A declared endpoint answering a created row, on both of its routes. */
@Route(PlainRow)
export class PlainRowFunctions {
  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    returns: RowJSON,
    validation: { fields: { name: { type: String, required: true } } }
  })
  static async makeRow (request: CloudRequest<{ name: string }>) {
    requireUser(request)
    return createRow<Static<typeof RowJSON>>(PlainRow, PlainRow.fieldsFromParams(request.params), request)
  }

  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { name: { type: String, required: true } } } })
  static async makeRowUntyped (request: CloudRequest<{ name: string }>) {
    requireUser(request)
    return createRow(PlainRow, PlainRow.fieldsFromParams(request.params), request)
  }
}

const CLASSES: Record<string, new (attributes?: Record<string, unknown>) => BaseModel> = { PlainRow, TriggerRow, RoleRow, AuthRow }
const FULL = new Set(['PlainRow', 'TriggerRow'])

/** Keys sorted at every level, so two JSON answers compare by content. */
function canonical (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
}

/** What differs between two creations of the same fields: the id, the times, and what the trigger derived from the caller. */
function comparable (row: Record<string, unknown>): unknown {
  const { objectId, createdAt, updatedAt, ...rest } = row
  return canonical({ ...rest, objectId: typeof objectId, createdAt: typeof createdAt, updatedAt: updatedAt === createdAt ? 'createdAt' : updatedAt })
}

/** An answer as text, with what differs between two creations (id and time) named instead. */
function masked (answer: Record<string, unknown>): string {
  return JSON.stringify({ ...answer, ...('objectId' in answer ? { objectId: 'id' } : {}), ...('createdAt' in answer ? { createdAt: 'time' } : {}) })
}

async function outcome (save: () => Promise<unknown>): Promise<{ ok: true, json: Record<string, unknown> } | { ok: false, code: number, message: string }> {
  try {
    const saved = await save()
    const json = saved instanceof Parse.Object ? saved.toJSON() : saved
    return { ok: true, json: json as Record<string, unknown> }
  } catch (error) {
    const { code, message } = error as Parse.Error
    return { ok: false, code, message }
  }
}

t.test('createRow answers and stores what the SDK save it replaces does, for every caller', async (t) => {
  const kit = await startKit(t, { allowedRoutes: Object.keys(CLASSES).map((name) => ({ path: `/classes/${name}`, methods: ['POST', 'GET'] })) })
  const alice = await kit.signUp('row-alice')
  const bob = await kit.signUp('row-bob')
  await addUsersToRole('RowMakers', [alice.id])
  const crate = await new RowCrate({ label: 'top' }).save(null, { useMasterKey: true })
  const sessionUser = (id: string, token: string) => Parse.User.fromJSON({ className: '_User', objectId: id, sessionToken: token }) as Parse.User
  const callers: Array<{ name: string, headers: Record<string, string>, caller: { master: boolean, user?: Parse.User } }> = [
    { name: 'master key', headers: masterHeaders, caller: { master: true } },
    { name: 'alice (RowMakers)', headers: { ...appHeaders, 'x-parse-session-token': alice.token }, caller: { master: false, user: sessionUser(alice.id, alice.token) } },
    { name: 'bob', headers: { ...appHeaders, 'x-parse-session-token': bob.token }, caller: { master: false, user: sessionUser(bob.id, bob.token) } },
    { name: 'nobody', headers: appHeaders, caller: { master: false } }
  ]
  const acls: Array<[string, () => Parse.ACL | undefined]> = [
    ['no ACL', () => undefined],
    ['public read', () => { const acl = new Parse.ACL(); acl.setPublicReadAccess(true); return acl }],
    ['alice only', () => new Parse.ACL({ [alice.id]: { read: true, write: true } })],
    ['a role and a writer', () => new Parse.ACL({ 'role:RowMakers': { read: true }, [bob.id]: { write: true } })]
  ]
  /** Field sets: every type; the smallest; a missing required field; a value the trigger refuses. */
  const fieldSets: Array<[string, (className: string) => Record<string, unknown>]> = [
    ['every field type', (className) => FULL.has(className)
      ? {
          name: 'full',
          weight: 2.5,
          fresh: true,
          found: new Date('2024-02-03T04:05:06.789Z'),
          crate,
          place: new Parse.GeoPoint(52.5, 13.4),
          photo: Parse.File.fromJSON({ __type: 'File', name: 'photo.txt', url: `${Parse.serverURL}/files/${APP_ID}/photo.txt` }),
          details: { nested: { deeper: [1, 'two', { three: null }] }, when: new Date('2020-01-01T00:00:00.000Z') },
          tags: ['a', crate, 3],
          area: new Parse.Polygon([[0, 0], [0, 1], [1, 1], [1, 0]]),
          secret: 'sent'
        }
      : { name: 'full' }],
    ['the required field only', () => ({ name: 'small' })],
    ['the required field missing', () => (({ fresh: false }))],
    ['refused by the trigger', () => ({ name: 'refused' })]
  ]

  let compared = 0
  for (const [className, Class] of Object.entries(CLASSES)) {
    for (const who of callers) {
      for (const [aclName, acl] of acls) {
        for (const [setName, fields] of fieldSets) {
          if (setName === 'refused by the trigger' && className !== 'TriggerRow') continue
          const label = `${className}, ${who.name}, ${aclName}, ${setName}`
          const values = (): Record<string, unknown> => { const made = acl(); return { ...fields(className), ...(made ? { ACL: made } : {}) } }
          const bySdk = await outcome(() => new Class(values()).save(null, asCaller({ user: undefined, ...who.caller })))
          const byRow = await outcome(() => createRow(className, values(), who.caller))
          const restBody = (new Class(values()) as Parse.Object & { _getSaveJSON (): Record<string, unknown> })._getSaveJSON()
          const rest = await kit.request('POST', `/parse/classes/${className}`, { headers: who.headers, body: restBody })
          t.equal(byRow.ok, bySdk.ok, `${label}: createRow ${bySdk.ok ? 'creates' : 'refuses'} as the SDK save does`)
          t.equal(rest.status === 201, bySdk.ok, `${label}: as REST does (${rest.status})`)
          // RestWrite's ordinary steps (parse/lean-create.ts, which createRow and the SDK's saves take) against Parse's REST create: the same bytes.
          const lean = await outcome(() => createObject({ config: parseConfig(APP_ID), schemaMemo: schemaMemo() }, className, { ...restBody }, who.caller.master ? { useMasterKey: true } : { sessionToken: who.caller.user?.getSessionToken() }))
          t.equal(lean.ok ? masked(lean.json) : JSON.stringify({ code: lean.code, error: lean.message }), rest.status === 201 ? masked(rest.json) : rest.text, `${label}: RestWrite's ordinary steps answer REST's bytes`)
          if (!byRow.ok || !bySdk.ok) {
            if (!byRow.ok && !bySdk.ok) t.same({ code: byRow.code, message: byRow.message }, { code: bySdk.code, message: bySdk.message }, `${label}: the same refusal`)
            continue
          }
          compared++
          const stored = async (id: unknown) => (await kit.request('GET', `/parse/classes/${className}/${id}`, { headers: masterHeaders })).json as Record<string, unknown>
          const [rowStored, sdkStored] = [await stored(byRow.json.objectId), await stored(bySdk.json.objectId)]
          // The database closes a polygon's ring; the answer keeps the points sent, as the SDK's saved object does.
          const { area: answeredArea, ...answered } = byRow.json as { area?: { coordinates: number[][] } }
          const { area: storedArea, ...storedRest } = rowStored as { area?: { coordinates: number[][] } }
          t.same(canonical(answered), canonical(storedRest), `${label}: the answer is the stored row, as REST reads it`)
          if (setName === 'every field type' && FULL.has(className)) t.same([...answeredArea!.coordinates, answeredArea!.coordinates[0]], storedArea?.coordinates, `${label}: the polygon answered, and stored closed by the database`)
          t.same(comparable(rowStored), comparable(sdkStored), `${label}: the same row as the SDK save stores`)
        }
      }
    }
  }
  t.ok(compared >= 40, `${compared} created rows compared`)

  t.test('the context reaches the triggers; operations are refused; a class name or a model', async (t) => {
    const row = await createRow<{ contextSeen?: string }>(TriggerRow, { name: 'with context' }, { master: true }, { context: { note: 'from the handler' } })
    t.equal(row.contextSeen, 'from the handler', 'beforeSave read the context')
    await createRow(TriggerRow, { name: 'after save probe' }, { master: true })
    t.ok(afterSaves.includes('after save probe'), 'afterSave ran for a createRow')
    // As asCaller gives the SDK: no installation id of the client's, Parse's 'cloud'.
    const withInstallation = { master: false, user: sessionUser(alice.id, alice.token), installationId: 'client-installation' }
    const viaRow = await createRow<{ installation?: string }>(TriggerRow, { name: 'installation' }, withInstallation)
    const viaSdk = await new TriggerRow({ name: 'installation' }).save(null, asCaller({ user: withInstallation.user, master: false }))
    t.equal(viaRow.installation, viaSdk.get('installation'), `the trigger sees the installation the SDK save gives it (${viaSdk.get('installation')})`)
    // An ACL as Parse stores it (granted permissions only); a null as sent (PostgreSQL's GET leaves a null column out, MongoDB's answers it).
    const sparse = await createRow(PlainRow, { name: 'sparse', fresh: null, ACL: { [alice.id]: { read: true, write: false }, [bob.id]: { read: false } } }, { master: true })
    const read = (await kit.request('GET', `/parse/classes/PlainRow/${sparse.objectId}`, { headers: masterHeaders })).json
    t.equal(sparse.fresh, null, 'the null answered as sent')
    t.equal((await createRow<{ weight: number }>(PlainRow, { name: 'undefined', weight: undefined }, { master: true })).weight, 7, 'an undefined value is not sent: the default applies')
    t.same(canonical({ ...sparse, fresh: undefined }), canonical({ ...read, fresh: undefined }), 'denied permissions: the answer is the row GET reads')
    await t.rejects(createRow(PlainRow, { name: 'x', crate: new RowCrate({ label: 'unsaved' }) }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /createRow: crate: .*unsaved/ }, 'an unsaved object: 142 naming the field')
    await t.rejects(createRow(PlainRow, { name: 'x', ACL: { someone: { read: 'yes' } } }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /createRow: ACL: / }, 'an ACL Parse.ACL refuses: 142')
    await t.rejects(createRow('_User', { username: 'u', password: 'p' }, { master: true }), /_User has rules of its own/, '_User: the SDK creates it')
    await t.rejects(createRow('PlainRow', { name: 'x', weight: { __op: 'Increment', amount: 1 } }, { master: true }), { code: Parse.Error.VALIDATION_ERROR, message: /weight is an operation/ })
    // Parse's own classes take rest.create itself (lean-create serves ordinary classes only).
    const role = await createRow<{ name: string }>('_Role', { name: 'RowRole', ACL: new Parse.ACL({ '*': { read: true } }) }, { master: true })
    t.equal(role.name, 'RowRole', 'a _Role created through Parse\'s own path')
    t.equal((await new Parse.Query(Parse.Role).equalTo('name', 'RowRole').first({ useMasterKey: true }))?.id, role.objectId, 'and stored')
    await t.rejects(createRow(class NotAModel extends Parse.Object {}, { name: 'x' }, { master: true }), /NotAModel has no @ParseClass/)
  })

  t.test('a declared endpoint answers the row; Parse\'s /functions route tags it as a Parse object', async (t) => {
    const headers = { ...appHeaders, 'x-parse-session-token': alice.token }
    const plain = await kit.request('POST', '/parse/plain-rows/makeRow', { headers, body: { name: 'declared' } })
    t.equal(plain.status, 200, plain.text)
    t.same(Object.keys(plain.json).sort(), ['createdAt', 'name', 'objectId', 'updatedAt', 'weight'], 'the declared answer: the schema\'s fields, the default included')
    t.equal(plain.json.weight, 7, 'the default the server set')
    const twin = await kit.request('POST', '/parse/functions/makeRow', { headers, body: { name: 'through functions' } })
    t.equal(twin.status, 200, twin.text)
    t.match(twin.json.result, { __type: 'Object', className: 'PlainRow', name: 'through functions', weight: 7 }, 'tagged: Parse.Cloud.run decodes a Parse.Object')
    const { __type: _tag, ...json } = twin.json.result
    const decoded = Parse.Object.fromJSON(json)
    t.ok(decoded instanceof Parse.Object && decoded.id === twin.json.result.objectId && decoded.get('weight') === 7, 'the SDK decodes it into a PlainRow')
    const untyped = await kit.request('POST', '/parse/functions/makeRowUntyped', { headers, body: { name: 'without returns' } })
    t.match(untyped.json.result, { __type: 'Object', className: 'PlainRow', name: 'without returns', weight: 7 }, 'tagged without `returns` too')
  })

  t.test('inside a transaction, a createRow is rolled back with it', { skip: needsRealMongo() }, async (t) => {
    await withTransaction(async () => {
      await createRow(PlainRow, { name: 'rolled back' }, { master: true })
      throw new Error('roll back')
    }).catch((error: Error) => { if (error.message !== 'roll back') throw error })
    t.equal(await new Parse.Query(PlainRow).equalTo('name', 'rolled back').count({ useMasterKey: true }), 0, 'no row after the rollback')
  })
})

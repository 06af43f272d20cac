// Optimistic locking (@ParseVersionField) against a client that tries not to
// read first: an operation on the version field instead of the number read,
// inside a batch, from the in-process SDK, and with the master key; and field
// operations that do not fit the stored value, and typed values the SDK cannot
// encode, on a class with a beforeSave (every versioned class has one).
// Runs on either database lane.
import t from 'tap'
import Parse from 'parse/node'
import { AfterSave, BaseModel, BeforeSave, CONFLICT, ParseClass, ParseField, ParseVersionField } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { scaled } from './helpers/time-scale.js'

@ParseClass('Crate')
class Crate extends BaseModel {
  @ParseField({ type: 'Number' }) declare quantity: number
  @ParseVersionField() declare version: number
}

@ParseClass('Tally')
class Tally extends BaseModel {
  @ParseField({ type: 'Number' }) declare count: number
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Array' }) declare tags: string[]
  @ParseField({ type: 'Date' }) declare when: Date
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'File' }) declare attachment: Parse.File
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
  @BeforeSave()
  static touch () {}
}
void Tally

// The url each afterSave on Logged saw for its attachment.
const loggedUrls: Array<string | undefined> = []
@ParseClass('Logged')
class Logged extends BaseModel {
  @ParseField({ type: 'File' }) declare attachment: Parse.File
  @ParseField({ type: 'Pointer', targetClass: 'Crate' }) declare crate: Crate
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @AfterSave()
  static noted (request: Parse.Cloud.AfterSaveRequest) {
    loggedUrls.push((request.object.get('attachment') as Parse.File | undefined)?.url())
  }
}
void Logged

// A LiveQuery class without triggers: Parse's LiveQuery runner builds and encodes the saved object as an afterSave does.
@ParseClass('Watched')
class Watched extends BaseModel {
  @ParseField({ type: 'File' }) declare attachment: Parse.File
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @ParseField({ type: 'GeoPoint' }) declare place: Parse.GeoPoint
}
void Watched

let shared: Promise<Kit> | undefined
let roleSaves = 0
let userSaves = 0
// One kit for the file, torn down when the file ends.
const sharedKit = () => {
  shared ??= (async () => startKit(t, {
    ...await sharedPostgres(t),
    liveQuery: { classNames: ['Watched'] },
    allowedRoutes: [{ path: '/classes/*' }, { path: '/batch', methods: ['POST'] }],
    // An application's own afterSave on _Role (an audit trail; cluster mode adds one too).
    parseServerOptions: {
      cloud: (parse: typeof Parse) => {
        parse.Cloud.afterSave(parse.Role, () => { roleSaves++ })
        parse.Cloud.afterSave(parse.User, () => { userSaves++ })
      }
    }
  }))()
  return shared
}

const OPERATION_REFUSED = /Crate uses optimistic locking: version takes the number the object was read at, not an operation/

t.test('an operation on the version field is not a version', async (t) => {
  const kit = await sharedKit()
  const created = await kit.request('POST', '/parse/classes/Crate', { headers: appHeaders, body: { quantity: 1 } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const stored = async () => (await kit.request('GET', `/parse/classes/Crate/${id}`, { headers: masterHeaders })).json
  const put = (body: unknown, headers: Record<string, string> = appHeaders) => kit.request('PUT', `/parse/classes/Crate/${id}`, { headers, body })

  t.test('Increment by 0 does not stand in for the version read (a blind write)', async (t) => {
    const blind = await put({ quantity: 50, version: { __op: 'Increment', amount: 0 } })
    t.equal(blind.status, 400, blind.text)
    t.match(blind.json, { code: Parse.Error.VALIDATION_ERROR, error: OPERATION_REFUSED })
    t.match(await stored(), { quantity: 1, version: 1 }, 'nothing written')
  })

  t.test('other operations are refused alike, with the master key too', async (t) => {
    const operations = [{ __op: 'Increment', amount: 1 }, { __op: 'Increment', amount: -1 }, { __op: 'Delete' }]
    for (const headers of [appHeaders, masterHeaders]) {
      for (const version of operations) {
        const refused = await put({ quantity: 60, version }, headers)
        t.equal(refused.status, 400, `${JSON.stringify(version)}${headers === masterHeaders ? ' (master key)' : ''} → 400 (${refused.text.slice(0, 160)})`)
        t.equal(refused.json?.code, Parse.Error.VALIDATION_ERROR)
      }
    }
    t.match(await stored(), { quantity: 1, version: 1 }, 'nothing written')
  })

  t.test('inside a batch', async (t) => {
    const batch = await kit.request('POST', '/parse/batch', {
      headers: appHeaders,
      body: { requests: [{ method: 'PUT', path: `/parse/classes/Crate/${id}`, body: { quantity: 70, version: { __op: 'Increment', amount: 0 } } }] }
    })
    t.equal(batch.status, 200, batch.text)
    t.match(batch.json, [{ error: { code: Parse.Error.VALIDATION_ERROR, error: OPERATION_REFUSED } }])
    t.match(await stored(), { quantity: 1, version: 1 }, 'nothing written')
  })

  t.test('from the in-process SDK: increment() of the version of an object never read', async (t) => {
    const blind = Crate.createWithoutData(id) as Crate
    blind.quantity = 80
    blind.increment('version', 0)
    await t.rejects(blind.save(), { code: Parse.Error.VALIDATION_ERROR, message: OPERATION_REFUSED })
    t.match(await stored(), { quantity: 1, version: 1 }, 'nothing written')
  })

  t.test('the number read still saves, once', async (t) => {
    const saved = await put({ quantity: 2, version: 1 })
    t.equal(saved.status, 200, saved.text)
    const stale = await put({ quantity: 3, version: 1 })
    t.equal(stale.json?.code, CONFLICT, 'the same number again is a conflict')
    const fetched = await new Parse.Query(Crate).get(id, { useMasterKey: true })
    fetched.quantity = 4
    await fetched.save(null, { useMasterKey: true })
    t.match(await stored(), { quantity: 4, version: 3 })
  })
})

t.test('a field operation that does not fit the stored value is a 400, not a 500, on a class with a beforeSave', async (t) => {
  const kit = await sharedKit()
  const created = await kit.request('POST', '/parse/classes/Tally', { headers: appHeaders, body: { count: 1, label: 'a', tags: ['x'] } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const cases: Array<[string, unknown]> = [
    ['count', { __op: 'Add', objects: [1] }],
    ['count', { __op: 'AddUnique', objects: [1] }],
    ['count', { __op: 'Remove', objects: [1] }],
    ['label', { __op: 'Increment', amount: 1 }],
    ['tags', { __op: 'Increment', amount: 1 }]
  ]
  for (const [field, operation] of cases) {
    for (const headers of [appHeaders, masterHeaders]) {
      const refused = await kit.request('PUT', `/parse/classes/Tally/${id}`, { headers, body: { [field]: operation } })
      t.equal(refused.status, 400, `${field}: ${JSON.stringify(operation)} → 400 (${refused.text.slice(0, 200)})`)
      t.match(refused.json, { code: Parse.Error.INCORRECT_TYPE, error: new RegExp(`Tally\\.${field}`) })
    }
  }
  const batch = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [{ method: 'PUT', path: `/parse/classes/Tally/${id}`, body: { count: { __op: 'Add', objects: [1] } } }] } })
  t.match(batch.json, [{ error: { code: Parse.Error.INCORRECT_TYPE } }], `inside a batch (${batch.text.slice(0, 200)})`)
  const version = await kit.request('PUT', '/parse/classes/Crate/' + (await kit.request('POST', '/parse/classes/Crate', { headers: appHeaders, body: { quantity: 1 } })).json.objectId, { headers: appHeaders, body: { version: { __op: 'Add', objects: [1] } } })
  t.match(version.json, { code: Parse.Error.INCORRECT_TYPE, error: /Crate\.version/ }, `on the version field (${version.text.slice(0, 200)})`)
  const stored = await kit.request('GET', `/parse/classes/Tally/${id}`, { headers: masterHeaders })
  t.match(stored.json, { count: 1, label: 'a', tags: ['x'] }, 'nothing written')
  const fitting = await kit.request('PUT', `/parse/classes/Tally/${id}`, { headers: appHeaders, body: { count: { __op: 'Increment', amount: 2 }, label: 'b' } })
  t.equal(fitting.status, 200, fitting.text)
  t.match((await kit.request('GET', `/parse/classes/Tally/${id}`, { headers: masterHeaders })).json, { count: 3, label: 'b' }, 'an operation that fits still applies')
})

t.test('Parse\'s own routes answer a version conflict 409, as declared endpoints do; a row with a field named code is data', async (t) => {
  const kit = await sharedKit()
  const created = await kit.request('POST', '/parse/classes/Crate', { headers: appHeaders, body: { quantity: 1 } })
  const id = created.json.objectId as string
  t.equal((await kit.request('PUT', `/parse/classes/Crate/${id}`, { headers: appHeaders, body: { quantity: 2, version: 1 } })).status, 200)
  const stale = await kit.request('PUT', `/parse/classes/Crate/${id}`, { headers: appHeaders, body: { quantity: 3, version: 1 } })
  t.equal(stale.status, 409, stale.text)
  t.match(stale.json, { code: CONFLICT, error: /Someone else changed this record/ })
  for (const code of [CONFLICT, 5003, 5005]) {
    const row = await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { code, error: 'a field like any other' } })
    t.equal(row.status, 201, row.text)
    const read = await kit.request('GET', `/parse/classes/Note/${row.json.objectId as string}`, { headers: appHeaders })
    t.equal(read.status, 200, `a row whose code is ${code} reads 200 (${read.text.slice(0, 160)})`)
    t.equal(read.headers.get('retry-after'), null)
  }
})

t.test('a typed value the SDK cannot encode is a 400 on a class with a beforeSave, not a request that never answers and a process that ends', async (t) => {
  const kit = await sharedKit()
  // Before: Parse's trigger runner encoded these outside any catch, and the unhandled rejection ended the process.
  const created = await kit.request('POST', '/parse/classes/Tally', { headers: appHeaders, body: { count: 1, meta: { x: 1 } } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  // A Date whose iso is no date and a Pointer without objectId are the gate's (107, on every class); the rest get past it to Parse.
  const gate = Parse.Error.INVALID_JSON
  const bodies: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ when: { __type: 'Date', iso: 'not a date' } }, gate, /when holds a Date whose iso is not a date/],
    [{ when: { __type: 'Date' } }, gate, /when holds a Date/],
    [{ meta: { at: { __type: 'Date', iso: 'not a date' } } }, gate, /meta holds a Date/],
    [{ tags: [{ __type: 'Date', iso: 'not a date' }] }, gate, /tags holds a Date/],
    [{ crate: { __type: 'Pointer', className: 'Crate' } }, gate, /crate holds a Pointer without an objectId/],
    [{ crate: { __type: 'Object', className: 'Crate' } }, gate, /crate holds an Object without an objectId/],
    // A File by its name alone gets its url at the top level only (as in Parse's answer): nested, the SDK cannot encode it.
    [{ meta: { file: { __type: 'File', name: 'a.txt' } } }, gate, /meta holds a File without a url inside an Object or Array/],
    [{ place: { __type: 'GeoPoint', latitude: 500, longitude: 0 } }, gate, /place holds a GeoPoint that is not a latitude from -90 to 90/],
    [{ 'meta.x': null }, Parse.Error.INCORRECT_TYPE, /^Tally: a value of this save cannot be read as a Parse type$/]
  ]
  const answer = async (method: string, url: string, body: unknown) => {
    const response = await fetch(kit.origin + url, { method, headers: { ...appHeaders, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(scaled(10_000)) })
    return { status: response.status, json: await response.json() as { code?: number, error?: string } }
  }
  for (const [body, code, error] of bodies) {
    for (const [method, url] of [['PUT', `/parse/classes/Tally/${id}`], ['POST', '/parse/classes/Tally']]) {
      const refused = await answer(method, url, body)
      t.equal(refused.status, 400, `${method} ${JSON.stringify(body)} → 400 (${JSON.stringify(refused.json).slice(0, 200)})`)
      t.match(refused.json, { code, error })
    }
  }
  const inBatch = (body: unknown) => answer('POST', '/parse/batch', { requests: [{ method: 'PUT', path: `/parse/classes/Tally/${id}`, body }] })
  const batchDate = await inBatch({ when: { __type: 'Date', iso: 'x' } })
  t.match(batchDate, { status: 400, json: { code: gate } }, 'inside a batch, the gate refuses the whole batch')
  const batchFile = await inBatch({ meta: { file: { __type: 'File', name: 'a.txt' } } })
  t.match(batchFile, { status: 400, json: { code: gate } }, `inside a batch, the gate refuses the whole batch (${JSON.stringify(batchFile.json).slice(0, 200)})`)
  const stored = await kit.request('GET', `/parse/classes/Tally/${id}`, { headers: masterHeaders })
  t.same(Object.keys(stored.json).sort(), ['count', 'createdAt', 'meta', 'objectId', 'updatedAt'], 'nothing written')
  // Without a trigger, PostgreSQL refused such a Date in its SQL: a 500. The gate refuses it on every class.
  const note = await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { title: 'dated' } })
  for (const when of [{ __type: 'Date', iso: 'not a date' }, { __type: 'Date' }, { nested: [{ __type: 'Date', iso: 7 }] }]) {
    const refused = await answer('PUT', `/parse/classes/Note/${note.json.objectId as string}`, { when })
    t.equal(refused.status, 400, `a class without a trigger: ${JSON.stringify(when)} → 400 (${JSON.stringify(refused.json).slice(0, 200)})`)
  }
  const valid = await kit.request('PUT', `/parse/classes/Tally/${id}`, { headers: appHeaders, body: { when: { __type: 'Date', iso: '2026-01-02T03:04:05.000Z' }, place: { __type: 'GeoPoint', latitude: 10, longitude: 20 } } })
  t.equal(valid.status, 200, `valid typed values still save (${valid.text})`)
  const byName = await kit.request('PUT', `/parse/classes/Tally/${id}`, { headers: appHeaders, body: { attachment: { __type: 'File', name: 'a.txt' } } })
  t.equal(byName.status, 200, `a File by its name alone at the top level saves (${byName.text})`)
  t.match((await kit.request('GET', `/parse/classes/Tally/${id}`, { headers: masterHeaders })).json, { attachment: { name: 'a.txt', url: /\/a\.txt$/ } })
})

t.test('on a class with an afterSave only, a File saved by its name alone stores and answers 201, the afterSave sees the url', async (t) => {
  const kit = await sharedKit()
  const send = async (method: string, path: string, body: unknown) => {
    const response = await fetch(kit.origin + path, { method, headers: { ...appHeaders, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(scaled(10_000)) })
    return { status: response.status, json: await response.json() as Record<string, unknown> }
  }
  const stored = async (id: string) => (await kit.request('GET', `/parse/classes/Logged/${id}`, { headers: masterHeaders })).json
  const afterSaveSaw = async (count: number) => {
    const until = Date.now() + scaled(5_000)
    while (loggedUrls.length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
    return loggedUrls.at(-1)
  }
  const pointer = await send('POST', '/parse/classes/Logged', { crate: { __type: 'Pointer', className: 'Crate' } })
  t.match(pointer, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /crate holds a Pointer without an objectId/ } }, 'a Pointer without objectId is refused before the write')
  const url = /^http:\/\/[^/]+\/parse\/files\/[^/]+\/a\.txt$/
  const created = await send('POST', '/parse/classes/Logged', { attachment: { __type: 'File', name: 'a.txt' } })
  t.equal(created.status, 201, JSON.stringify(created.json))
  const id = created.json.objectId as string
  t.match(await afterSaveSaw(1), url, 'the afterSave sees the url Parse fills in')
  t.match(await stored(id), { attachment: { __type: 'File', name: 'a.txt', url } }, 'stored, read back with its url')
  const updated = await send('PUT', `/parse/classes/Logged/${id}`, { attachment: { __type: 'File', name: 'b.txt' } })
  t.equal(updated.status, 200, JSON.stringify(updated.json))
  t.match(await afterSaveSaw(2), /\/b\.txt$/, 'an update too')
  const inBatch = await send('POST', '/parse/batch', { requests: [{ method: 'POST', path: '/parse/classes/Logged', body: { attachment: { __type: 'File', name: 'c.txt' } } }] })
  t.match(inBatch.json, [{ success: { objectId: String } }], `inside a batch (${JSON.stringify(inBatch.json).slice(0, 200)})`)
  t.match(await afterSaveSaw(3), /\/c\.txt$/, 'inside a batch, the afterSave sees the url')
  // Parse fills in no url below the top level (nor in its answer): the afterSave could not encode it, so refused before the write.
  const before = loggedUrls.length
  const nested = await send('POST', '/parse/classes/Logged', { meta: { file: { __type: 'File', name: 'd.txt' } } })
  t.match(nested, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /meta holds a File without a url/ } }, 'a nested File without url: 400 naming the field')
  const none = await kit.request('GET', '/parse/classes/Logged?where=' + encodeURIComponent(JSON.stringify({ meta: { $exists: true } })), { headers: masterHeaders })
  t.same(none.json.results, [], 'nothing stored')
  t.equal(loggedUrls.length, before, 'no afterSave ran')
  const withUrl = await send('POST', '/parse/classes/Logged', { attachment: { __type: 'File', name: 'e.txt', url: 'http://127.0.0.1/parse/files/test-app/e.txt' } })
  t.equal(withUrl.status, 201, `a File with its url saves (${JSON.stringify(withUrl.json)})`)
})

t.test('on a LiveQuery class, a File saved by its name alone stores and answers 201; nested, it is refused before the write', async (t) => {
  const kit = await sharedKit()
  const post = (body: unknown) => kit.request('POST', '/parse/classes/Watched', { headers: appHeaders, body })
  const created = await post({ attachment: { __type: 'File', name: 'w.txt' } })
  t.equal(created.status, 201, created.text)
  const stored = await kit.request('GET', `/parse/classes/Watched/${created.json.objectId as string}`, { headers: masterHeaders })
  t.match(stored.json, { attachment: { __type: 'File', name: 'w.txt', url: /\/w\.txt$/ } })
  const nested = await post({ meta: { list: [{ __type: 'File', name: 'x.txt' }] } })
  t.match({ status: nested.status, json: nested.json }, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /meta holds a File without a url/ } })
  const far = await post({ place: { __type: 'GeoPoint', latitude: 500, longitude: 0 } })
  t.match({ status: far.status, json: far.json }, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /place holds a GeoPoint/ } }, 'a GeoPoint the SDK cannot build is refused by the gate')
  const count = await kit.request('GET', '/parse/classes/Watched?count=1&limit=0', { headers: masterHeaders })
  t.equal(count.json.count, 1, 'nothing stored')
})

t.test('on _Role with an afterSave, a role with its users is created and changed (the check before the write answers unencodable values only)', async (t) => {
  const kit = await sharedKit()
  const user = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'role-member', password: 'role-member-password' } })
  t.equal(user.status, 201, user.text)
  const member = { __type: 'Pointer', className: '_User', objectId: user.json.objectId }
  const before = roleSaves
  const role = await kit.request('POST', '/parse/roles', { headers: masterHeaders, body: { name: 'Auditors', ACL: { '*': { read: true } }, users: { __op: 'AddRelation', objects: [member] } } })
  t.equal(role.status, 201, `created (${role.text})`)
  const changed = await kit.request('PUT', `/parse/roles/${role.json.objectId as string}`, { headers: masterHeaders, body: { users: { __op: 'RemoveRelation', objects: [member] } } })
  t.equal(changed.status, 200, `changed (${changed.text})`)
  t.equal(roleSaves - before, 2, 'the afterSave ran for both')
})

t.test('on _User with an afterSave, a sign-up and a change of the user go through', async (t) => {
  const kit = await sharedKit()
  const before = userSaves
  const body = { username: 'after-save-user', password: 'after-save-password', email: 'after-save@example.com' }
  const created = await kit.request('POST', '/parse/users', { headers: masterHeaders, body })
  t.equal(created.status, 201, `signed up (${created.text})`)
  const changed = await kit.request('PUT', `/parse/users/${created.json.objectId as string}`, { headers: masterHeaders, body: { email: 'changed@example.com', password: 'a-new-password' } })
  t.equal(changed.status, 200, `changed (${changed.text})`)
  t.equal(userSaves - before, 2, 'the afterSave ran for both')
})

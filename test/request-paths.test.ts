// The paths a request takes through the kit, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - request-paths: this file's own tests (first part, its comment kept)
// - test/route-matrix.test.ts (merged here): Route restriction tried as a client would try it: every route Parse Server …
// - test/declared-verbs-case.test.ts (merged here): two declared paths that differ only in case keep refusal routes of their own; its snapshot moved with it unchanged (tap-snapshots/test/request-paths.test.ts.test.cjs)
import t from 'tap'
import Parse from 'parse/node'
import { addUsersToRole, afterCommit, asCaller, BaseModel, BeforeSave, AfterSave, CONFLICT, CloudFunction, ParseClass, ParseField, ParseVersionField, queryRows, roleKey, Route, Transactional, implementACL, type CloudRequest } from '../lib/index.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { APP_ID, masterHeaders, appHeaders, startKit, MASTER_KEY, type Kit } from './helpers/kit.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { rawRequest } from './helpers/raw-http.js'

// ── request-paths ──
// The paths a declared endpoint takes keep every rule Parse applies: the
// caller resolved from Parse's session cache (lib/access/session.ts), SDK
// saves made inside the handler, reads through queryRows. Each test below
// fails if a path skipped class-level permissions, ACLs, beforeSave /
// afterSave, the version field, the ambient transaction, or a logout.
const afterSaves: string[] = []
/** What Memo's beforeSave saw last: the user object and the context. */
const seenByBeforeSave: { user?: Parse.User, context?: Record<string, unknown> } = {}

@ParseClass('Memo', {
  clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { [roleKey('Writer')]: true }, update: { '*': true }, delete: {} }
})
class Memo extends BaseModel {
  @ParseField({ type: 'String', required: true }) declare text: string
  @ParseField({ type: 'String' }) declare stamp: string

  @BeforeSave()
  static stampIt (request: Parse.Cloud.BeforeSaveRequest<Memo>) {
    seenByBeforeSave.user = request.user
    seenByBeforeSave.context = request.context
    if (request.object.text === 'refuse me') throw new Parse.Error(Parse.Error.VALIDATION_ERROR, 'refused by beforeSave')
    request.object.stamp = `stamped:${request.object.text}`
  }

  @AfterSave()
  static record (request: Parse.Cloud.AfterSaveRequest<Memo>) {
    afterSaves.push(request.object.text)
  }
}

@ParseClass('Counter')
class Counter extends BaseModel {
  @ParseField({ type: 'Number' }) declare value: number
  @ParseVersionField() declare version: number
}

@ParseClass('Sealed', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: {}, update: {}, delete: {} } })
class Sealed extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}

const writerOnly = (user: Parse.User) => implementACL({ publicRead: false, owner: [{ user, read: true, write: true }] })

@Route('fast')
export class FastFunctions {
  @CloudFunction({ requiresAuth: true, validation: { fields: { text: { type: String, required: true }, asToken: { type: String }, isPrivate: { type: Boolean } } } })
  static async createMemo (request: CloudRequest<{ text: string, asToken?: string, isPrivate?: boolean }>) {
    const memo = new Memo({ text: request.params.text })
    if (request.params.isPrivate) memo.setACL(writerOnly(request.user!))
    // asToken: act as another session than the caller's (the reused caller must not leak into it).
    const options = request.params.asToken ? { sessionToken: request.params.asToken } : asCaller(request)
    await memo.save(null, options)
    return { id: memo.id, stamp: memo.stamp }
  }

  @CloudFunction({ requiresAuth: true, validation: { fields: { text: { type: String, required: true } } } })
  static async createMemoWithContext (request: CloudRequest<{ text: string }>) {
    const memo = new Memo({ text: request.params.text })
    await memo.save(null, { ...asCaller(request), context: { from: 'handler' } })
    return { sameUser: seenByBeforeSave.user === request.user, sameUserId: seenByBeforeSave.user?.id === request.user?.id, context: seenByBeforeSave.context }
  }

  @CloudFunction({ requiresAuth: true, validation: { fields: { text: { type: String, required: true } } } })
  static async createMemoWithUncloneableContext (request: CloudRequest<{ text: string }>) {
    await new Memo({ text: request.params.text }).save(null, { ...asCaller(request), context: { callback: () => {} } })
  }

  @CloudFunction({ validation: { fields: { text: { type: String, required: true } } } })
  static async createSealed (request: CloudRequest<{ text: string }>) {
    const sealed = new Sealed({ text: request.params.text })
    await sealed.save(null, asCaller(request))
    return { id: sealed.id }
  }

  @CloudFunction({ requiresAuth: true, validation: { fields: { id: { type: String, required: true } } } })
  static async bumpCounter (request: CloudRequest<{ id: string }>) {
    const counter = await new Parse.Query(Counter).get(request.params.id, asCaller(request))
    counter.value += 1
    await counter.save(null, asCaller(request))
    return { value: counter.value, version: counter.version }
  }

  @CloudFunction({ requiresAuth: true, validation: { fields: { id: { type: String, required: true }, text: { type: String, required: true } } } })
  static async updateMemo (request: CloudRequest<{ id: string, text: string }>) {
    const memo = Memo.createWithoutData(request.params.id) as Memo
    memo.text = request.params.text
    await memo.save(null, asCaller(request))
    return { stamp: memo.stamp }
  }

  @CloudFunction({ methods: ['GET'], requiresAuth: true })
  static whoAmI (request: CloudRequest) {
    return { id: request.user?.id ?? null, username: request.user?.getUsername() ?? null, token: request.user?.getSessionToken() ?? null }
  }

  @CloudFunction({ methods: ['GET'], requireRoles: ['Writer'] })
  static writersOnly () {
    return 'writer'
  }

  @CloudFunction({ methods: ['GET'] })
  static async listMemos (request: CloudRequest) {
    return queryRows(new Parse.Query(Memo).ascending('text'), request)
  }

  @CloudFunction({ validation: { fields: { version: { type: Number } } } })
  static async createCounter (request: CloudRequest<{ version?: number }>) {
    const counter = new Counter({ value: 1, version: request.params.version })
    await counter.save(null, asCaller(request))
    return { id: counter.id, version: counter.version }
  }

  @CloudFunction({ validation: { fields: { id: { type: String, required: true } } } })
  static async bumpStale (request: CloudRequest<{ id: string }>) {
    const first = await new Parse.Query(Counter).get(request.params.id, { useMasterKey: true })
    const second = await new Parse.Query(Counter).get(request.params.id, { useMasterKey: true })
    first.value += 1
    await first.save(null, { useMasterKey: true })
    second.value += 10
    await second.save(null, { useMasterKey: true }) // read at the old version: refused
    return 'unreachable'
  }

  @CloudFunction({ requiresAuth: true, validation: { fields: { text: { type: String, required: true } } } })
  @Transactional()
  static async createThenFail (request: CloudRequest<{ text: string }>) {
    await new Memo({ text: request.params.text }).save(null, asCaller(request))
    await afterCommit(() => { afterSaves.push('after commit must not run') })
    throw new Parse.Error(Parse.Error.SCRIPT_FAILED, 'rolled back on purpose')
  }
}

t.test('optimised paths keep Parse\'s rules', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true })
  const alice = await kit.signUp('alice')
  const bob = await kit.signUp('bob')
  await addUsersToRole('Writer', [alice.id])
  const as = (user: { token: string }) => ({ ...appHeaders, 'x-parse-session-token': user.token })
  const post = (url: string, user: { token: string }, body: unknown) => kit.request('POST', `/parse/fast/${url}`, { headers: as(user), body })

  t.test('beforeSave / afterSave run on a handler\'s save', async (t) => {
    const saved = await post('createMemo', alice, { text: 'hello' })
    t.equal(saved.status, 200, saved.text)
    t.equal(saved.json.stamp, 'stamped:hello', 'beforeSave changed the object, and the change came back to the SDK object')
    t.ok(afterSaves.includes('hello'), 'afterSave ran')
    const refused = await post('createMemo', alice, { text: 'refuse me' })
    t.equal(refused.status, 400)
    t.same(refused.json, { code: Parse.Error.VALIDATION_ERROR, error: 'refused by beforeSave' })
    const stored = await new Parse.Query(Memo).equalTo('text', 'refuse me').count({ useMasterKey: true })
    t.equal(stored, 0, 'nothing was written')
  })

  t.test('class-level permissions: create needs the Writer role', async (t) => {
    const refused = await post('createMemo', bob, { text: 'from bob' })
    t.equal(refused.status, 400)
    t.equal(refused.json.code, Parse.Error.OPERATION_FORBIDDEN, refused.text)
    t.equal(await new Parse.Query(Memo).equalTo('text', 'from bob').count({ useMasterKey: true }), 0)
  })

  t.test('a save made with another session acts as that session, not as the caller', async (t) => {
    // Alice (a Writer) calls; the save uses Bob's token: the CLP must judge Bob.
    const asBob = await post('createMemo', alice, { text: 'bob through alice', asToken: bob.token })
    t.equal(asBob.json.code, Parse.Error.OPERATION_FORBIDDEN, asBob.text)
    const asNobody = await post('createMemo', alice, { text: 'bad token', asToken: 'r:not-a-session' })
    t.equal(asNobody.json.code, Parse.Error.INVALID_SESSION_TOKEN, asNobody.text)
  })

  t.test('ACLs: an update by someone the ACL does not let write is refused; reads hide rows the caller may not see', async (t) => {
    const mine = await post('createMemo', alice, { text: 'private', isPrivate: true })
    t.equal(mine.status, 200, mine.text)
    const hijack = await post('updateMemo', bob, { id: mine.json.id, text: 'hijacked' })
    t.equal(hijack.json.code, Parse.Error.OBJECT_NOT_FOUND, hijack.text)
    const own = await post('updateMemo', alice, { id: mine.json.id, text: 'private, edited' })
    t.equal(own.status, 200, own.text)
    t.equal(own.json.stamp, 'stamped:private, edited', 'beforeSave runs on updates too')
    const bobSees = await kit.request('GET', '/parse/fast/listMemos', { headers: as(bob) })
    const aliceSees = await kit.request('GET', '/parse/fast/listMemos', { headers: as(alice) })
    t.notOk(bobSees.json.results.some((row: { text: string }) => row.text.startsWith('private')), 'bob does not read alice\'s private memo')
    t.ok(aliceSees.json.results.some((row: { text: string }) => row.text === 'private, edited'), 'alice does')
  })

  t.test('sessions: the user behind the token, its roles, and a logout that takes effect at once', async (t) => {
    const carol = await kit.signUp('carol')
    const get = (url: string, user: { token: string }) => kit.request('GET', `/parse/fast/${url}`, { headers: as(user) })
    for (let i = 0; i < 2; i++) {
      // The second call is answered from Parse's session cache.
      const me = await get('whoAmI', carol)
      t.same(me.json, { id: carol.id, username: 'carol', token: carol.token }, `call ${i + 1}`)
    }
    t.equal((await get('writersOnly', alice)).status, 200, 'a Writer passes the role check')
    t.equal((await get('writersOnly', carol)).json.code, Parse.Error.OPERATION_FORBIDDEN, 'carol holds no role')
    const logout = await kit.request('POST', '/parse/logout', { headers: as(carol), body: {} })
    t.equal(logout.status, 200, logout.text)
    const after = await get('whoAmI', carol)
    t.equal(after.json.code, Parse.Error.INVALID_SESSION_TOKEN, `the logged-out token is refused: ${after.text}`)
  })

  t.test('the version field: new objects start at 1, a stale save is a CONFLICT', async (t) => {
    const created = await kit.request('POST', '/parse/fast/createCounter', { headers: masterHeaders, body: { version: 41 } })
    t.equal(created.status, 200, created.text)
    t.equal(created.json.version, 1, 'whatever the client sent')
    const stale = await kit.request('POST', '/parse/fast/bumpStale', { headers: masterHeaders, body: { id: created.json.id } })
    t.equal(stale.json.code, CONFLICT, stale.text)
    const stored = await new Parse.Query(Counter).get(created.json.id, { useMasterKey: true })
    t.equal(stored.value, 2, 'only the first save landed')
    t.equal(stored.version, 2)
  })

  t.test('a save with the caller\'s own token acts as the caller resolved for the request, and keeps its context', async (t) => {
    const saved = await post('createMemoWithContext', alice, { text: 'with context' })
    t.equal(saved.status, 200, saved.text)
    // fastPaths: false: the save goes through Parse's own chain, which looks the session up again (another object for the same user).
    if (FAST_PATHS) t.equal(saved.json.sameUser, true, 'beforeSave\'s request.user is the handler\'s own user: the session was not looked up again')
    t.equal(saved.json.sameUserId, true, 'beforeSave\'s request.user is the caller')
    t.same(saved.json.context, { from: 'handler' }, 'the save\'s context reaches beforeSave')
  })

  t.test('a context that cannot be copied is refused as Parse refuses it, and nothing is saved', async (t) => {
    const refused = await post('createMemoWithUncloneableContext', alice, { text: 'uncloneable' })
    t.equal(refused.status, 400, refused.text)
    t.match(refused.json, { code: Parse.Error.INVALID_VALUE, error: /Context contains non-cloneable values/ })
    const stored = await new Parse.Query('Memo').equalTo('text', 'uncloneable').count({ useMasterKey: true })
    t.equal(stored, 0)
  })

  t.test('class-level permissions: create: {} refuses every user, only the master key writes', async (t) => {
    const refused = await post('createSealed', alice, { text: 'by alice' })
    t.equal(refused.json.code, Parse.Error.OPERATION_FORBIDDEN, refused.text)
    const anonymous = await kit.request('POST', '/parse/fast/createSealed', { headers: appHeaders, body: { text: 'by nobody' } })
    t.equal(anonymous.json.code, Parse.Error.OPERATION_FORBIDDEN, anonymous.text)
    t.equal(await new Parse.Query(Sealed).count({ useMasterKey: true }), 0, 'nothing was written')
    const master = await kit.request('POST', '/parse/fast/createSealed', { headers: masterHeaders, body: { text: 'by master' } })
    t.equal(master.status, 200, master.text)
  })

  t.test('the version field on a caller\'s update: each save moves it on by one', async (t) => {
    const created = await kit.request('POST', '/parse/fast/createCounter', { headers: masterHeaders, body: {} })
    const counter = await new Parse.Query(Counter).get(created.json.id, { useMasterKey: true })
    counter.setACL(writerOnly(Parse.User.createWithoutData(alice.id) as Parse.User))
    await counter.save(null, { useMasterKey: true })
    t.equal(counter.version, 2)
    const bumped = await post('bumpCounter', alice, { id: created.json.id })
    t.same(bumped.json, { value: 2, version: 3 }, bumped.text)
    const again = await post('bumpCounter', alice, { id: created.json.id })
    t.same(again.json, { value: 3, version: 4 }, again.text)
    const hidden = await post('bumpCounter', bob, { id: created.json.id })
    t.equal(hidden.json.code, Parse.Error.OBJECT_NOT_FOUND, 'the ACL still hides it from bob')
  })

  t.test('transactions: a handler\'s save rolls back with the body', async (t) => {
    const failed = await post('createThenFail', alice, { text: 'in a failed transaction' })
    t.equal(failed.json.code, Parse.Error.SCRIPT_FAILED, failed.text)
    t.equal(await new Parse.Query(Memo).equalTo('text', 'in a failed transaction').count({ useMasterKey: true }), 0, 'rolled back')
    t.notOk(afterSaves.includes('after commit must not run'))
  })

  t.test('a caller\'s save loads no schema (the warm-up\'s controller is shared) and reaches the database once: the insert, no session or role lookup', async (t) => {
    // Memo's create needs the Writer role: the role comes from Parse's role cache, the user from the request.
    t.equal((await post('createMemo', alice, { text: 'warms the caches' })).status, 200)
    const calls = countAdapterCalls(parseConfig(APP_ID).database.adapter as unknown as Record<string, unknown>)
    const saved = await post('createMemo', alice, { text: 'counted' })
    calls.stop()
    t.equal(saved.status, 200, saved.text)
    // watch: what each schema controller Parse builds registers (one per schema load); none while the
    // schema cache is unchanged since the warm-up's (parse/reused-schema.ts).
    if (FAST_PATHS) t.same(calls.seen, ['createObject Memo'], 'no schema load, one statement, and it is the insert')
    else t.ok(calls.seen.includes('createObject Memo'), `Parse's own chain: the insert, among ${calls.seen.length} calls`)
  })
})

/** Records each call of the storage adapter's public methods (class name included) until stop(). */
function countAdapterCalls (adapter: Record<string, unknown>): { seen: string[], stop: () => void } {
  const seen: string[] = []
  const names = new Set<string>()
  for (let proto = Object.getPrototypeOf(adapter); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      // connect: the MongoDB adapter calls it on itself before each operation (a no-op once connected).
      if (name !== 'constructor' && name !== 'connect' && !name.startsWith('_') && typeof adapter[name] === 'function') names.add(name)
    }
  }
  for (const name of names) {
    const method = adapter[name] as (...args: unknown[]) => unknown
    // An own property on the adapter: the kit's wrapper sees a new method and wraps it as before.
    adapter[name] = function (this: unknown, ...args: unknown[]) {
      seen.push(typeof args[0] === 'string' ? `${name} ${args[0]}` : name)
      return method.apply(this, args)
    }
  }
  return { seen, stop: () => { for (const name of names) delete adapter[name] } }
}

// ── from test/route-matrix.test.ts ──
// Route restriction tried as a client would try it: every route Parse Server
// serves (read from Parse's own routers at run time) × every verb × three kinds of
// caller, with allowAuthRoutes off and on, then a list of known ways around a
// gate. A spy on Parse's Express app records each request that reaches Parse;
// only the README's open list may.
const VERBS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']
const CALLERS = ['no app id', 'app id', 'app id + session'] as const
type Caller = typeof CALLERS[number]

/** The README's open list ("Route restriction"), written out here rather than imported. */
// {mount}/health is answered by the kit itself (readiness), so it never reaches Parse.
const ALWAYS_OPEN: Array<[string, RegExp]> = [
  ['GET HEAD POST', /^\/functions\/[^/]+$/]
]
const AUTH_OPEN: Array<[string, RegExp]> = [
  ['GET HEAD POST', /^\/login$/],
  ['POST', /^\/logout$/],
  ['POST', /^\/users$/],
  ['GET HEAD', /^\/users\/me$/],
  ['GET HEAD', /^\/sessions\/me$/]
  // /requestPasswordReset and /verificationEmailRequest open too, but without an
  // email adapter the kit answers them itself (400 naming what is missing).
]

function expectedToReach (verb: string, path: string, caller: Caller, allowAuthRoutes: boolean): boolean {
  const rules = allowAuthRoutes ? [...ALWAYS_OPEN, ...AUTH_OPEN] : ALWAYS_OPEN
  const rule = rules.find(([, pattern]) => pattern.test(path))
  if (!rule) return false
  if (rule[0] === '*') return true
  return caller !== 'no app id' && rule[0].split(' ').includes(verb)
}

interface ExpressLayer { route?: { path: unknown, methods: Record<string, boolean> }, handle?: { stack?: ExpressLayer[] } }

/** Every route path of Parse's running Express app, with its parameters filled in. */
function parseRoutePaths (parseApp: any): string[] {
  const paths = new Set<string>(['/health'])
  const walk = (layers: ExpressLayer[]) => {
    for (const layer of layers) {
      if (layer.route && typeof layer.route.path === 'string') paths.add(concrete(layer.route.path))
      else if (Array.isArray(layer.handle?.stack)) walk(layer.handle.stack)
    }
  }
  walk(parseApp.router.stack)
  return [...paths]
}

function concrete (path: string): string {
  return path.split('/').map((segment) => {
    if (segment === ':className') return 'Note'
    if (segment === ':appId') return APP_ID
    if (segment.startsWith(':')) return 'abc123'
    if (segment.startsWith('*')) return 'a.txt'
    return segment
  }).join('/')
}

interface Spy { reached: Set<string>, next: () => string }

/** Counts requests at the entrance of Parse's Express app (express calls app.handle for each). */
function spyOnParse (kit: Kit): Spy {
  const parseApp = kit.app.kit.parse.app as any
  const original = parseApp.handle
  const reached = new Set<string>()
  parseApp.handle = function (req: any, res: any, next: any) {
    reached.add(String(req.headers['x-probe'] ?? 'untagged'))
    return original.call(this, req, res, next)
  }
  let counter = 0
  return { reached, next: () => `p${++counter}` }
}

async function inBatches<T> (items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run))
}

for (const allowAuthRoutes of [false, true]) {
  t.test(`allowAuthRoutes ${allowAuthRoutes ? 'on' : 'off'}`, async (t) => {
    const kit = await startKit(t, { allowAuthRoutes })
    const { token } = await kit.signUp(`matrix-${allowAuthRoutes}`)
    const spy = spyOnParse(kit)
    const port = Number(new URL(kit.origin).port)

    t.test('the spy sees what reaches Parse', async (t) => {
      const probe = spy.next()
      const result = await kit.request('GET', '/parse/classes/Note', { headers: { ...masterHeaders, 'x-probe': probe } })
      t.equal(result.status, 200, result.text)
      t.ok(spy.reached.has(probe), 'a master-key request is seen entering Parse')
      const basicProbe = spy.next()
      const basic = await kit.request('GET', '/parse/classes/Note', { headers: { authorization: `Basic ${Buffer.from(`${APP_ID}:${MASTER_KEY}`).toString('base64')}`, 'x-probe': basicProbe } })
      t.equal(basic.status, 200, 'the master key over HTTP Basic (Parse\'s httpAuth) is the master key to the gate too')
      t.ok(spy.reached.has(basicProbe))
    })

    t.test('every Parse route × verb × caller: only the open list reaches Parse', async (t) => {
      const paths = parseRoutePaths(kit.app.kit.parse.app)
      t.ok(paths.length > 40, `Parse's routers list ${paths.length} routes`)
      for (const known of ['/classes/Note', '/users', '/batch', '/schemas/Note', '/files/a.txt', '/apps/choose_password']) {
        t.ok(paths.includes(known), `${known} is among them`)
      }
      const headersFor: Record<Caller, Record<string, string>> = {
        'no app id': {},
        'app id': appHeaders,
        'app id + session': { ...appHeaders, 'x-parse-session-token': token }
      }
      const cells = paths.flatMap((path) => VERBS.flatMap((verb) => CALLERS.map((caller) => ({ path, verb, caller }))))
      const wrong: string[] = []
      let reachedCount = 0
      await inBatches(cells, 25, async ({ path, verb, caller }) => {
        const probe = spy.next()
        const withBody = !['GET', 'HEAD'].includes(verb)
        const response = await kit.app.inject({
          method: verb as any,
          url: `/parse${path}`,
          headers: { ...headersFor[caller], 'x-probe': probe, ...(withBody ? { 'content-type': 'application/json' } : {}) },
          payload: withBody ? '{}' : undefined
        })
        const reached = spy.reached.has(probe)
        if (reached) reachedCount++
        const expected = expectedToReach(verb, path, caller, allowAuthRoutes)
        if (reached !== expected) wrong.push(`${verb} ${path} (${caller}): ${reached ? 'reached Parse' : `refused ${response.statusCode}`}, expected ${expected ? 'to reach' : 'refusal'}`)
        // Readiness is the kit's own answer, for any caller.
        const kitAnswers = path === '/health'
        if (!reached && !kitAnswers && response.statusCode < 400) wrong.push(`${verb} ${path} (${caller}): answered ${response.statusCode} without reaching Parse`)
      })
      t.same(wrong, [], `${cells.length} requests; ${reachedCount} reached Parse, all on the open list`)
    })

    t.test('the email routes answer what is missing instead of a 500', { skip: !allowAuthRoutes && 'closed without allowAuthRoutes' }, async (t) => {
      for (const path of ['/requestPasswordReset', '/verificationEmailRequest']) {
        const probe = spy.next()
        const result = await kit.request('POST', `/parse${path}`, { headers: { ...appHeaders, 'x-probe': probe }, body: { email: 'a@example.com' } })
        t.equal(result.status, 400, `${path}: ${result.text}`)
        t.match(result.json?.error, /emailAdapter/, 'names the missing emailAdapter')
        t.match(result.json?.error, /publicServerURL/, 'and publicServerURL')
        t.notOk(spy.reached.has(probe))
      }
    })

    t.test('evasions reach nothing', async (t) => {
      const closed = '/parse/classes/Note'
      const target = allowAuthRoutes ? '/parse/users' : closed
      const json = 'application/json'
      const cases: Array<{ label: string, line: string, headers?: Record<string, string>, body?: string }> = []
      const add = (label: string, line: string, headers: Record<string, string> = appHeaders, body?: string) => cases.push({ label, line, headers, body })

      // Absolute-form targets: Fastify and Express route them by their path.
      for (const scheme of ['http', 'https']) {
        for (const host of ['functions', '127.0.0.1', `127.0.0.1:${port}`, 'localhost', 'evil.example:443', 'a@b']) {
          add(`absolute ${scheme}://${host}`, `GET ${scheme}://${host}${closed} HTTP/1.1`)
          add(`absolute ${scheme}://${host} users`, `GET ${scheme}://${host}/parse/users HTTP/1.1`)
          add(`absolute ${scheme}://${host} POST`, `POST ${scheme}://${host}${closed} HTTP/1.1`, { ...appHeaders, 'content-type': json }, '{"views":999999}')
        }
      }
      add('authority form', `GET 127.0.0.1${closed} HTTP/1.1`)
      // Encoded separators and dot segments.
      for (const path of [
        '/parse/classes%2FNote', '/parse/classes%2fNote', '/parse/functions%2F..%2Fclasses%2FNote', '/parse/functions/x%2F..%2F..%2Fclasses%2FNote',
        '/parse/functions/%2e%2e/classes/Note', '/parse/functions/%2E%2E/users', '/parse/functions/../classes/Note', '/parse/functions/./../users',
        '/parse/functions/x/../../classes/Note', '/parse/functions/%252e%252e/classes/Note', '/parse/cl%61sses/Note', '/parse/functions/x%5c..%5cclasses'
      ]) add(`encoded ${path}`, `GET ${path} HTTP/1.1`)
      // Slashes, case, parameters, backslashes.
      for (const path of [
        '/parse//classes/Note', '/parse/classes//Note', '//parse/classes/Note', '/parse/classes/Note/', '/parse/classes/Note//',
        '/parse/functions//../classes/Note', '/parse/CLASSES/Note', '/parse/Classes/Note', '/PARSE/classes/Note', '/Parse/classes/Note', '/parse/USERS', '/parse/Users/',
        '/parse/classes;x/Note', '/parse/classes/Note;jsessionid=1', '/parse/functions;/../classes/Note', '/parse;/classes/Note',
        '/parse/functions\\..\\classes\\Note', '/parse\\classes\\Note', '/parse/functions/x\\..\\..\\users'
      ]) add(`path ${path}`, `GET ${path} HTTP/1.1`)
      // Method override in every body type Parse parses, against the target (GET is closed on both).
      const override = { _method: 'GET' }
      for (const [type, body] of [
        [json, JSON.stringify(override)], ['text/plain', JSON.stringify(override)], ['application/x-www-form-urlencoded', '_method=GET'],
        ['application/vnd.evil+json', JSON.stringify(override)], [undefined, JSON.stringify(override)], ['text/plain; charset=utf-8', JSON.stringify({ _method: 'get' })],
        ['application/octet-stream', JSON.stringify(override)], ['application/json; charset=utf-16', JSON.stringify(override)]
      ] as Array<[string | undefined, string]>) {
        add(`_method in ${type ?? 'type-less'} body`, `POST ${target} HTTP/1.1`, type ? { ...appHeaders, 'content-type': type } : appHeaders, body)
        add(`_method in ${type ?? 'type-less'} body (delete)`, `POST ${target} HTTP/1.1`, type ? { ...appHeaders, 'content-type': type } : appHeaders, body.replace(/GET|get/, 'DELETE'))
      }
      add('_method with body app id', `POST ${target} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ ...override, _ApplicationId: APP_ID }))
      add('_method in a form with the app id', `POST ${target} HTTP/1.1`, { 'content-type': 'application/x-www-form-urlencoded' }, `_method=GET&_ApplicationId=${APP_ID}`)
      // Override headers (Parse ignores them; a proxy in front might not).
      for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
        add(`${name} header`, `POST ${target} HTTP/1.1`, { ...appHeaders, [name]: 'GET', 'content-type': json }, '{}')
      }
      // Credentials in the body, and wrong keys.
      add('body app id, wrong master key', `POST ${closed} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ _ApplicationId: APP_ID, _MasterKey: 'wrong' }))
      add('body app id and session token', `POST ${closed} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ _ApplicationId: APP_ID, _SessionToken: token, views: 999999 }))
      add('header app id, body master key (Parse ignores it)', `POST ${closed} HTTP/1.1`, { ...appHeaders, 'content-type': 'text/plain' }, JSON.stringify({ _MasterKey: MASTER_KEY, views: 999999 }))
      add('header app id, body master key in JSON', `POST ${closed} HTTP/1.1`, { ...appHeaders, 'content-type': json }, JSON.stringify({ _MasterKey: MASTER_KEY, _method: 'GET' }))
      add('wrong master key header', `GET ${closed} HTTP/1.1`, { ...appHeaders, 'X-Parse-Master-Key': `${MASTER_KEY}x` })
      add('master key prefix', `GET ${closed} HTTP/1.1`, { ...appHeaders, 'X-Parse-Master-Key': MASTER_KEY.slice(0, -1) })
      const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`
      add('HTTP Basic with a wrong master key', `GET ${closed} HTTP/1.1`, { Authorization: basic(`${APP_ID}:wrong`) })
      add('HTTP Basic with a JavaScript key', `GET ${closed} HTTP/1.1`, { Authorization: basic(`${APP_ID}:javascript-key=x`) })
      add('HTTP Basic, header app id, wrong master key', `GET ${closed} HTTP/1.1`, { ...appHeaders, Authorization: basic(`${APP_ID}:wrong`) })
      add('master key without app id', `GET ${closed} HTTP/1.1`, { 'X-Parse-Master-Key': MASTER_KEY })
      add('GET with a body carrying the master key', `GET ${closed} HTTP/1.1`, { 'content-type': json }, JSON.stringify({ _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }))
      // Batches of closed requests.
      const batch = JSON.stringify({ requests: [{ method: 'GET', path: '/parse/classes/Note' }, { method: 'GET', path: '/parse/users' }, { method: 'POST', path: '/parse/classes/Note', body: { views: 999999 } }] })
      add('/batch with closed inner requests', 'POST /parse/batch HTTP/1.1', { ...appHeaders, 'content-type': json }, batch)
      add('/batch with a session', 'POST /parse/batch HTTP/1.1', { ...appHeaders, 'X-Parse-Session-Token': token, 'content-type': json }, batch)
      add('/batch as text/plain with body keys', 'POST /parse/batch HTTP/1.1', { 'content-type': 'text/plain' }, JSON.stringify({ ...JSON.parse(batch), _ApplicationId: APP_ID, _SessionToken: token }))
      add('/batch through an override', 'POST /parse/functions/x HTTP/1.1', { ...appHeaders, 'content-type': json }, JSON.stringify({ _method: 'POST', requests: [] }).replace('"POST"', '"BATCH"'))

      const leaks: string[] = []
      for (const { label, line, headers, body } of cases) {
        const probe = spy.next()
        const result = await rawRequest(port, line, { ...headers, 'x-probe': probe }, body)
        if (spy.reached.has(probe)) leaks.push(`${label}: reached Parse (${result.status} ${result.body.slice(0, 120)})`)
        else if (result.status < 400 || result.status >= 500) leaks.push(`${label}: answered ${result.status} ${result.body.slice(0, 120)}`)
      }
      t.same(leaks, [], `${cases.length} evasions, none reached Parse, each refused with a 4xx`)
      t.notOk(spy.reached.has('untagged'), 'no untagged request reached Parse')
    })

    t.test('the open list still works over the same raw socket', async (t) => {
      const probe = spy.next()
      const health = await rawRequest(port, 'GET /parse/health HTTP/1.1', { 'x-probe': probe })
      t.equal(health.status, 200)
      t.notOk(spy.reached.has(probe), '/health is answered by the kit (readiness), not by Parse')
      if (allowAuthRoutes) {
        const signUpProbe = spy.next()
        const signUp = await rawRequest(port, 'POST /parse/users HTTP/1.1', { ...appHeaders, 'content-type': 'application/x-www-form-urlencoded', 'x-probe': signUpProbe }, 'username=form-user&password=form-password-1')
        t.equal(signUp.status, 201, signUp.body)
        t.ok(spy.reached.has(signUpProbe), 'a form-encoded sign-up reaches Parse with its fields')
      }
    })
  })
}

// ── from test/declared-verbs-case.test.ts ──
// Two declared paths that differ only in case (`caseTwin`, `casetwin`): the kit's
// single refusal route cannot tell their loose spellings apart, so each keeps
// refusal routes of its own. Every verb on every spelling of both is pinned in a
// snapshot recorded from the per-path refusal routes (see declared-verbs.test.ts).
// Regenerate only when an answer is meant to change: `npx tap --snapshot test/request-paths.test.ts`.
@Route('cases')
class CaseTwinFunctions {
  @CloudFunction({ methods: ['GET'] })
  static caseTwin () { return { fn: 'caseTwin' } }

  @CloudFunction({ methods: ['POST'] })
  static casetwin () { return { fn: 'casetwin' } }
}

const CASE_VERBS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND']
const CASE_CALLERS: Array<[string, Record<string, string>]> = [['no credentials', {}], ['app id', { 'x-parse-application-id': APP_ID }]]

t.test('paths differing only in case keep their own answers', async (t) => {
  const kit = await startKit(t, { functions: [CaseTwinFunctions] })
  const urls = ['caseTwin', 'casetwin', 'CaseTwin', 'CASETWIN'].flatMap((name) => [
    `/parse/cases/${name}`, `/parse/cases/${name}/`, `/parse/functions/${name}`, `/parse/functions/${name}/`
  ])
  const answers: Record<string, string> = {}
  for (const url of urls) {
    for (const verb of CASE_VERBS) {
      for (const [caller, headers] of CASE_CALLERS) {
        const response = await kit.app.inject({ method: verb as 'GET', url, headers })
        const allow = response.headers.allow === undefined ? '' : `allow=${String(response.headers.allow)} `
        // A HEAD answer carries no body on the wire, whatever inject() hands back.
        answers[`${verb} ${url} [${caller}]`] = `${response.statusCode} ${allow}${verb === 'HEAD' ? '' : response.body}`
      }
    }
  }
  t.matchSnapshot(answers, 'answers')
})

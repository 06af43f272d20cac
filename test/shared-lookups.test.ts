// When Parse's cache entries for a session and its user's roles expire (5 s by
// default), every request of that session then in flight misses at once. The
// session lookup (access/session.ts) and the role load (parse/shared-role-loads.ts)
// are then made once and shared; each request still gets a user object and a
// role list of its own, and a bad token is answered alike to all, for one query.
import t, { type Test } from 'tap'
import Parse from 'parse/node'
import { addUsersToRole, CloudFunction, ensureRole, removeUsersFromRole, Route, type CloudRequest } from '../lib/index.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { lookUpCaller } from '../lib/access/session.js'
import { parseInternals } from '../lib/parse/internals.js'
import { roleLoadsRunning } from '../lib/parse/shared-role-loads.js'
import { FAST_PATHS } from './helpers/fast-paths.js'
import { JOIN_MS, SharedLoads } from '../lib/parse/shared-loads.js'
import { APP_ID, startKit } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { AuthModule } = parseInternals()

@Route('lookups')
export class LookupFunctions {
  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { n: { type: Number, required: true } } } })
  static async mark (request: CloudRequest<{ n: number }>) {
    // Each request marks its user: a user object shared with another request would show that request's mark.
    const user = request.user!
    const before = user.get('mark') ?? null
    user.set('mark', request.params.n)
    await new Promise((resolve) => setImmediate(resolve))
    return { id: user.id, before, after: user.get('mark') }
  }
}

interface Counted { calls: number, restore: () => void }

/** Counts calls of a function on an object (the kit and Parse call both through the object). */
function counting (owner: object, name: string): Counted {
  const target = owner as Record<string, (...args: unknown[]) => unknown>
  const original = target[name]
  const counted: Counted = { calls: 0, restore: () => { target[name] = original } }
  target[name] = function (this: unknown, ...args: unknown[]) { counted.calls++; return original.apply(this, args) }
  return counted
}

const cache = () => parseConfig(APP_ID).cacheController as unknown as { user: { del (key: string): Promise<void> }, role: { del (key: string): Promise<void>, clear (): Promise<void> } }

/**
 * The sharing is a fast path: with fastPaths: false each request looks up for
 * itself, as on Parse alone (the answers are checked in both modes).
 */
function sharedOnFastPaths (t: Test, calls: number, shared: number, message: string): void {
  if (FAST_PATHS) t.equal(calls, shared, message)
  else t.ok(calls >= 1, `Parse's own chains: each looks up for itself (${calls} lookups)`)
}

t.test('concurrent requests of one session share one lookup when Parse\'s cache misses; each keeps its own user', async (t) => {
  void LookupFunctions
  const kit = await startKit(t)
  const user = await kit.signUp('busy-user')
  const call = (n: number, token = user.token) => kit.request('POST', '/parse/lookups/mark', { headers: { 'x-parse-application-id': APP_ID, 'x-parse-session-token': token }, body: { n } })
  t.equal((await call(0)).status, 200, 'warm')

  await cache().user.del(user.token)
  const lookups = counting(AuthModule, 'getAuthForSessionToken')
  t.teardown(lookups.restore)
  const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n + 1)))
  t.same(answers.map((answer) => answer.status), Array(20).fill(200), 'all 20 answered')
  sharedOnFastPaths(t, lookups.calls, 1, 'one session lookup served the 20 requests that missed the cache together')
  t.same(answers.map((answer) => answer.json), answers.map((_, n) => ({ id: user.id, before: null, after: n + 1 })), 'each request had a user of its own (no request saw another\'s mark)')

  lookups.calls = 0
  const bad = 'r:not-a-session-token'
  const single = await call(0, bad)
  t.equal(single.status, 400, single.text)
  lookups.calls = 0
  const refused = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n, bad)))
  t.same(refused.map((answer) => answer.text), Array(20).fill(single.text), 'an unknown token is refused alike, with Parse\'s code and message')
  sharedOnFastPaths(t, lookups.calls, 1, 'for one lookup')
  t.equal((await call(99)).status, 200, 'the real session still answers afterwards')
})

t.test('concurrent role loads of one user share one load when Parse\'s role cache misses; each Auth keeps its own list', async (t) => {
  const kit = await startKit(t)
  const user = await kit.signUp('role-user')
  await ensureRole('Reviewer')
  await addUsersToRole('Reviewer', [user.id])
  const config = parseConfig(APP_ID)
  const member = Parse.User.fromJSON({ className: '_User', objectId: user.id }) as Parse.User
  const auth = () => new AuthModule.Auth({ config, isMaster: false, user: member }) as unknown as { getUserRoles (): Promise<string[]> }
  t.same(await auth().getUserRoles(), ['role:Reviewer'], 'the user\'s roles')

  await cache().role.del(user.id)
  const queries = counting(AuthModule.Auth.prototype, 'getRolesForUser')
  t.teardown(queries.restore)
  const lists = await Promise.all(Array.from({ length: 20 }, () => auth().getUserRoles()))
  sharedOnFastPaths(t, queries.calls, 1, 'one load served 20 Auths that missed the cache together')
  t.same(lists, Array(20).fill(['role:Reviewer']), 'each Auth has the roles')
  t.equal(new Set(lists).size, 20, 'each Auth has a list of its own')
  t.equal(roleLoadsRunning(), 0, 'nothing is left running')

  // A role change clears Parse's role cache: the next load reads it afresh.
  await ensureRole('Editor')
  await addUsersToRole('Editor', [user.id])
  queries.calls = 0
  const after = await Promise.all(Array.from({ length: 5 }, () => auth().getUserRoles()))
  t.same(after.map((roles) => [...roles].sort()), Array(5).fill(['role:Editor', 'role:Reviewer']), 'a new role is seen by the next loads')
  if (FAST_PATHS) t.ok(queries.calls <= 1, 'which again share one load')
  void kit
})

/** A gate a test opens by hand. */
function gate (): { opened: Promise<void>, open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

const within = <T>(promise: Promise<T>, ms: number) => Promise.race([
  promise.then((value) => ({ value }), (error: Parse.Error) => ({ code: error.code })),
  new Promise((resolve) => setTimeout(() => resolve('still waiting'), ms))
])

t.test('the limits of sharing: a revocation, a stuck load and a failed one', async (t) => {
  const kit = await startKit(t)
  const config = parseConfig(APP_ID)
  const user = await kit.signUp('limits-user')
  await ensureRole('Auditor')
  await addUsersToRole('Auditor', [user.id])
  const member = Parse.User.fromJSON({ className: '_User', objectId: user.id }) as Parse.User
  const auth = () => new AuthModule.Auth({ config, isMaster: false, user: member }) as unknown as { getUserRoles (): Promise<string[]> }
  const prototype = AuthModule.Auth.prototype as unknown as { getRolesForUser (): Promise<unknown[]> }
  const getRolesForUser = prototype.getRolesForUser
  t.teardown(() => { prototype.getRolesForUser = getRolesForUser })

  t.test('a role load that starts after a role change does not join one that started before it', async (t) => {
    await cache().role.del(user.id)
    const read = gate()
    const release = gate()
    let first = true
    prototype.getRolesForUser = async function (this: unknown) {
      const roles = await getRolesForUser.call(this)
      if (first) { first = false; read.open(); await release.opened }
      return roles
    }
    const older = auth().getUserRoles()
    await read.opened // it has read the membership
    await removeUsersFromRole('Auditor', [user.id]) // Parse drops its role cache, then writes
    const newer = auth().getUserRoles()
    release.open()
    t.same(await older, ['role:Auditor'], 'the load that started before answers what it read, as Parse\'s would')
    t.same(await newer, [], 'the load that started after the change reads afresh')
    prototype.getRolesForUser = getRolesForUser
    await addUsersToRole('Auditor', [user.id])
  })

  t.test('a session lookup that starts after the session is destroyed is refused', async (t) => {
    const other = await kit.signUp('limits-session')
    await cache().user.del(other.token)
    const adapter = config.database.adapter as unknown as { find (className: string, ...rest: unknown[]): Promise<unknown> }
    const find = adapter.find
    t.teardown(() => { adapter.find = find })
    const read = gate()
    const release = gate()
    let first = true
    adapter.find = async function (this: unknown, className: string, ...rest: unknown[]) {
      const rows = await find.call(this, className, ...rest)
      if (first && className === '_Session') { first = false; read.open(); await release.opened }
      return rows
    }
    const older = lookUpCaller({ sessionToken: other.token }, APP_ID)
    await read.opened
    adapter.find = find
    const session = await new Parse.Query(Parse.Session).equalTo('sessionToken', other.token).first({ useMasterKey: true })
    await session!.destroy({ useMasterKey: true })
    const newer = lookUpCaller({ sessionToken: other.token }, APP_ID).then(() => 'admitted', (error: Parse.Error) => error.code)
    release.open()
    t.equal((await older).userId, other.id, 'the lookup that started before answers what it read, as Parse\'s would')
    t.equal(await newer, Parse.Error.INVALID_SESSION_TOKEN, 'the lookup that started after the destroy is refused, as Parse\'s own would be')
  })

  t.test('a stuck load holds later ones for at most a second; a failed one is not shared', async (t) => {
    await cache().role.del(user.id)
    let calls = 0
    prototype.getRolesForUser = function (this: unknown) {
      calls++
      if (calls === 1) return new Promise(() => {}) // a query that never answers
      if (calls === 2) return Promise.reject(new Parse.Error(Parse.Error.INTERNAL_SERVER_ERROR, 'a passing fault'))
      return getRolesForUser.call(this)
    }
    void auth().getUserRoles().catch(() => {})
    const started = Date.now()
    t.same(await within(auth().getUserRoles(), scaled(5000)), { code: Parse.Error.INTERNAL_SERVER_ERROR }, 'after the wait, the next load runs (and meets the fault)')
    t.ok(Date.now() - started < 3000, `it waited ${Date.now() - started} ms for the stuck load, not for ever`)
    t.same(await within(auth().getUserRoles(), scaled(5000)), { value: ['role:Auditor'] }, 'and the one after it reads the roles')
    prototype.getRolesForUser = getRolesForUser
  })
})

t.test('SharedLoads: a joiner of a failed load loads for itself, unless the failure is the answer', async (t) => {
  let loads = 0
  const failsFirst = () => ++loads === 1 ? Promise.reject(new Error('a passing fault')) : Promise.resolve(`own load ${loads}`)
  const shared = new SharedLoads<string>()
  const [leader, joiner] = await Promise.allSettled([shared.run('k', failsFirst, (value) => `joined ${value}`), shared.run('k', failsFirst, (value) => `joined ${value}`)])
  t.match(leader, { status: 'rejected', reason: { message: 'a passing fault' } }, 'the failed load\'s own caller gets its failure')
  t.same(joiner, { status: 'fulfilled', value: 'own load 2' }, 'its joiner loaded for itself')
  loads = 0
  const refusing = () => { loads++; return Promise.reject(new Parse.Error(Parse.Error.INVALID_SESSION_TOKEN, 'Invalid session token')) }
  const answers = new SharedLoads<string>((error) => (error as Parse.Error).code === Parse.Error.INVALID_SESSION_TOKEN)
  const refused = await Promise.allSettled([1, 2, 3].map(() => answers.run('k', refusing, (value) => value)))
  t.same(refused.map((outcome) => outcome.status), ['rejected', 'rejected', 'rejected'], 'a refusal that is the answer reaches every joiner')
  t.equal(loads, 1, 'for one load')
  t.equal(answers.size + shared.size, 0, 'nothing is left running')
})

t.test('SharedLoads: a request joins once at most, so one stuck load costs a joiner a second and no more', async (t) => {
  const shared = new SharedLoads<string>()
  let loads = 0
  // The first load never answers; every later one answers after 1.5 s, later than a joiner waits.
  const load = () => ++loads === 1 ? new Promise<string>(() => {}) : new Promise<string>((resolve) => setTimeout(() => resolve('loaded'), 1500))
  void shared.run('k', load, (value) => value)
  const waits: number[] = []
  await Promise.all(Array.from({ length: 8 }, async (_, index) => {
    await new Promise((resolve) => setTimeout(resolve, 150 + index * 250))
    const started = Date.now()
    t.equal(await shared.run('k', load, (value) => value), 'loaded')
    waits.push(Date.now() - started)
  }))
  t.ok(Math.max(...waits) < JOIN_MS + 1500 + 400, `no request waited longer than a second and its own load (longest ${Math.max(...waits)} ms)`)
})

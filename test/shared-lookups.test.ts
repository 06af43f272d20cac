// When Parse's cache entries for a session and its user's roles expire (5 s by
// default), every request of that session then in flight misses at once. The
// session lookup (access/session.ts) and the role load (parse/shared-role-loads.ts)
// are then made once and shared; each request still gets a user object and a
// role list of its own, and a bad token is answered alike to all, for one query.
import t from 'tap'
import Parse from 'parse/node'
import { addUsersToRole, CloudFunction, ensureRole, Route, type CloudRequest } from '../lib/index.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { AuthModule } from '../lib/parse/internals.js'
import { roleLoadsRunning } from '../lib/parse/shared-role-loads.js'
import { APP_ID, startKit } from './helpers/kit.js'

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
  t.equal(lookups.calls, 1, 'one session lookup served the 20 requests that missed the cache together')
  t.same(answers.map((answer) => answer.json), answers.map((_, n) => ({ id: user.id, before: null, after: n + 1 })), 'each request had a user of its own (no request saw another\'s mark)')

  lookups.calls = 0
  const bad = 'r:not-a-session-token'
  const single = await call(0, bad)
  t.equal(single.status, 400, single.text)
  lookups.calls = 0
  const refused = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n, bad)))
  t.same(refused.map((answer) => answer.text), Array(20).fill(single.text), 'an unknown token is refused alike, with Parse\'s code and message')
  t.equal(lookups.calls, 1, 'for one lookup')
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
  t.equal(queries.calls, 1, 'one load served 20 Auths that missed the cache together')
  t.same(lists, Array(20).fill(['role:Reviewer']), 'each Auth has the roles')
  t.equal(new Set(lists).size, 20, 'each Auth has a list of its own')
  t.equal(roleLoadsRunning(), 0, 'nothing is left running')

  // A role change clears Parse's role cache: the next load reads it afresh.
  await ensureRole('Editor')
  await addUsersToRole('Editor', [user.id])
  queries.calls = 0
  const after = await Promise.all(Array.from({ length: 5 }, () => auth().getUserRoles()))
  t.same(after.map((roles) => [...roles].sort()), Array(5).fill(['role:Editor', 'role:Reviewer']), 'a new role is seen by the next loads')
  t.ok(queries.calls <= 1, 'which again share one load')
  void kit
})

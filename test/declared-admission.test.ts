// How a declared endpoint admits its caller: a caller whose headers name the
// application is judged before the body is read (one onRequest hook), a caller
// whose credentials ride in a text/plain body (the JavaScript SDK) once the
// body is parsed, and a session Parse's cache holds is read with no promise.
// Each test fails if one of those paths skipped a check: Parse's header-over-
// body rule, the app id, a session's expiry or logout, roles, a schema's order.
import t from 'tap'
import Parse from 'parse/node'
import { CloudFunction, Route, addUsersToRole, configureRoleCache, type CloudRequest } from '../lib/index.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { APP_ID, MASTER_KEY, appHeaders, startKit } from './helpers/kit.js'

@Route('admission')
class AdmissionFunctions {
  @CloudFunction({ methods: ['POST'], requireRoles: ['Clerk'], roleCacheMs: 60_000 })
  static clerksOnly (request: CloudRequest) { return { user: request.user?.getUsername() ?? null, params: request.params } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['Clerk'], roleCacheMs: 60_000, validation: { fields: { amount: { type: Number, required: true } } } })
  static clerksWithSchema (request: CloudRequest) { return { params: request.params } }

  @CloudFunction({ methods: ['POST'], requireMaster: true })
  static masterOnly (request: CloudRequest) { return { master: request.master } }

  @CloudFunction({ methods: ['POST'] })
  static open (request: CloudRequest) { return { params: request.params, installationId: request.installationId ?? null } }
}

t.test('declared endpoints admit callers by Parse\'s rules on every path', async (t) => {
  void AdmissionFunctions
  const kit = await startKit(t, { allowAuthRoutes: true })
  configureRoleCache({ ttlMs: 60_000 })
  t.teardown(() => configureRoleCache(false))
  const clerk = await kit.signUp('clerk')
  const visitor = await kit.signUp('visitor')
  await addUsersToRole('Clerk', [clerk.id])
  const session = (token: string) => ({ ...appHeaders, 'x-parse-session-token': token })
  const plain = (url: string, body: Record<string, unknown>) => kit.request('POST', url, { body, contentType: 'text/plain' })

  t.test('headers naming the application: the body\'s session token and master key do not count (Parse\'s rule)', async (t) => {
    const withBodyToken = await kit.request('POST', '/parse/admission/clerksOnly', { headers: appHeaders, body: { _SessionToken: clerk.token } })
    t.equal(withBodyToken.json.code, Parse.Error.OBJECT_NOT_FOUND, `no user from the body: ${withBodyToken.text}`)
    t.match(withBodyToken.json.error, /Authentication required/)
    const withBodyMaster = await kit.request('POST', '/parse/admission/masterOnly', { headers: appHeaders, body: { _MasterKey: MASTER_KEY } })
    t.equal(withBodyMaster.status, 403, withBodyMaster.text)
    const ok = await kit.request('POST', '/parse/admission/clerksOnly', { headers: session(clerk.token), body: { _SessionToken: visitor.token, note: 'x' } })
    t.equal(ok.status, 200, ok.text)
    t.same(ok.json, { user: 'clerk', params: { note: 'x' } }, 'the header session is the caller, and the SDK key left params')
  })

  t.test('Basic auth names the application too; a wrong X-Parse-Application-Id beside it is still refused', async (t) => {
    const basic = (appId: string, key: string) => `Basic ${Buffer.from(`${appId}:${key}`).toString('base64')}`
    const master = await kit.request('POST', '/parse/admission/masterOnly', { headers: { authorization: basic(APP_ID, MASTER_KEY) }, body: {} })
    t.same(master.json, { master: true }, master.text)
    const mixed = await kit.request('POST', '/parse/admission/masterOnly', {
      headers: { authorization: basic(APP_ID, MASTER_KEY), 'x-parse-application-id': 'another-app' }, body: {}
    })
    t.equal(mixed.status, 403)
    t.same(mixed.json, { error: 'unauthorized' })
    const wrongBasic = await kit.request('POST', '/parse/admission/open', { headers: { authorization: basic('another-app', MASTER_KEY) }, body: {} })
    t.equal(wrongBasic.status, 403)
  })

  t.test('credentials in a text/plain body: app id, session and roles are all checked, on routes with and without a schema', async (t) => {
    const passes = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: clerk.token, _ClientVersion: 'js8', note: 'y' })
    t.equal(passes.status, 200, passes.text)
    t.same(passes.json, { user: 'clerk', params: { note: 'y' } })
    const wrongApp = await plain('/parse/admission/clerksOnly', { _ApplicationId: 'another-app', _SessionToken: clerk.token })
    t.equal(wrongApp.status, 403)
    t.same(wrongApp.json, { error: 'unauthorized' })
    const noRole = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: visitor.token })
    t.equal(noRole.json.code, Parse.Error.OPERATION_FORBIDDEN, noRole.text)
    const badToken = await plain('/parse/admission/clerksOnly', { _ApplicationId: APP_ID, _SessionToken: 'r:not-a-session' })
    t.equal(badToken.json.code, Parse.Error.INVALID_SESSION_TOKEN, badToken.text)
    const noAppId = await plain('/parse/admission/open', { note: 'z' })
    t.equal(noAppId.status, 403, 'neither headers nor body name the application')

    // The schema is checked only after the caller: a caller without the role learns nothing about the input.
    const refusedFirst = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: visitor.token, amount: 'not a number' })
    t.equal(refusedFirst.json.code, Parse.Error.OPERATION_FORBIDDEN, refusedFirst.text)
    const validated = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: clerk.token, amount: 'not a number' })
    t.equal(validated.status, 400, validated.text)
    t.not(validated.json.code, Parse.Error.OPERATION_FORBIDDEN)
    const accepted = await plain('/parse/admission/clerksWithSchema', { _ApplicationId: APP_ID, _SessionToken: clerk.token, _InstallationId: 'i-1', amount: 3 })
    t.same(accepted.json, { params: { amount: 3 } }, accepted.text)
    const headerRefusedFirst = await kit.request('POST', '/parse/admission/clerksWithSchema', { headers: session(visitor.token), body: { amount: 'not a number' } })
    t.equal(headerRefusedFirst.json.code, Parse.Error.OPERATION_FORBIDDEN, headerRefusedFirst.text)
    const installation = await plain('/parse/admission/open', { _ApplicationId: APP_ID, _InstallationId: 'inst-9', a: 1 })
    t.same(installation.json, { params: { a: 1 }, installationId: 'inst-9' })
  })

  t.test('a cached session: a logout, and an expired session, are refused on the path that reads Parse\'s cache', async (t) => {
    const leaving = await kit.signUp('leaving')
    const expiring = await kit.signUp('expiring')
    await addUsersToRole('Clerk', [leaving.id, expiring.id])
    const call = (token: string) => kit.request('POST', '/parse/admission/clerksOnly', { headers: session(token), body: {} })
    for (const user of [leaving, expiring]) {
      t.equal((await call(user.token)).status, 200)
      t.equal((await call(user.token)).status, 200, 'answered from Parse\'s session cache and the role cache')
      const entry = await parseConfig(APP_ID).cacheController!.user.get(user.token)
      t.ok(entry, 'Parse holds the session in its cache')
    }

    const logout = await kit.request('POST', '/parse/logout', { headers: session(leaving.token), body: {} })
    t.equal(logout.status, 200, logout.text)
    const afterLogout = await call(leaving.token)
    t.equal(afterLogout.json.code, Parse.Error.INVALID_SESSION_TOKEN, afterLogout.text)

    // The session expires (in the database, and in the entry Parse cached): the cached entry must not answer.
    const past = new Date(Date.now() - 60_000)
    // Written through Parse's database controller: the SDK and REST treat expiresAt as read-only.
    const database = parseConfig(APP_ID).database as unknown as { update (className: string, query: object, update: object): Promise<unknown> }
    await database.update('_Session', { sessionToken: expiring.token }, { expiresAt: { __type: 'Date', iso: past.toISOString() } })
    const entry = await parseConfig(APP_ID).cacheController!.user.get(expiring.token) as Record<string, unknown> | null
    t.ok(entry, 'the entry is still cached')
    entry!.expiresAt = past.toISOString()
    const afterExpiry = await call(expiring.token)
    t.equal(afterExpiry.json.code, Parse.Error.INVALID_SESSION_TOKEN, afterExpiry.text)
  })
})

t.test('an application\'s preHandler hooks run only for admitted callers, whatever carries the credentials', async (t) => {
  void AdmissionFunctions
  const reached: string[] = []
  const kit = await startKit(t, {}, {}, (app) => {
    app.addHook('preHandler', (request, _reply, done) => { reached.push(request.url); done() })
  })
  // Schema-less and schema routes, credentials in headers and in a text/plain body (the JavaScript SDK).
  const refused = [
    await kit.request('POST', '/parse/admission/masterOnly', { headers: appHeaders, body: {} }),
    await kit.request('POST', '/parse/admission/masterOnly', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' }),
    await kit.request('POST', '/parse/admission/clerksOnly', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' }),
    await kit.request('POST', '/parse/admission/clerksWithSchema', { body: { _ApplicationId: APP_ID, amount: 1 }, contentType: 'text/plain' })
  ]
  for (const answer of refused) t.ok(answer.status >= 400 && answer.status < 500, `refused: ${answer.status} ${answer.text}`)
  t.same(reached, [], 'no preHandler hook ran for a refused caller')
  const admitted = await kit.request('POST', '/parse/admission/open', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' })
  t.equal(admitted.status, 200, admitted.text)
  t.same(reached, ['/parse/admission/open'], 'and it runs for an admitted one')
})

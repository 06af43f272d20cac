// Declared-route admission under attack, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - attack-admission: this file's own tests (first part, its comment kept)
// - test/restriction-defects.test.ts (merged here): The restriction's details, each tried over real HTTP against the real server: …
import t, { type Test } from 'tap'
import net, { connect } from 'node:net'
import { mock } from 'node:test'
import Parse from 'parse/node'
import { CloudFunction, Route, addUsersToRole, removeUsersFromRole, type CloudRequest, BaseModel, ParseClass, ParseField, kitServerOptions, KIT_SERVER_DEFAULTS } from '../lib/index.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'
import { parseInternals } from '../lib/parse/internals.js'
import { parseConfig } from '../lib/access/parse-config.js'
import { Writable } from 'node:stream'
import { PARSE_DEFAULT_MASTER_KEY_IPS, addressAllowed, masterKeyVerdict, readCredentials } from '../lib/access/credentials.js'
import { redactUrl } from '../lib/host/server-options.js'
import { mapRequestTarget } from '../lib/access/request-target.js'
import { closestPath } from '../lib/suggest.js'
import { rawRequest } from './helpers/raw-http.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { AuthModule } = parseInternals()

// ── attack-admission ──
// Attacks on the declared routes' admission (headers judged in onRequest, body
// credentials in preValidation) and on the one wildcard route answering refused
// verbs: every probe a client could send to reach a guarded handler without
// the right credentials, or to make the refusal constraint fail. Each answer is
// pinned: a guarded handler never runs for these callers, nothing answers 500.
/**
 * Moves Date (the role cache's clock) `ms` ahead for the rest of the subtest,
 * instead of waiting: only Date is mocked, so timers, sockets and the database
 * run as before.
 */
function passTime (t: Test, ms: number): void {
  mock.timers.enable({ apis: ['Date'], now: Date.now() })
  t.teardown(() => mock.timers.reset())
  mock.timers.tick(ms)
}

const ran: string[] = []

@Route('attack')
class AttackFunctions {
  @CloudFunction({ methods: ['POST'], requireMaster: true })
  static masterOnly () { ran.push('masterOnly'); return { ran: 'masterOnly' } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['Guard'], roleCacheMs: 300 })
  static guardsOnly () { ran.push('guardsOnly'); return { ran: 'guardsOnly' } }

  @CloudFunction({ methods: ['GET', 'POST'], requiresAuth: true })
  static signedIn (request: CloudRequest) { ran.push('signedIn'); return { user: request.user?.getUsername() ?? null } }

  @CloudFunction({ methods: ['PUT'], requireMaster: true })
  static putOnly () { ran.push('putOnly'); return { ran: 'putOnly' } }
}

// Functions whose rules differ by one option each: the judging and the deferred validators are code shared by
// every function, so each must still decide by its own rules and validate its own schema.
@Route('ruled')
class RuledFunctions {
  @CloudFunction({ methods: ['POST'], requireRoles: ['Red', 'Blue'], customErrorMessage: 'red or blue only' })
  static redOrBlue () { return { ran: 'redOrBlue' } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['Red', 'Blue'], requireAllRoles: true, customErrorMessage: 'red and blue only' })
  static redAndBlue () { return { ran: 'redAndBlue' } }

  @CloudFunction({ methods: ['POST'], requireRoles: ['Blue'] })
  static blueOnly () { return { ran: 'blueOnly' } }

  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { amount: { type: Number, required: true } } } })
  static pay (request: CloudRequest) { return { amount: (request.params as { amount: unknown }).amount } }

  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { note: { type: String, required: true } } } })
  static annotate (request: CloudRequest) { return { note: (request.params as { note: unknown }).note } }
}

/** Exact bytes on the socket (duplicated headers, odd request targets); answers the status and the body. */
function raw (origin: string, request: string): Promise<{ status: number, body: string }> {
  const { hostname, port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let data = ''
    socket.on('data', (chunk) => { data += chunk.toString('latin1') })
    socket.on('error', reject)
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)
      resolve({ status, body: data.split('\r\n\r\n').slice(1).join('\r\n\r\n') })
    })
    socket.write(request.replace(/\n/g, '\r\n'))
  })
}

const basic = (appId: string, key: string) => `Basic ${Buffer.from(`${appId}:${key}`).toString('base64')}`

t.test('declared routes refuse every bypass a client can try', async (t) => {
  void AttackFunctions
  const kit = await startKit(t, { allowAuthRoutes: true })
  const guard = await kit.signUp('guard')
  const visitor = await kit.signUp('visitor')
  await addUsersToRole('Guard', [guard.id])
  const post = (url: string, init: { headers?: Record<string, string>, body?: unknown, contentType?: string } = {}) => kit.request('POST', url, init)
  const plain = (url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => post(url, { headers, body, contentType: 'text/plain' })
  const noRun = (t: Test, name: string) => { t.notOk(ran.includes(name), `${name} never ran`); ran.length = 0 }

  t.test('requireMaster: header app id + body master key, Basic auth of another app + body, empty or spaced app ids', async (t) => {
    const url = '/parse/attack/masterOnly'
    const cases: Array<[string, Record<string, string>, Record<string, unknown>, string?]> = [
      ['header app id, body master key', appHeaders, { _MasterKey: MASTER_KEY }],
      ['header app id, text/plain body master key', appHeaders, { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }, 'text/plain'],
      ['Basic auth of another app, body app id + master key', { authorization: basic('other-app', 'x') }, { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }, 'text/plain'],
      ['Basic auth app id with a wrong key, body master key', { authorization: basic(APP_ID, 'wrong') }, { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }, 'text/plain'],
      ['empty app id header, body app id + master key', { 'x-parse-application-id': '' }, { _ApplicationId: APP_ID, _MasterKey: 'wrong' }, 'text/plain'],
      ['app id header with spaces', { 'x-parse-application-id': ` ${APP_ID} `, 'x-parse-master-key': 'wrong' }, {}],
      ['body master key only, no app id anywhere', {}, { _MasterKey: MASTER_KEY }, 'text/plain'],
      ['body app id, wrong master key', {}, { _ApplicationId: APP_ID, _MasterKey: 'wrong' }, 'text/plain'],
      ['body app id, master key as a number', {}, { _ApplicationId: APP_ID, _MasterKey: 1 }, 'text/plain'],
      ['body app id, no key', {}, { _ApplicationId: APP_ID }, 'text/plain'],
      ['body app id as an array', {}, { _ApplicationId: [APP_ID], _MasterKey: MASTER_KEY }, 'text/plain'],
      ['application/json; charset, body app id, wrong key', {}, { _ApplicationId: APP_ID, _MasterKey: 'nope' }, 'application/json; charset=utf-8'],
      ['X-HTTP-Method-Override on the header caller', { ...appHeaders, 'x-http-method-override': 'GET' }, {}]
    ]
    for (const [name, headers, body, contentType] of cases) {
      const answer = await post(url, { headers, body, contentType })
      t.ok([400, 403].includes(answer.status), `${name}: ${answer.status} ${answer.text}`)
      t.not(answer.json?.ran, 'masterOnly', name)
    }
    noRun(t, 'masterOnly')
  })

  t.test('requireMaster: duplicated app id headers and header casing on the wire', async (t) => {
    const body = '{}'
    const head = (extra: string) => `POST /parse/attack/masterOnly HTTP/1.1\nHost: x\nConnection: close\nContent-Type: application/json\nContent-Length: ${body.length}\n${extra}\n${body}`
    const dup = await raw(kit.origin, head(`X-Parse-Application-Id: ${APP_ID}\nx-parse-application-id: ${APP_ID}\nX-Parse-Master-Key: wrong\nX-PARSE-MASTER-KEY: ${MASTER_KEY}\n`))
    t.ok([400, 403].includes(dup.status), `duplicated headers: ${dup.status} ${dup.body}`)
    const cased = await raw(kit.origin, head(`X-PARSE-APPLICATION-ID: ${APP_ID}\nx-Parse-Master-KEY: ${MASTER_KEY}\n`))
    t.equal(cased.status, 200, `header names are case-insensitive: ${cased.body}`)
    ran.length = 0
  })

  t.test('requiresAuth / requireRoles: body tokens beside header app id, foreign and malformed tokens', async (t) => {
    const refused = async (name: string, url: string, init: { headers?: Record<string, string>, body?: unknown, contentType?: string }) => {
      const answer = await post(url, init)
      t.ok(answer.status >= 400 && answer.status < 500, `${name}: ${answer.status} ${answer.text}`)
    }
    await refused('header app id, body session', '/parse/attack/signedIn', { headers: appHeaders, body: { _SessionToken: guard.token } })
    await refused('header app id, body session (guards)', '/parse/attack/guardsOnly', { headers: appHeaders, body: { _SessionToken: guard.token } })
    await refused('visitor header session, guard body session', '/parse/attack/guardsOnly', { headers: { ...appHeaders, 'x-parse-session-token': visitor.token }, body: { _SessionToken: guard.token } })
    await refused('empty session header', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-session-token': '' }, body: {} })
    await refused('session token of no session', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-session-token': 'r:00000000' }, body: {} })
    await refused('session token as an object', '/parse/attack/signedIn', { body: { _ApplicationId: APP_ID, _SessionToken: { $ne: null } }, contentType: 'text/plain' })
    await refused('another app id in body with a real token', '/parse/attack/signedIn', { body: { _ApplicationId: 'other-app', _SessionToken: guard.token }, contentType: 'text/plain' })
    noRun(t, 'signedIn')
    noRun(t, 'guardsOnly')
    const ok = await plain('/parse/attack/signedIn', { _ApplicationId: APP_ID, _SessionToken: guard.token })
    t.same(ok.json, { user: 'guard' }, 'the SDK body caller is admitted')
    ran.length = 0
  })

  t.test('functions with different rules each judge by their own, on both paths, whatever was asked first', async (t) => {
    void RuledFunctions
    const red = await kit.signUp('ruled-red')
    await addUsersToRole('Red', [red.id])
    const headers = { ...appHeaders, 'x-parse-session-token': red.token }
    const call = async (name: string, twin = false) => {
      const answer = await post(twin ? `/parse/functions/${name}` : `/parse/ruled/${name}`, { headers, body: {} })
      return { status: answer.status, code: answer.json?.code, error: answer.json?.error, ran: (twin ? answer.json?.result : answer.json)?.ran }
    }
    const redAndBlueRefused = { status: 400, code: Parse.Error.OPERATION_FORBIDDEN, error: 'red and blue only', ran: undefined }
    // First requests at once (one role load for the user), the strictest function first: no function's rules decide for another.
    const first = await Promise.all([call('redAndBlue'), call('blueOnly'), call('redOrBlue', true)])
    t.match(first, [redAndBlueRefused, { code: Parse.Error.OPERATION_FORBIDDEN, error: /one of the roles Blue$/ }, { status: 200, ran: 'redOrBlue' }],
      'all of Red and Blue refused with its own message, Blue alone refused with the default, any of them admitted')
    // Again, now from the role cache, in the other order and through the twins.
    t.match(await call('redOrBlue'), { status: 200, ran: 'redOrBlue' })
    t.match(await call('redAndBlue', true), redAndBlueRefused)
    t.match(await call('blueOnly', true), { code: Parse.Error.OPERATION_FORBIDDEN, error: /one of the roles Blue$/ })
  })

  t.test('concurrent first requests to two functions validate each body by its own schema, on both paths', async (t) => {
    const payer = await kit.signUp('ruled-payer')
    const headers = { ...appHeaders, 'x-parse-session-token': payer.token }
    const send = (url: string, body: Record<string, unknown>) => post(url, { headers, body })
    const [pay, annotate, payTwin, annotateTwin, payWrong, annotateWrong] = await Promise.all([
      send('/parse/ruled/pay', { amount: 5 }),
      send('/parse/ruled/annotate', { note: 'hi' }),
      send('/parse/functions/pay', { amount: 6 }),
      send('/parse/functions/annotate', { note: 'ho' }),
      send('/parse/ruled/pay', { note: 'hi' }),
      send('/parse/functions/annotate', { amount: 5 })
    ])
    t.same([pay.status, pay.json], [200, { amount: 5 }], pay.text)
    t.same([annotate.status, annotate.json], [200, { note: 'hi' }], annotate.text)
    t.same([payTwin.status, payTwin.json], [200, { result: { amount: 6 } }], payTwin.text)
    t.same([annotateTwin.status, annotateTwin.json], [200, { result: { note: 'ho' } }], annotateTwin.text)
    t.equal(payWrong.status, 400, payWrong.text)
    t.match(payWrong.json?.error, /amount/, 'pay\'s refusal names its own missing field')
    t.equal(annotateWrong.status, 400, annotateWrong.text)
    t.match(annotateWrong.json?.error, /note/, 'annotate\'s refusal names its own missing field')
    // After the first compile, a wrong type is refused by the same function's schema (the errors are the call's own).
    const typed = await send('/parse/ruled/pay', { amount: 'five' })
    t.equal(typed.status, 400, typed.text)
    t.match(typed.json?.error, /amount/)
    t.notMatch(typed.json?.error, /note/)
  })

  t.test('a logged-out session is not admitted through the synchronous cache', async (t) => {
    const walker = await kit.signUp('walker')
    const headers = { ...appHeaders, 'x-parse-session-token': walker.token }
    const before = await post('/parse/attack/signedIn', { headers, body: {} })
    t.same(before.json, { user: 'walker' }, 'cached now')
    const again = await post('/parse/attack/signedIn', { headers, body: {} })
    t.equal(again.status, 200, 'read from the cache')
    const logout = await post('/parse/logout', { headers, body: {} })
    t.equal(logout.status, 200, logout.text)
    ran.length = 0
    const viaHeader = await post('/parse/attack/signedIn', { headers, body: {} })
    t.equal(viaHeader.json?.code, Parse.Error.INVALID_SESSION_TOKEN, `header: ${viaHeader.text}`)
    const viaBody = await plain('/parse/attack/signedIn', { _ApplicationId: APP_ID, _SessionToken: walker.token })
    t.equal(viaBody.json?.code, Parse.Error.INVALID_SESSION_TOKEN, `body: ${viaBody.text}`)
    noRun(t, 'signedIn')
  })

  t.test('a session destroyed with the master key is not admitted from the cache', async (t) => {
    const gone = await kit.signUp('gone')
    const headers = { ...appHeaders, 'x-parse-session-token': gone.token }
    t.equal((await post('/parse/attack/signedIn', { headers, body: {} })).status, 200)
    const sessions = await kit.request('GET', `/parse/classes/_Session?where=${encodeURIComponent(JSON.stringify({ sessionToken: gone.token }))}`, { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY } })
    const id = sessions.json.results[0].objectId
    const destroyed = await kit.request('DELETE', `/parse/classes/_Session/${id}`, { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY } })
    t.equal(destroyed.status, 200, destroyed.text)
    ran.length = 0
    const after = await post('/parse/attack/signedIn', { headers, body: {} })
    t.equal(after.json?.code, Parse.Error.INVALID_SESSION_TOKEN, after.text)
    noRun(t, 'signedIn')
  })

  t.test('a session expired after it was cached is judged as Parse judges it', async (t) => {
    const late = await kit.signUp('late')
    const headers = { ...appHeaders, 'x-parse-session-token': late.token }
    const master = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }
    t.equal((await post('/parse/attack/signedIn', { headers, body: {} })).status, 200, 'cached now')
    const sessions = await kit.request('GET', `/parse/classes/_Session?where=${encodeURIComponent(JSON.stringify({ sessionToken: late.token }))}`, { headers: master })
    const expired = await kit.request('PUT', `/parse/classes/_Session/${sessions.json.results[0].objectId}`, {
      headers: master, body: { expiresAt: { __type: 'Date', iso: new Date(Date.now() - 60_000).toISOString() } }
    })
    t.equal(expired.status, 200, expired.text)
    ran.length = 0
    const parseSays = await kit.request('GET', '/parse/users/me', { headers })
    const kitSays = await post('/parse/attack/signedIn', { headers, body: {} })
    const bodySays = await plain('/parse/attack/signedIn', { _ApplicationId: APP_ID, _SessionToken: late.token })
    t.equal(kitSays.status === 200, parseSays.status === 200, `Parse: ${parseSays.status} ${parseSays.text}; kit: ${kitSays.status} ${kitSays.text}`)
    t.equal(bodySays.status === 200, parseSays.status === 200, `body caller: ${bodySays.status} ${bodySays.text}`)
    ran.length = 0
  })

  t.test('a removed role stops admitting once the function\'s roleCacheMs has passed', async (t) => {
    const headers = { ...appHeaders, 'x-parse-session-token': guard.token }
    t.equal((await post('/parse/attack/guardsOnly', { headers, body: {} })).status, 200)
    await removeUsersFromRole('Guard', [guard.id])
    passTime(t, 301) // past the function's roleCacheMs (300)
    ran.length = 0
    const after = await post('/parse/attack/guardsOnly', { headers, body: {} })
    t.equal(after.json?.code, Parse.Error.OPERATION_FORBIDDEN, after.text)
    const viaBody = await plain('/parse/attack/guardsOnly', { _ApplicationId: APP_ID, _SessionToken: guard.token })
    t.equal(viaBody.json?.code, Parse.Error.OPERATION_FORBIDDEN, viaBody.text)
    noRun(t, 'guardsOnly')
  })

  t.test('a role relation edited over REST stops admitting once roleCacheMs has passed', async (t) => {
    const master = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }
    const keeper = await kit.signUp('keeper')
    await addUsersToRole('Guard', [keeper.id])
    const headers = { ...appHeaders, 'x-parse-session-token': keeper.token }
    t.equal((await post('/parse/attack/guardsOnly', { headers, body: {} })).status, 200, 'admitted, roles cached')
    const roles = await kit.request('GET', `/parse/roles?where=${encodeURIComponent(JSON.stringify({ name: 'Guard' }))}`, { headers: master })
    const edited = await kit.request('PUT', `/parse/roles/${roles.json.results[0].objectId}`, {
      headers: master, body: { users: { __op: 'RemoveRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: keeper.id }] } }
    })
    t.equal(edited.status, 200, edited.text)
    passTime(t, 301) // past the function's roleCacheMs (300)
    ran.length = 0
    const after = await post('/parse/attack/guardsOnly', { headers, body: {} })
    t.equal(after.json?.code, Parse.Error.OPERATION_FORBIDDEN, after.text)
    noRun(t, 'guardsOnly')
  })

  t.test('a deleted user\'s session is judged as Parse\'s own session auth judges it, and refused once Parse\'s cache lets go', async (t) => {
    const master = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }
    const doomed = await kit.signUp('doomed')
    const headers = { ...appHeaders, 'x-parse-session-token': doomed.token }
    t.equal((await post('/parse/attack/signedIn', { headers, body: {} })).status, 200, 'cached now')
    const deleted = await kit.request('DELETE', `/parse/users/${doomed.id}`, { headers: master })
    t.equal(deleted.status, 200, deleted.text)
    ran.length = 0
    // Parse's Auth (what every Parse route uses for a session) reads the same cache first: the kit agrees with it.
    const parseAuth = await AuthModule.getAuthForSessionToken({ config: parseConfig(APP_ID), sessionToken: doomed.token }).then((auth: any) => auth.user !== undefined, () => false)
    const kitSays = await post('/parse/attack/signedIn', { headers, body: {} })
    t.equal(kitSays.status === 200, parseAuth, `Parse's Auth admits: ${parseAuth}; kit: ${kitSays.status} ${kitSays.text}`)
    // Parse's cacheTTL (5 s by default) bounds it: then both refuse. This one waits for real:
    // Parse's cache (lru-cache) reads performance.now(), which mock.timers does not move.
    await new Promise((resolve) => setTimeout(resolve, 5_500))
    const later = await post('/parse/attack/signedIn', { headers, body: {} })
    t.equal(later.json?.code, Parse.Error.INVALID_SESSION_TOKEN, later.text)
    ran.length = 0
  })

  t.test('content types: urlencoded, multipart and none never admit a body master key', async (t) => {
    const bodies: Array<[string, string]> = [
      ['application/x-www-form-urlencoded', `_ApplicationId=${APP_ID}&_MasterKey=${MASTER_KEY}`],
      ['multipart/form-data; boundary=b', `--b\r\nContent-Disposition: form-data; name="_MasterKey"\r\n\r\n${MASTER_KEY}\r\n--b--\r\n`]
    ]
    for (const [type, body] of bodies) {
      const answer = await post('/parse/attack/masterOnly', { headers: { ...appHeaders, 'x-parse-master-key': 'wrong' }, body, contentType: type })
      t.ok(answer.status >= 400 && answer.status < 500, `${type}: ${answer.status} ${answer.text}`)
    }
    const untyped = await raw(kit.origin, `POST /parse/attack/masterOnly HTTP/1.1\nHost: x\nConnection: close\nContent-Length: 45\n\n{"_ApplicationId":"${APP_ID}","_MasterKey":"x"}`.slice(0))
    t.ok(untyped.status >= 400 && untyped.status < 500, `no content-type: ${untyped.status} ${untyped.body}`)
    noRun(t, 'masterOnly')
  })

  t.test('refused verbs: no spelling, override or verb reaches the handler; nothing answers 500', async (t) => {
    const master = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }
    const spellings = [
      '/parse/attack/putOnly', '/parse/attack/putOnly/', '/parse/Attack/putOnly', '/parse/attack/PUTONLY', '/parse/attack/put%4Fnly',
      '/parse//attack/putOnly', '/parse/attack//putOnly', '/parse/attack/putOnly;a=b', '/parse/attack/putOnly?x=1', '/parse/attack/putOnly?x=*',
      '/parse/attack/putOnly?x=:y', '/parse/attack/putOnly?x=:y(', '/parse/attack/putOnly?:a(b', '/parse/attack/putOnly?x=:y(^a)', '/parse/attack/putOnly?**',
      '/parse/attack/putOnly?x=:a-:b', '/parse/attack/putOnly?x=:y?', '/parse/attack/putOnly?x=::y', '/parse/attack/putOnly?x=:y(a)(b', '/parse/attack/putOnly?(',
      '/parse/functions/putOnly?:x(', '/parse/functions/putOnly?*', '/parse/attack/putOnly#:x(', '/parse/attack/putOnly%', '/parse/attack/putOnly%zz', '/parse/attack/%E0%A4%A', '/parse/attack/putOnly%00',
      '/parse/attack/putOnly/%2e%2e', '/parse/attack/x/../putOnly', `/parse/attack/putOnly?${'a'.repeat(8000)}`, `/parse/attack/${'p'.repeat(8000)}`,
      '/parse/functions/putOnly', '/parse/functions/putOnly/', '/parse/FUNCTIONS/putOnly', '/parse/functions/putOnly?_method=PUT', '/parse/functions/put%4Fnly',
      '/parse/functions//putOnly', '/parse/functions/putOnly;x', '/parse/functions/putOnly%'
    ]
    for (const url of spellings) {
      for (const method of ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE']) {
        // The /functions twin takes POST for every function (Parse.Cloud.run's verb).
        if (method === 'POST' && url.toLowerCase().startsWith('/parse/functions/')) continue
        const answer = await raw(kit.origin, `${method} ${url} HTTP/1.1\nHost: x\nConnection: close\nX-Parse-Application-Id: ${APP_ID}\nX-Parse-Master-Key: ${MASTER_KEY}\nContent-Type: application/json\nContent-Length: 2\n\n{}`)
        t.ok(answer.status >= 400 && answer.status < 500 && !answer.body.includes('putOnly"}'), `${method} ${url.slice(0, 60)}: ${answer.status} ${answer.body.slice(0, 120)}`)
      }
    }
    // Method overrides on the twin (a POST it takes) never make it a PUT.
    const override = await post('/parse/functions/putOnly', { headers: { ...master, 'x-http-method-override': 'PUT' }, body: {} })
    t.equal(override.status, 200, `the twin takes POST (by design); the override header changes nothing: ${override.text}`)
    const bodyOverride = await plain('/parse/attack/putOnly', { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY, _method: 'PUT' })
    t.equal(bodyOverride.status, 405, `_method on the entity path: ${bodyOverride.text}`)
    // Refused verb without the right app id: 403 before the 405 reveals the path.
    const stranger = await kit.request('DELETE', '/parse/attack/putOnly', { headers: { 'x-parse-application-id': 'other' } })
    t.equal(stranger.status, 403, stranger.text)
    const served = await kit.request('PUT', '/parse/attack/putOnly', { headers: master, body: {} })
    t.same(served.json, { ran: 'putOnly' }, 'the verb it takes still runs, with the master key')
    ran.length = 0
  })

  t.test('spellings the kit\'s router does not map (case, trailing slash) never reach a guarded function through Parse\'s mount', async (t) => {
    const twins = ['/parse/FUNCTIONS/', '/parse/Functions/', '/parse/functions/', '/parse/functions//']
    for (const prefix of twins) {
      for (const [name, suffix] of [['masterOnly', ''], ['masterOnly', '/'], ['guardsOnly', ''], ['guardsOnly', '/'], ['signedIn', ''], ['signedIn', '/'], ['putOnly', '/']]) {
        const url = `${prefix}${name}${suffix}`
        if (url === `/parse/functions/${name}`) continue
        const answer = await post(url, { headers: { ...appHeaders, 'x-parse-session-token': visitor.token }, body: {} })
        t.ok(answer.status >= 400 && answer.status < 500 && !answer.text.includes('"ran"') && !answer.text.includes('"user"'), `POST ${url}: ${answer.status} ${answer.text}`)
        const viaBody = await plain(url, { _ApplicationId: APP_ID, _SessionToken: visitor.token })
        t.ok(viaBody.status >= 400 && viaBody.status < 500 && !viaBody.text.includes('"ran"') && !viaBody.text.includes('"user"'), `POST ${url} (SDK body): ${viaBody.status} ${viaBody.text}`)
      }
    }
    t.same(ran, [], 'no guarded function ran')
    ran.length = 0
  })

  t.test('bodyless verbs without credentials learn nothing: 403 before any 405, never a 2xx or 500', async (t) => {
    for (const url of ['/parse/attack/putOnly', '/parse/attack/masterOnly', '/parse/functions/putOnly', '/parse/attack/putonly', '/parse/attack/putOnly/']) {
      for (const method of ['GET', 'HEAD', 'DELETE', 'PATCH', 'POST']) {
        for (const extra of ['', 'X-Parse-Application-Id: \n', 'X-Parse-Application-Id: other\n', `Authorization: ${basic('other', MASTER_KEY)}\nX-Parse-Application-Id: ${APP_ID}\n`]) {
          const answer = await raw(kit.origin, `${method} ${url} HTTP/1.1\nHost: x\nConnection: close\n${extra}\n`)
          t.ok(answer.status === 403 || (answer.status === 400 && method === 'POST'), `${method} ${url} [${extra.trim()}]: ${answer.status} ${answer.body.slice(0, 100)}`)
        }
      }
    }
    t.same(ran, [], 'nothing ran')
  })

  t.test('odd bodies: never a 500, never admitted without an application id', async (t) => {
    const bodies = ['null', '[]', '"s"', '123', 'not json', '{', `{"__proto__":{"_ApplicationId":"${APP_ID}","_MasterKey":"${MASTER_KEY}"}}`,
      `{"constructor":{"prototype":{"_ApplicationId":"${APP_ID}"}}}`, `[{"_ApplicationId":"${APP_ID}","_MasterKey":"${MASTER_KEY}"}]`, '['.repeat(5000) + ']'.repeat(5000)]
    for (const type of ['text/plain', 'application/json', 'application/json; charset=utf-8']) {
      for (const body of bodies) {
        const answer = await post('/parse/attack/masterOnly', { body, contentType: type })
        t.ok(answer.status >= 400 && answer.status < 500, `${type} ${body.slice(0, 40)}: ${answer.status} ${answer.text.slice(0, 120)}`)
      }
    }
    noRun(t, 'masterOnly')
  })

  t.test('HEAD on a GET function runs its checks: no session, no handler', async (t) => {
    ran.length = 0
    for (const headers of [appHeaders, {}, { ...appHeaders, 'x-parse-session-token': 'r:none' }, { 'x-parse-application-id': 'other' }]) {
      const answer = await kit.request('HEAD', '/parse/attack/signedIn', { headers })
      t.ok(answer.status >= 400 && answer.status < 500, `HEAD ${JSON.stringify(headers)}: ${answer.status}`)
    }
    const get = await kit.request('GET', '/parse/attack/signedIn', { headers: appHeaders })
    t.equal(get.json?.code, Parse.Error.OBJECT_NOT_FOUND, get.text)
    noRun(t, 'signedIn')
    const signed = await kit.request('HEAD', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-session-token': visitor.token } })
    t.equal(signed.status, 200, 'a signed-in HEAD is served')
    ran.length = 0
  })

  t.test('anonymous sign-ups cannot grow _User past schema.maxClientFields (100 by default); the master key can', async (t) => {
    const fieldCount = async () => Object.keys((await kit.request('GET', '/parse/schemas/_User', { headers: masterHeaders })).json.fields).length
    const extra = (prefix: string, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, 'x']))
    const before = await fieldCount()
    const grown = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'grower', password: 'pw-grower-1', ...extra('a', 100 - before) } })
    t.equal(grown.status, 201, `a sign-up may add fields up to the bound: ${grown.text.slice(0, 200)}`)
    t.equal(await fieldCount(), 100, 'the class is at the bound')
    const flood = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'flooder', password: 'pw-flooder-1', ...extra('f', 1700) } })
    t.match({ status: flood.status, ...flood.json }, { status: 400, code: Parse.Error.OPERATION_FORBIDDEN, error: /addField on class _User.*schema\.maxClientFields/ }, 'a sign-up past it is refused as Parse refuses an addField')
    const one = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'one-more', password: 'pw-one-more-1', oneMore: 'x' } })
    t.match({ status: one.status, ...one.json }, { status: 400, code: Parse.Error.OPERATION_FORBIDDEN }, 'so is one field more')
    t.equal(await fieldCount(), 100, 'and nothing was added')
    const plain = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'plain', password: 'pw-plain-1', a0: 'y' } })
    t.equal(plain.status, 201, 'a sign-up with known fields still works')
    const master = await kit.request('PUT', `/parse/users/${plain.json.objectId}`, { headers: masterHeaders, body: { byMaster: 'x' } })
    t.equal(master.status, 200, `the master key adds fields past it: ${master.text.slice(0, 200)}`)
  })

  t.test('absurd request targets leave the server answering', async (t) => {
    for (const target of ['*', 'http://x/parse/attack/putOnly', '/parse/attack/putOnly#frag', '/%', '/parse/%ff%fe', `/parse/${'%41'.repeat(5000)}`]) {
      const answer = await raw(kit.origin, `DELETE ${target} HTTP/1.1\nHost: x\nConnection: close\nX-Parse-Application-Id: ${APP_ID}\n\n`)
      t.ok(answer.status >= 400 && answer.status < 500, `${target.slice(0, 40)}: ${answer.status} ${answer.body.slice(0, 120)}`)
    }
    const alive = await post('/parse/attack/signedIn', { headers: appHeaders, body: {} })
    t.equal(alive.json?.code, Parse.Error.OBJECT_NOT_FOUND, 'still up')
  })
})

t.test('a configured javascriptKey is required on declared routes as Parse requires it on its own', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true, parseServerOptions: { javascriptKey: 'js-key' } })
  const parseSays = await kit.request('GET', '/parse/users/me', { headers: { ...appHeaders, 'x-parse-session-token': 'r:x' } })
  t.equal(parseSays.status, 403, `Parse refuses a caller without the key: ${parseSays.text}`)
  const parseWithKey = await kit.request('GET', '/parse/users/me', { headers: { ...appHeaders, 'x-parse-javascript-key': 'js-key', 'x-parse-session-token': 'r:x' } })
  t.not(parseWithKey.status, 403, `Parse admits the key: ${parseWithKey.text}`)
  const withKey = await kit.request('POST', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-javascript-key': 'js-key' }, body: {} })
  t.equal(withKey.json?.code, Parse.Error.OBJECT_NOT_FOUND, `with the key, on to the session check: ${withKey.text}`)
  const keyless = await kit.request('POST', '/parse/attack/signedIn', { headers: appHeaders, body: {} })
  t.equal(keyless.status, 403, `without the key: ${keyless.text}`)
  const keylessBody = await kit.request('POST', '/parse/attack/signedIn', { body: { _ApplicationId: APP_ID }, contentType: 'text/plain' })
  t.equal(keylessBody.status, 403, `without the key (SDK body): ${keylessBody.text}`)
  const wrongBody = await kit.request('POST', '/parse/attack/signedIn', { body: { _ApplicationId: APP_ID, _JavaScriptKey: 'nope' }, contentType: 'text/plain' })
  t.equal(wrongBody.status, 403, `a wrong key (SDK body): ${wrongBody.text}`)
  const rightBody = await kit.request('POST', '/parse/attack/signedIn', { body: { _ApplicationId: APP_ID, _JavaScriptKey: 'js-key' }, contentType: 'text/plain' })
  t.equal(rightBody.json?.code, Parse.Error.OBJECT_NOT_FOUND, `the key (SDK body): ${rightBody.text}`)
  const master = await kit.request('POST', '/parse/attack/masterOnly', { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY }, body: {} })
  t.same(master.json, { ran: 'masterOnly' }, 'the master key needs no client key')
  const refusedVerb = await kit.request('DELETE', '/parse/attack/putOnly', { headers: appHeaders })
  t.equal(refusedVerb.status, 403, `a refused verb without the key: 403 before 405: ${refusedVerb.text}`)
})

t.test('masterKeyIps: a forged X-Forwarded-For does not earn the master key, by header or by body', async (t) => {
  const kit = await startKit(t, { parseServerOptions: { masterKeyIps: ['10.0.0.1'], restAPIKey: 'rest', javascriptKey: 'js-key' } })
  ran.length = 0
  // The REST key is presented too, so the master key's address rule is what decides.
  const forged = { 'x-forwarded-for': '10.0.0.1', 'x-real-ip': '10.0.0.1', 'x-parse-rest-api-key': 'rest' }
  const header = await kit.request('POST', '/parse/attack/masterOnly', { headers: { ...appHeaders, ...forged, 'x-parse-master-key': MASTER_KEY }, body: {} })
  t.equal(header.status, 403, header.text)
  t.match(header.json?.error, /masterKeyIps/, 'refused for its address')
  const body = await kit.request('POST', '/parse/attack/masterOnly', { headers: forged, body: { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }, contentType: 'text/plain' })
  t.equal(body.status, 403, body.text)
  t.match(body.json?.error, /masterKeyIps/, 'refused for its address')
  const basicAuth = await kit.request('POST', '/parse/attack/masterOnly', { headers: { ...forged, authorization: basic(APP_ID, MASTER_KEY) }, body: {} })
  t.equal(basicAuth.status, 403, basicAuth.text)
  // With restAPIKey and javascriptKey both configured, either one admits (Parse's rule), neither refuses.
  const jsKey = await kit.request('POST', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-javascript-key': 'js-key' }, body: {} })
  t.equal(jsKey.json?.code, Parse.Error.OBJECT_NOT_FOUND, jsKey.text)
  const restKey = await kit.request('POST', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-rest-api-key': 'rest' }, body: {} })
  t.equal(restKey.json?.code, Parse.Error.OBJECT_NOT_FOUND, restKey.text)
  const neither = await kit.request('POST', '/parse/attack/signedIn', { headers: { ...appHeaders, 'x-parse-rest-api-key': 'js-key' }, body: {} })
  t.equal(neither.status, 403, neither.text)
  t.same(ran, [], 'nothing ran')
})

// ── from test/restriction-defects.test.ts ──
// The restriction's details, each tried over real HTTP against the real server:
// where the master key is honoured from, verbs on the /functions twin, the app id
// before anything else, secrets kept out of logs, one body limit and request
// timeouts, 404 for typos, check order and messages of declared endpoints.
@ParseClass('Memo')
class Memo extends BaseModel {
  @ParseField({ type: 'String' }) declare title: string
}

@Route(Memo)
class MemoFunctions {
  @CloudFunction({ methods: ['GET'] }) static listMemos (request: CloudRequest) { return { master: request.master } }
  @CloudFunction({ methods: ['POST'], requiresAuth: true, validation: { fields: { title: { type: String, required: true } } } })
  static createMemo (request: CloudRequest) { return { created: request.params.title } }

  @CloudFunction({ methods: ['POST'], validation: { fields: { title: { type: String, required: true } } }, customErrorMessage: 'Memos need a title' })
  static strictMemo () { return 'ok' }

  @CloudFunction({ methods: ['GET'], rateLimit: { windowMs: 60_000, max: 1 } }) static limitedMemo () { return 'ok' }
  @CloudFunction({ methods: ['POST'] }) static echoMemo (request: CloudRequest) { return { params: request.params } }
}
void Memo; void MemoFunctions

const logLines: string[] = []
const logStream = new Writable({ write (chunk, _encoding, done) { logLines.push(String(chunk)); done() } })

const outside = { 'x-forwarded-for': '203.0.113.9' }
const allowedRange = { 'x-forwarded-for': '198.51.100.7' }

t.test('the restriction, end to end', async (t) => {
  const recommended = kitServerOptions({ level: 'info', requestTimeout: 1500, pretty: false })
  const kit = await startKit(t, {
    allowAuthRoutes: true,
    parseServerOptions: { masterKeyIps: ['127.0.0.1', '::1', '198.51.100.0/24'] }
  }, {
    ...recommended,
    logger: { ...(recommended.logger as object), stream: logStream },
    // Behind a proxy that sets X-Forwarded-For; Node checks request timeouts every 250 ms here (30 s by default).
    trustProxy: true,
    http: { ...recommended.http, connectionsCheckingInterval: 250 }
  } as never)
  const port = Number(new URL(kit.origin).port)

  t.test('3. the master key counts only from masterKeyIps, on declared endpoints too', async (t) => {
    const local = await kit.request('GET', '/parse/memos/listMemos', { headers: masterHeaders })
    t.same(local.json, { master: true }, 'from 127.0.0.1 the master key is the master key')
    const inRange = await kit.request('GET', '/parse/memos/listMemos', { headers: { ...masterHeaders, ...allowedRange } })
    t.same(inRange.json, { master: true }, 'from a listed range too')
    for (const url of ['/parse/memos/listMemos', '/parse/functions/listMemos']) {
      const far = await kit.request('GET', url, { headers: { ...masterHeaders, ...outside } })
      t.equal(far.status, 403, `${url} from an unlisted address: ${far.text}`)
      t.equal(far.json?.code, 119)
      t.match(far.json?.error, /masterKeyIps/)
    }
    const parseRoute = await kit.request('GET', '/parse/classes/Memo', { headers: { ...masterHeaders, ...outside } })
    t.equal(parseRoute.status, 403, 'a closed Parse route stays closed')
    t.match(parseRoute.json?.error, /closed by route restriction/)
    const openParseRoute = await kit.request('GET', '/parse/users/me', { headers: { ...masterHeaders, ...outside } })
    t.equal(openParseRoute.status, 403, 'and Parse itself refuses the master key from there (same address rule)')
    // The rate limit exempts the master key only where it counts.
    const first = await kit.request('GET', '/parse/memos/limitedMemo', { headers: { ...appHeaders, ...outside, 'x-forwarded-for': '203.0.113.10' } })
    t.equal(first.status, 200)
    const second = await kit.request('GET', '/parse/memos/limitedMemo', { headers: { ...masterHeaders, 'x-forwarded-for': '203.0.113.10' } })
    t.equal(second.status, 429, 'a master key from an unlisted address is rate limited like anyone')
    for (let i = 0; i < 3; i++) {
      const exempt = await kit.request('GET', '/parse/memos/limitedMemo', { headers: { ...masterHeaders, 'x-forwarded-for': '198.51.100.8' } })
      t.equal(exempt.status, 200, 'the master key from a listed address is not limited')
    }
  })

  t.test('4. the /functions twin takes only the verbs the function declares (and POST, for Parse.Cloud.run)', async (t) => {
    const getPostOnly = await kit.request('GET', '/parse/functions/createMemo?title=x', { headers: appHeaders })
    t.equal(getPostOnly.status, 405, 'GET does not run a POST function')
    t.equal(getPostOnly.headers.get('allow'), 'POST')
    const headPostOnly = await kit.request('HEAD', '/parse/functions/echoMemo', { headers: appHeaders })
    t.equal(headPostOnly.status, 405)
    const put = await kit.request('PUT', '/parse/functions/listMemos', { headers: appHeaders, body: {} })
    t.equal(put.status, 405)
    t.equal(put.headers.get('allow'), 'POST, GET, HEAD')
    const postGetOnly = await kit.request('POST', '/parse/functions/listMemos', { headers: appHeaders, body: {} })
    t.equal(postGetOnly.status, 200, 'POST (what Parse.Cloud.run sends) reaches a GET function on the twin')
    const getGetOnly = await kit.request('GET', '/parse/functions/listMemos', { headers: appHeaders })
    t.same(getGetOnly.json, { result: { master: false } })
  })

  t.test('5. the app id is checked before the verb', async (t) => {
    for (const headers of [{}, { 'x-parse-application-id': 'other-app' }] as Array<Record<string, string>>) {
      for (const [verb, url] of [['DELETE', '/parse/memos/listMemos'], ['GET', '/parse/memos/createMemo'], ['PUT', '/parse/functions/createMemo'], ['GET', '/parse/functions/echoMemo']]) {
        const result = await kit.request(verb, url, { headers, body: verb === 'GET' ? undefined : {} })
        t.equal(result.status, 403, `${verb} ${url} without the app id`)
        t.same(result.json, { error: 'unauthorized' }, 'names no function and no verb')
        t.equal(result.headers.get('allow'), null)
      }
    }
    // With CORS on (the default) every OPTIONS under the mount is a preflight, answered
    // by the CORS policy alike for declared and undeclared paths: nothing to enumerate.
    const options = await kit.request('OPTIONS', '/parse/memos/listMemos', { headers: appHeaders })
    const undeclared = await kit.request('OPTIONS', '/parse/memos/noSuchMemo', { headers: appHeaders })
    t.equal(options.status, 400, 'an OPTIONS that is no preflight is refused by the CORS policy')
    t.same([undeclared.status, undeclared.text], [options.status, options.text], 'the same answer for an undeclared path')
    const known = await kit.request('DELETE', '/parse/memos/listMemos', { headers: appHeaders, body: {} })
    t.equal(known.status, 405, 'with the app id, the verb is explained')
    t.equal(known.headers.get('allow'), 'GET, HEAD')
  })

  t.test('6. passwords, session tokens and keys stay out of the request log', async (t) => {
    logLines.length = 0
    await kit.request('GET', '/parse/login?username=u1&password=hunter2-secret', { headers: { ...appHeaders, 'x-parse-session-token': 'r:token-secret' } })
    await kit.request('GET', `/parse/classes/Memo?sessionToken=r:query-token-secret&_MasterKey=${MASTER_KEY}`, { headers: masterHeaders })
    await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'u1', password: 'body-password-secret' } })
    await kit.request('GET', '/parse/users/me?authData[facebook][access_token]=fb-token-secret', { headers: appHeaders })
    const log = logLines.join('')
    t.match(log, /\/parse\/login\?username=u1&password=\[redacted\]/, 'the request is logged, with the password replaced')
    for (const secret of ['hunter2-secret', 'token-secret', 'query-token-secret', 'body-password-secret', 'fb-token-secret', MASTER_KEY]) {
      t.notOk(log.includes(secret), `${secret} appears in no log line`)
    }
  })

  t.test('48.9 an incoming x-request-id is the request id: in the answer and in every line the request logs, Parse\'s included', async (t) => {
    const linesOf = async (id: string, send: () => Promise<{ status: number, headers: Headers }>) => {
      logLines.length = 0
      const answer = await send()
      t.equal(answer.headers.get('x-request-id'), id, 'the answer carries the id')
      const lines = logLines.map((line) => JSON.parse(line) as { reqId?: string, msg?: string })
      t.ok(lines.length > 0, 'the request logged')
      for (const line of lines) t.equal(line.reqId, id, `"${line.msg}" carries the id`)
      return lines
    }
    // A Parse REST call Parse logs about (an object that does not exist: Parse's "Object not found").
    const parseLines = await linesOf('trace-parse-0001', () => kit.request('GET', '/parse/classes/Memo/nosuchobject', { headers: { ...masterHeaders, 'x-request-id': 'trace-parse-0001' } }))
    t.ok(parseLines.some((line) => line.msg?.startsWith('[parse] ')), 'Parse\'s own line is among them')
    const fromPage = await kit.request('GET', '/parse/classes/Memo/nosuchobject', { headers: { ...masterHeaders, origin: 'https://app.example.com' } })
    t.match(fromPage.headers.get('access-control-expose-headers'), /X-Request-Id/, 'a page may read it')
    await linesOf('trace-fn-0002', () => kit.request('POST', '/parse/memos/echoMemo', { headers: { ...appHeaders, 'x-request-id': 'trace-fn-0002' }, body: { a: 1 } }))

    const unsafe = await kit.request('GET', '/parse/memos/listMemos', { headers: { ...appHeaders, 'x-request-id': 'two words\tand a tab' } })
    t.match(unsafe.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unsafe id is replaced by a generated one')
    const none = await kit.request('GET', '/parse/memos/listMemos', { headers: appHeaders })
    t.match(none.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'without one, one is generated')
    const long = await kit.request('GET', '/parse/memos/listMemos', { headers: { ...appHeaders, 'x-request-id': 'a'.repeat(129) } })
    t.not(long.headers.get('x-request-id'), 'a'.repeat(129), 'an id over 128 characters is replaced')
    // A path Fastify cannot decode is refused before any hook runs: still the kit's shape, and still the id.
    const badUrl = await kit.request('GET', '/parse/memos/%zz', { headers: { ...appHeaders, 'x-request-id': 'trace-bad-url-3' } })
    t.match({ status: badUrl.status, ...badUrl.json }, { status: 400, code: 102, error: /not valid percent-encoding/ }, badUrl.text)
    t.equal(badUrl.headers.get('x-request-id'), 'trace-bad-url-3', 'a refused path carries the id')
  })

  t.test('7. one body limit under the mount, whatever the type; slow bodies time out', async (t) => {
    const big = 'x'.repeat(KIT_SERVER_DEFAULTS.bodyLimit + 10)
    for (const type of ['application/octet-stream', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'image/png']) {
      const result = await kit.request('POST', '/parse/functions/notDeclared', { headers: appHeaders, body: big, contentType: type })
      t.equal(result.status, 413, `${type}: ${result.text.slice(0, 100)}`)
    }
    const chunked = await rawRequest(port, 'POST /parse/functions/notDeclared HTTP/1.1', { ...appHeaders, 'content-type': 'application/vnd.x', 'transfer-encoding': 'chunked' },
      `${(KIT_SERVER_DEFAULTS.bodyLimit + 10).toString(16)}\r\n${big}\r\n0\r\n\r\n`)
    t.equal(chunked.status, 413, 'a chunked body is counted as it arrives')
    // Content-Length: 100000, one byte at a time: the request timeout ends it.
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      let received = ''
      let timer: NodeJS.Timeout | undefined
      // The client gives up after 20 s of dribbling, stretched with the load (the server's limit here is 1.5 s).
      const giveUp = setTimeout(() => socket.destroy(), scaled(20_000))
      socket.on('connect', () => {
        socket.write(`POST /parse/functions/notDeclared HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: ${APP_ID}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`)
        timer = setInterval(() => { if (!socket.destroyed) socket.write(' ') }, 300)
      })
      socket.on('data', (chunk) => { received += String(chunk) })
      socket.on('error', () => {})
      socket.on('close', () => { clearInterval(timer); clearTimeout(giveUp); resolve(received) })
    })
    t.match(answer, /^HTTP\/1\.1 408/, 'the slow request is answered 408 and closed by the server, not abandoned by the client')
    t.same({ requestTimeout: kitServerOptions().requestTimeout, connectionTimeout: kitServerOptions().connectionTimeout, bodyLimit: kitServerOptions().bodyLimit },
      { requestTimeout: 30_000, connectionTimeout: 60_000, bodyLimit: 1024 * 1024 }, 'the recommended values the README gives')
  })

  t.test('8. a typo is a 404 with a suggestion; a real closed route stays a 403', async (t) => {
    const typo = await kit.request('GET', '/parse/memos/listMemo', { headers: appHeaders })
    t.equal(typo.status, 404)
    t.equal(typo.json?.code, 101)
    t.match(typo.json?.error, /Did you mean \/parse\/memos\/listMemos\?/)
    const twinTypo = await kit.request('POST', '/parse/functoins/echoMemo', { headers: appHeaders, body: {} })
    t.equal(twinTypo.status, 404)
    t.match(twinTypo.json?.error, /Did you mean \/parse\/functions\/echoMemo\?/)
    const nothing = await kit.request('GET', '/parse/nothing/like/anything/here', { headers: appHeaders })
    t.equal(nothing.status, 404)
    t.notMatch(nothing.json?.error, /Did you mean/)
    t.notMatch(nothing.json?.error, /allowAuthRoutes/)
    const closed = await kit.request('GET', '/parse/roles', { headers: appHeaders })
    t.equal(closed.status, 403)
    t.match(closed.json?.error, /allowAuthRoutes/)
    const anonymous = await kit.request('GET', '/parse/memos/listMemo')
    t.same(anonymous.json, { error: 'unauthorized' }, 'without the app id, not even a suggestion')
  })

  t.test('9. JSON in text/plain keeps Fastify\'s prototype poisoning protection', async (t) => {
    for (const body of ['{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}']) {
      for (const url of ['/parse/memos/echoMemo', '/parse/functions/notDeclared']) {
        const result = await kit.request('POST', url, { headers: appHeaders, body, contentType: 'text/plain' })
        t.equal(result.status, 400, `${url} ${body}`)
        t.equal(result.json?.code, 107)
      }
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  t.test('19.14 session and roles are checked before the body is validated', async (t) => {
    const anonymous = await kit.request('POST', '/parse/memos/createMemo', { headers: appHeaders, body: { wrong: 1 } })
    t.equal(anonymous.json?.code, 101, 'an anonymous caller learns only that a session is needed')
    t.notMatch(anonymous.text, /title/)
    const signUp = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'memo-writer', password: 'memo-password-1' } })
    const withSession = await kit.request('POST', '/parse/memos/createMemo', { headers: { ...appHeaders, 'x-parse-session-token': signUp.json.sessionToken }, body: { wrong: 1 } })
    t.equal(withSession.status, 400)
    t.equal(withSession.json?.code, 142, 'a caller who may call it gets the validation error')
  })

  t.test('19.15 customErrorMessage replaces the validation refusal text too', async (t) => {
    const result = await kit.request('POST', '/parse/memos/strictMemo', { headers: appHeaders, body: {} })
    t.equal(result.status, 400)
    t.same(result.json, { code: 142, error: 'Memos need a title' })
  })
})

t.test('Parse\'s own trustProxy fails boot, pointing at Fastify\'s', async (t) => {
  await t.rejects(startKit(t, { parseServerOptions: { trustProxy: true } }), /Fastify's own trustProxy option/)
})

t.test('pure rules', async (t) => {
  const definitions = await import('parse-server/lib/Options/Definitions.js' as string)
  const parseDefault = (definitions.ParseServerOptions ?? definitions.default?.ParseServerOptions).masterKeyIps.default
  t.same(PARSE_DEFAULT_MASTER_KEY_IPS, parseDefault, 'the kit\'s default masterKeyIps is Parse\'s own')
  const rule = { key: MASTER_KEY, ips: PARSE_DEFAULT_MASTER_KEY_IPS }
  t.equal(masterKeyVerdict(MASTER_KEY, '127.0.0.1', rule), 'master')
  t.equal(masterKeyVerdict(MASTER_KEY, '::1', rule), 'master')
  t.equal(masterKeyVerdict(MASTER_KEY, '10.0.0.1', rule), 'address')
  t.equal(masterKeyVerdict(MASTER_KEY, '::ffff:127.0.0.1', rule), 'master', 'IPv4-mapped loopback matches, as in Parse (node:net BlockList)')
  t.equal(masterKeyVerdict('nope', '127.0.0.1', rule), 'wrong')
  t.equal(masterKeyVerdict(undefined, '127.0.0.1', rule), 'absent')
  t.ok(addressAllowed('10.1.2.3', ['10.0.0.0/8']))
  t.ok(addressAllowed('2001:db8::1', ['::/0']))
  t.notOk(addressAllowed('10.1.2.3', ['::/0']), 'families are separate')
  t.notOk(addressAllowed('not-an-ip', ['0.0.0.0/0']))

  // Credentials as Parse reads them: headers, unless there is no app id header.
  t.same(readCredentials({ 'x-parse-application-id': APP_ID }, { _MasterKey: MASTER_KEY }).masterKey, undefined, 'a body master key beside a header app id is ignored')
  t.same(readCredentials({}, { _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }).masterKey, MASTER_KEY)
  t.same(readCredentials({ 'x-parse-master-key': MASTER_KEY }, { _ApplicationId: APP_ID }).masterKey, MASTER_KEY)
  t.same(readCredentials({}, { _method: 'get' }).method, 'GET')
  t.same(readCredentials({}, { _method: '' }).method, undefined, 'an empty override is none, as in Parse')
  const basic = (text: string) => ({ authorization: `Basic ${Buffer.from(text).toString('base64')}` })
  t.match(readCredentials(basic(`${APP_ID}:${MASTER_KEY}`), {}), { appId: APP_ID, masterKey: MASTER_KEY }, 'HTTP Basic carries app id and master key, as Parse reads it')
  t.match(readCredentials(basic(`${APP_ID}:javascript-key=js`), {}), { appId: APP_ID, masterKey: undefined, javascriptKey: 'js' })
  t.match(readCredentials({ ...basic(`${APP_ID}:${MASTER_KEY}`) }, { _ApplicationId: APP_ID, _MasterKey: 'other' }), { masterKey: MASTER_KEY }, 'and then the body does not speak')

  t.same(redactUrl('/parse/login?username=a&password=b'), '/parse/login?username=a&password=[redacted]')
  t.same(redactUrl('/x?SessionToken=1&masterKey=2&ok=3'), '/x?SessionToken=[redacted]&masterKey=[redacted]&ok=3')
  t.same(redactUrl('/x?authData%5Bfb%5D%5Baccess_token%5D=s'), '/x?authData%5Bfb%5D%5Baccess_token%5D=[redacted]')

  for (const refused of ['http://h/parse/x', '/parse/a;b', '/parse/a%2fb', '/parse/a%2E%2E/b', '/parse//a', '/parse/a\\b', '/parse/../x', '/parse/a/./b', '/parse/%252e', '/parse/%E0%A4%A', '/other']) {
    t.ok('refusal' in mapRequestTarget(refused, '/parse'), `${refused} is refused`)
  }
  t.same(mapRequestTarget('/parse/classes/N%C3%B8te?x=1', '/parse'), { path: '/classes/Nøte' })
  t.same(mapRequestTarget('/parse', '/parse'), { path: '/' })
  t.equal(closestPath('/notes/listNote', ['/notes/listNotes', '/notes/createNote']), '/notes/listNotes')
  t.equal(closestPath('/totally/different', ['/notes/listNotes']), undefined)
})

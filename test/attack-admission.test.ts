// Attacks on the declared routes' admission (headers judged in onRequest, body
// credentials in preValidation) and on the one wildcard route answering refused
// verbs: every probe a client could send to reach a guarded handler without
// the right credentials, or to make the refusal constraint fail. Each answer is
// pinned: a guarded handler never runs for these callers, nothing answers 500.
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { mock } from 'node:test'
import Parse from 'parse/node'
import { CloudFunction, Route, addUsersToRole, removeUsersFromRole, type CloudRequest } from '../lib/index.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'
import { AuthModule } from '../lib/parse/internals.js'
import { parseConfig } from '../lib/access/parse-config.js'

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

// Route restriction against the real Parse Server on the embedded PostgreSQL, over real HTTP.
import t, { type Test } from 'tap'
import { AUTH_ROUTES } from '../lib/access/restriction.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'

const VERBS = ['GET', 'POST', 'PUT', 'DELETE']
const BLOCKED_PATHS = [
  '/classes/Note', '/classes/Note/abc123', '/schemas', '/schemas/Note', '/batch', '/users', '/users/abc123',
  '/users/me', '/login', '/logout', '/sessions', '/sessions/me', '/roles', '/roles/abc123', '/installations',
  '/config', '/aggregate/Note', '/push', '/hooks/functions', '/jobs', '/purge/Note', '/files/a.txt',
  '/requestPasswordReset', '/verificationEmailRequest', '/serverInfo', '/CLASSES/Note', '/classes/Note/'
]

function assertBlocked (t: Test, result: { status: number, json: any }, label: string) {
  t.equal(result.status, 403, `${label} → 403`)
  t.equal(result.json?.code, 119, `${label} → code 119`)
  t.match(result.json?.error, /allowAuthRoutes/, `${label} names allowAuthRoutes`)
  t.match(result.json?.error, /Cloud Function/, `${label} suggests a Cloud Function`)
}

t.test('closed by default', async (t) => {
  const kit = await startKit(t, {
    parseServerOptions: {
      cloud: (Parse: any) => {
        Parse.Cloud.define('countNotes', async () => new Parse.Query('Note').exists('objectId').count({ useMasterKey: true }))
      }
    }
  })

  t.test('every generic route × verb answers 403 naming allowAuthRoutes', async (t) => {
    for (const path of BLOCKED_PATHS) {
      for (const verb of VERBS) {
        const result = await kit.request(verb, `/parse${path}`, { headers: appHeaders, body: verb === 'GET' ? undefined : {} })
        assertBlocked(t, result, `${verb} ${path}`)
      }
    }
  })

  t.test('a wrong or missing application id is unauthorized', async (t) => {
    for (const headers of [{}, { 'x-parse-application-id': 'someone-else' }] as Array<Record<string, string>>) {
      const result = await kit.request('GET', '/parse/classes/Note', { headers })
      t.equal(result.status, 403)
      t.same(result.json, { error: 'unauthorized' })
    }
    const withMaster = await kit.request('GET', '/parse/classes/Note', { headers: { 'x-parse-master-key': MASTER_KEY } })
    t.same(withMaster.json, { error: 'unauthorized' }, 'the master key does not stand in for the app id')
  })

  t.test('the health check is open', async (t) => {
    const result = await kit.request('GET', '/parse/health')
    t.equal(result.status, 200)
    t.same(result.json, { status: 'ok' })
  })

  t.test('the master key passes; a wrong one does not', async (t) => {
    const created = await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { title: 'by master' } })
    t.equal(created.status, 201)
    t.ok(created.json.objectId)
    const found = await kit.request('GET', '/parse/classes/Note?where=' + encodeURIComponent('{"title":"by master"}'), { headers: masterHeaders })
    t.equal(found.status, 200)
    t.equal(found.json.results.length, 1)
    const wrong = await kit.request('GET', '/parse/classes/Note', { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY + 'x' } })
    assertBlocked(t, wrong, 'wrong master key')
    const prefix = await kit.request('GET', '/parse/classes/Note', { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY.slice(0, -1) } })
    assertBlocked(t, prefix, 'master key prefix')
  })

  t.test('a text/plain JSON body (as Parse SDKs send it) reaches Parse', async (t) => {
    const body = { title: 'from the sdk', _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }
    const created = await kit.request('POST', '/parse/classes/Note', { body, contentType: 'text/plain' })
    t.equal(created.status, 201, JSON.stringify(created.json))
    const found = await kit.request('GET', '/parse/classes/Note?where=' + encodeURIComponent('{"title":"from the sdk"}'), { headers: masterHeaders })
    t.equal(found.json.results[0]?.title, 'from the sdk')
    const noKey = await kit.request('POST', '/parse/classes/Note', { body: { title: 'x', _ApplicationId: APP_ID }, contentType: 'text/plain' })
    assertBlocked(t, noKey, 'text/plain body without master key')
    const broken = await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: '{"title":', contentType: 'application/json' })
    t.equal(broken.status, 400)
    t.equal(broken.json.code, 107, 'invalid JSON answers Parse code 107')
  })

  t.test('batch and a Cloud Code query work (router pinned to 2.2.0)', async (t) => {
    // Counted relative to the rows already there, so the other subtests' rows do not matter.
    const countNotes = async () => {
      const counted = await kit.request('POST', '/parse/functions/countNotes', { headers: appHeaders, body: {} })
      t.equal(counted.status, 200, counted.text)
      return counted.json.result as number
    }
    const before = await countNotes()
    const batch = await kit.request('POST', '/parse/batch', {
      headers: masterHeaders,
      body: { requests: [{ method: 'POST', path: '/parse/classes/Note', body: { title: 'b1' } }, { method: 'POST', path: '/parse/classes/Note', body: { title: 'b2' } }] }
    })
    t.equal(batch.status, 200, batch.text)
    t.equal(batch.json.length, 2)
    t.ok(batch.json.every((entry: any) => entry.success?.objectId))
    t.equal(await countNotes(), before + 2, 'the Cloud Code query sees both rows of the batch')
  })
})

t.test('allowAuthRoutes opens exactly the table, method by method', async (t) => {
  const kit = await startKit(t, { allowAuthRoutes: true })

  t.test('each row opens with its methods only', async (t) => {
    for (const route of AUTH_ROUTES) {
      for (const verb of VERBS) {
        const result = await kit.request(verb, `/parse${route.path}`, { headers: appHeaders, body: verb === 'GET' ? undefined : {} })
        if (route.methods!.includes(verb)) {
          t.notMatch(result.text, /allowAuthRoutes/, `${verb} ${route.path} is open (${result.status} ${result.text})`)
        } else {
          assertBlocked(t, result, `${verb} ${route.path}`)
        }
      }
    }
    for (const [verb, path] of [['GET', '/users'], ['PUT', '/users/abc123'], ['DELETE', '/users/abc123'], ['GET', '/classes/Note'], ['POST', '/batch']]) {
      const result = await kit.request(verb, `/parse${path}`, { headers: appHeaders, body: verb === 'GET' ? undefined : {} })
      assertBlocked(t, result, `${verb} ${path} stays blocked`)
      t.notMatch(result.json?.error, /set allowAuthRoutes: true/, `${verb} ${path}: no advice to set what is set`)
      t.match(result.json?.error, /allowAuthRoutes is on, so the login, sign-up and session routes are open already/)
    }
  })

  t.test('sign up, me, login and logout work end to end', async (t) => {
    const signUp = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'ada', password: 'lovelace-1815' } })
    t.equal(signUp.status, 201, signUp.text)
    t.ok(signUp.json.sessionToken)
    const me = await kit.request('GET', '/parse/users/me', { headers: { ...appHeaders, 'x-parse-session-token': signUp.json.sessionToken } })
    t.equal(me.status, 200)
    t.equal(me.json.username, 'ada')
    const login = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'ada', password: 'lovelace-1815' } })
    t.equal(login.status, 200, login.text)
    // The JavaScript SDK's shape: POST, text/plain, method override and keys in the body.
    const sdkMe = await kit.request('POST', '/parse/users/me', {
      body: { _method: 'GET', _ApplicationId: APP_ID, _SessionToken: login.json.sessionToken }, contentType: 'text/plain'
    })
    t.equal(sdkMe.status, 200, sdkMe.text)
    t.equal(sdkMe.json.username, 'ada')
    const sdkPut = await kit.request('POST', `/parse/users/${signUp.json.objectId}`, {
      body: { _method: 'PUT', _ApplicationId: APP_ID, _SessionToken: login.json.sessionToken, username: 'eve' }, contentType: 'text/plain'
    })
    assertBlocked(t, sdkPut, 'method-overridden PUT /users/<id>')
    const logout = await kit.request('POST', '/parse/logout', { headers: { ...appHeaders, 'x-parse-session-token': login.json.sessionToken }, body: {} })
    t.equal(logout.status, 200)
  })
})

t.test('allowedRoutes opens more routes, by method', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [{ path: '/classes/Note', methods: ['GET'] }] })
  await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { title: 'public' } })
  const read = await kit.request('GET', '/parse/classes/Note', { headers: appHeaders })
  t.equal(read.status, 200, read.text)
  t.equal(read.json.results[0].title, 'public')
  assertBlocked(t, await kit.request('POST', '/parse/classes/Note', { headers: appHeaders, body: {} }), 'POST not opened')
  assertBlocked(t, await kit.request('GET', '/parse/classes/Other', { headers: appHeaders }), 'other class not opened')
})

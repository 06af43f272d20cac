// Hostile requests against a `/classes/*` wildcard, the allow-list the parse-sdk-clients
// guide shows: it opens the application's classes, not Parse's own (_User, _Session, …),
// which would sign up, edit users and mint sessions past a closed allowAuthRoutes.
import t from 'tap'
import { APP_ID, appHeaders, masterHeaders, startKit } from './helpers/kit.js'
import { rawRequest } from './helpers/raw-http.js'

const wildcardOnly = { allowAuthRoutes: false, allowedRoutes: [{ path: '/classes/*' }, { path: '/aggregate/*' }, { path: '/batch', methods: ['POST'] }] }

t.test('a /classes/* wildcard does not open Parse\'s own classes, however spelled or batched', async (t) => {
  const kit = await startKit(t, wildcardOnly)
  const port = Number(new URL(kit.origin).port)
  const owner = await kit.signUp('wildcard-owner')
  const json = { 'x-parse-application-id': APP_ID, 'content-type': 'application/json' }
  const signUpBody = (username: string) => JSON.stringify({ username, password: 'p-1-password' })
  const refused = [
    { line: 'POST /parse/classes/_User', body: signUpBody('wild-direct') },
    { line: 'POST /parse/classes/%5FUser', body: signUpBody('wild-encoded') },
    { line: 'POST /parse/classes/%5fUser', body: signUpBody('wild-encoded-lower') },
    { line: 'POST /parse/CLASSES/_user', body: signUpBody('wild-case') },
    { line: 'POST /parse/classes/_User/', body: signUpBody('wild-slash') },
    { line: 'POST /parse/classes/_Installation', body: JSON.stringify({ deviceType: 'ios', installationId: 'wild-1' }) },
    { line: 'POST /parse/classes/_Role', body: JSON.stringify({ name: 'wildRole', ACL: {} }) },
    { line: `PUT /parse/classes/_User/${owner.id}`, body: JSON.stringify({ note: 'x' }) },
    { line: `GET /parse/classes/_User/${owner.id}` },
    { line: 'GET /parse/classes/_User' },
    { line: 'GET /parse/aggregate/_User' },
    { line: 'GET /parse/aggregate/%5FSession' }
  ]
  for (const { line, body } of refused) {
    const result = await rawRequest(port, `${line} HTTP/1.1`, { ...json, 'x-parse-session-token': owner.token }, body)
    t.equal(result.status, 403, `${line} → 403 (${result.body.slice(0, 120)})`)
    t.match(result.json?.error, /closed by route restriction/, `${line}: refused by the gate, not by Parse`)
  }
  for (const session of ['_Session', '%5FSession', '%5fSession']) {
    const result = await rawRequest(port, `POST /parse/classes/${session} HTTP/1.1`, { ...json, 'x-parse-session-token': owner.token }, '{}')
    t.equal(result.status, 403, `POST /classes/${session} with a session token → 403, no session minted (${result.body.slice(0, 120)})`)
    t.notOk(result.json?.sessionToken, `${session}: no session token in the answer`)
  }

  const batch = (requests: unknown[]) => kit.request('POST', '/parse/batch', { headers: { ...appHeaders, 'x-parse-session-token': owner.token }, body: { requests } })
  for (const path of ['/parse/classes/_User', '/parse/classes/%5FUser', '/parse/CLASSES/_user', '/parse/classes/_Session']) {
    const result = await batch([{ method: 'POST', path, body: { username: 'wild-batched', password: 'p-1-password' } }])
    t.equal(result.status, 403, `POST ${path} inside /batch → 403 (${result.text.slice(0, 120)})`)
    t.match(result.json?.error, /closed by route restriction/, `${path} inside /batch: refused by the gate`)
  }

  const created = await kit.request('GET', '/parse/users?where={"username":{"$regex":"^wild-"}}', { headers: masterHeaders })
  t.same(created.json?.results, [], 'no account was created past the closed sign-up')
  const sessions = await kit.request('GET', '/parse/classes/_Session', { headers: masterHeaders })
  t.equal(sessions.json?.results?.length, 1, 'the owner has its one login session, nothing minted')

  // Parse lets only the master key create a class; then clients write to it.
  await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { text: 'first' } })
  const app = await kit.request('POST', '/parse/classes/Note', { headers: appHeaders, body: { text: 'open' } })
  t.equal(app.status, 201, `an application class stays open (${app.text})`)
  const appBatch = await batch([{ method: 'POST', path: '/parse/classes/Note', body: { text: 'batched' } }])
  t.ok(appBatch.status === 200 && appBatch.json?.[0]?.success, `an application class stays open inside /batch (${appBatch.text})`)
  const master = await kit.request('POST', '/parse/classes/_User', { headers: masterHeaders, body: { username: 'master-made', password: 'p-1-password' } })
  t.equal(master.status, 201, `the master key passes as before (${master.text})`)
})

t.test('a rule naming _User opens it as named: a user saves itself, sign-up stays closed', async (t) => {
  const kit = await startKit(t, { ...wildcardOnly, allowedRoutes: [...wildcardOnly.allowedRoutes, { path: '/classes/_User/*', methods: ['GET', 'PUT'] }] })
  const owner = await kit.signUp('named-owner')
  const other = await kit.signUp('named-other')
  const as = (token: string) => ({ ...appHeaders, 'x-parse-session-token': token })

  const saved = await kit.request('PUT', `/parse/classes/_User/${owner.id}`, { headers: as(owner.token), body: { nickname: 'me' } })
  t.equal(saved.status, 200, `PUT its own user → 200 (${saved.text})`)
  const fetched = await kit.request('GET', `/parse/classes/_User/${owner.id}`, { headers: as(owner.token) })
  t.equal(fetched.json?.nickname, 'me', 'GET its own user reads the save')
  const foreign = await kit.request('PUT', `/parse/classes/_User/${other.id}`, { headers: as(owner.token), body: { nickname: 'hijacked' } })
  t.not(foreign.status, 200, `PUT another user is refused by Parse's ACL (${foreign.status} ${foreign.text})`)
  const check = await kit.request('GET', `/parse/classes/_User/${other.id}`, { headers: masterHeaders })
  t.not(check.json?.nickname, 'hijacked', 'the other user is unchanged')

  const signUp = await kit.request('POST', '/parse/classes/_User', { headers: appHeaders, body: { username: 'named-new', password: 'p-1-password' } })
  t.equal(signUp.status, 403, `POST /classes/_User stays closed (${signUp.text})`)
  const list = await kit.request('GET', '/parse/classes/_User', { headers: as(owner.token) })
  t.equal(list.status, 403, 'listing users stays closed: the rule names /classes/_User/*, not /classes/_User')
  const session = await kit.request('POST', '/parse/classes/_Session', { headers: as(owner.token), body: {} })
  t.equal(session.status, 403, '_Session stays closed')
})

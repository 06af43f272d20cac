// The login, sign-up and session routes (allowAuthRoutes) against a client
// that sends odd bodies, with the application's own _User model and its
// login triggers. A _User model declared on BaseModel made Parse Server build
// every user as a plain Parse.Object: a logged-in user's file upload answered
// 500 (Parse calls the user's _isLinked) and so did every handler's
// asCaller (getSessionToken); it is now refused at declaration.
import t from 'tap'
import Parse from 'parse/node'
import { AfterLogin, AfterLogout, asCaller, BaseModel, BeforeLogin, CloudFunction, ParseClass, ParseField, Route, type CloudRequest } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

const logins: string[] = []

@ParseClass('_User')
class Member extends Parse.User {
  @ParseField({ type: 'String' }) declare nick: string
  @ParseField({ type: 'Object' }) declare meta: Record<string, unknown>
  @BeforeLogin()
  static checked (request: Parse.Cloud.TriggerRequest) { logins.push(`before ${String(request.object.get('username'))}`) }

  @AfterLogin()
  static noted (request: Parse.Cloud.TriggerRequest) { logins.push(`after ${String(request.object.get('username'))}`) }

  @AfterLogout()
  static left () { logins.push('logout') }
}
void Member

@Route('me')
class MeFunctions {
  @CloudFunction({ methods: ['GET'], requiresAuth: true })
  static async whoami (request: CloudRequest) {
    const user = await new Parse.Query(Parse.User).get(String(request.user?.id), asCaller(request))
    return { id: user.id, isUser: request.user instanceof Parse.User }
  }
}
void MeFunctions

t.test('a _User model must extend Parse.User', async (t) => {
  t.throws(() => ParseClass('_User')(class Person extends BaseModel {}), /@ParseClass\('_User'\) on Person: a _User model must extend Parse\.User \(class Person extends Parse\.User\)/)
})

// The role helpers (addUsersToRole, seed memberships) call getUsers()/getRoles() on every _Role row, and the SDK's
// session and installation rows carry their own methods: a BaseModel registered there broke them.
t.test('a _Role, _Session or _Installation model must extend the SDK\'s class for it', async (t) => {
  for (const [className, sdk] of [['_Role', 'Parse.Role'], ['_Session', 'Parse.Session'], ['_Installation', 'Parse.Installation']]) {
    const pattern = new RegExp(`@ParseClass\\('${className}'\\) on Plain: a ${className} model must extend ${sdk.replace('.', '\\.')} \\(class Plain extends ${sdk.replace('.', '\\.')}\\)`)
    t.throws(() => ParseClass(className)(class Plain extends BaseModel {}), pattern, className)
  }
})

t.test('with a _User model on Parse.User, a logged-in user uploads files and handlers act as the caller; odd login bodies are 4xx', async (t) => {
  // /installations is closed by default; a push application opens it.
  const kit = await startKit(t, { allowAuthRoutes: true, allowedRoutes: [{ path: '/files/*', methods: ['POST'] }, { path: '/installations' }, { path: '/installations/*' }, { path: '/classes/_User/*', methods: ['PUT'] }] })
  const user = await kit.signUp('member-one')
  // Logged in through /login (signUp's session is opened with the master key): its triggers are checked below.
  const loggedIn = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'member-one', password: 'member-one-password-1' } })
  t.equal(loggedIn.status, 200, loggedIn.text)
  const as = { ...appHeaders, 'x-parse-session-token': loggedIn.json.sessionToken }
  const upload = await kit.request('POST', '/parse/files/note.txt', { headers: as, body: 'hello', contentType: 'text/plain' })
  t.equal(upload.status, 201, `a logged-in upload (${upload.text.slice(0, 200)})`)
  const me = await kit.request('GET', '/parse/me/whoami', { headers: as })
  t.equal(me.status, 200, me.text)
  t.same(me.json, { id: user.id, isUser: true }, 'asCaller reads with the caller\'s session')
  t.ok(logins.includes('before member-one') && logins.includes('after member-one'), `the login triggers ran (${logins.join(', ')})`)

  const odd: Array<[string, unknown]> = [
    ['/parse/login', { username: {}, password: 'x' }],
    ['/parse/login', { username: 'member-one', password: {} }],
    ['/parse/login', { username: { $regex: '.*' }, password: 'x' }],
    ['/parse/login', { email: { $ne: 1 }, password: 'x' }],
    ['/parse/users', { username: {}, password: 'x' }],
    ['/parse/users', { authData: { anonymous: { id: {} } } }],
    ['/parse/users', { authData: { anonymous: null } }],
    ['/parse/users', { authData: { nobody: { id: 'a' } } }],
    ['/parse/users', { authData: 'x' }],
    ['/parse/users', { username: 'member-two', password: 'p', email: ['a@b.c'] }]
  ]
  for (const [path, body] of odd) {
    const refused = await kit.request('POST', path, { headers: appHeaders, body })
    t.ok(refused.status >= 400 && refused.status < 500, `${path} ${JSON.stringify(body)} → ${refused.status} (${refused.text.slice(0, 160)})`)
    t.type(refused.json?.code, 'number')
  }
  // A user's own save (the SDK's user.save()) of a File without url inside an Object: before, stored, and from then
  // on Parse could not build that user for any request with its session (400 "Unknown error", login 500).
  const nestedFile = await kit.request('PUT', `/parse/classes/_User/${user.id}`, { headers: as, body: { meta: { file: { __type: 'File', name: 'x.txt' } } } })
  t.equal(nestedFile.status, 400, `a nested File without url on one's own user (${nestedFile.text.slice(0, 160)})`)
  t.match(nestedFile.json, { code: Parse.Error.INVALID_JSON, error: /meta holds a File without a url/ })
  const stillMe = await kit.request('GET', '/parse/users/me', { headers: as })
  t.equal(stillMe.status, 200, `the session still answers (${stillMe.text.slice(0, 160)})`)
  const again = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'member-one', password: 'member-one-password-1' } })
  t.equal(again.status, 200, `the user still logs in (${again.text.slice(0, 160)})`)

  // Parse refused an authData id that is not text at sign-up and on a save of the user (162) but stored it through a login with a password.
  const login = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'member-one', password: 'member-one-password-1', authData: { anonymous: { id: {} } } } })
  t.match({ status: login.status, json: login.json }, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /authData\.anonymous\.id must be a string \(got \{\}\)/ } }, `a login with an authData id that is not text (${login.text.slice(0, 160)})`)
  const ownAuthData = await kit.request('PUT', `/parse/classes/_User/${user.id}`, { headers: as, body: { authData: { anonymous: { id: [1] } } } })
  t.match({ status: ownAuthData.status, json: ownAuthData.json }, { status: 400, json: { code: Parse.Error.INVALID_VALUE } }, `as Parse refuses it on one's own user (${ownAuthData.text.slice(0, 160)})`)
  const linked = await kit.request('GET', `/parse/users/${user.id}`, { headers: masterHeaders })
  t.notOk(linked.json?.authData, `nothing linked (${linked.text.slice(0, 200)})`)

  const noSession = await kit.request('GET', '/parse/sessions/me', { headers: appHeaders })
  t.equal(noSession.status, 400, noSession.text)
  const badLogout = await kit.request('POST', '/parse/logout', { headers: { ...appHeaders, 'x-parse-session-token': 'r:nope' }, body: {} })
  t.equal(badLogout.status, 400, badLogout.text)
  const logout = await kit.request('POST', '/parse/logout', { headers: as, body: {} })
  t.equal(logout.status, 200, logout.text)
  t.ok(logins.includes('logout'), 'the afterLogout ran')

  // Parse read installationId as text (a TypeError) and looked a number deviceToken up in PostgreSQL: both 500.
  const installations: Array<[string, string, unknown, RegExp]> = [
    ['POST', '/parse/installations', { deviceType: 'ios', installationId: {} }, /installationId must be a string \(got \{\}\)/],
    ['POST', '/parse/installations', { deviceType: 'ios', installationId: 5 }, /installationId must be a string/],
    ['POST', '/parse/installations', { deviceType: 'ios', installationId: 'device-a', deviceToken: 5 }, /deviceToken must be a string \(got 5\)/],
    ['PUT', '/parse/installations/abc', { installationId: {} }, /installationId must be a string/]
  ]
  for (const [method, path, body, error] of installations) {
    const refused = await kit.request(method, path, { headers: appHeaders, body })
    t.equal(refused.status, 400, `${method} ${path} ${JSON.stringify(body)} → 400 (${refused.text.slice(0, 160)})`)
    t.match(refused.json, { code: Parse.Error.INVALID_JSON, error })
  }
  const batched = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'POST', path: '/parse/installations', body: { deviceType: 'ios', installationId: 7 } }] } })
  t.match({ status: batched.status, json: batched.json }, { status: 400, json: { code: Parse.Error.INVALID_JSON, error: /installationId must be a string/ } }, `inside a /batch (${batched.text.slice(0, 160)})`)
  // Without an email adapter the kit answers the email routes itself (119 naming the missing options); inside a
  // /batch Parse answered code 1 with its own wording.
  const resetInBatch = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'POST', path: '/parse/requestPasswordReset', body: { email: 'a@example.com' } }] } })
  t.match({ status: resetInBatch.status, json: resetInBatch.json }, { status: 400, json: { code: Parse.Error.OPERATION_FORBIDDEN, error: /not set up on this server: set Parse Server options emailAdapter/ } }, `a password reset inside a /batch (${resetInBatch.text.slice(0, 160)})`)
  const installed = await kit.request('POST', '/parse/installations', { headers: appHeaders, body: { deviceType: 'ios', installationId: 'device-b', deviceToken: 'token-b' } })
  t.equal(installed.status, 201, `an installation as the SDKs send it (${installed.text.slice(0, 160)})`)

  const stored = await kit.request('GET', `/parse/users/${user.id}`, { headers: masterHeaders })
  t.equal(stored.status, 200, 'the server still answers')
})

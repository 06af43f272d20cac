// What allowedRoutes opens, one test process for what were
// separate files (each process costs seconds of loading Parse Server before its
// first assertion); each part keeps its own kit(s) and options, and the classes of
// all parts are declared in the one process under distinct names:
// - restriction: this file's own tests (first part, its comment kept)
// - test/file-upload.test.ts (merged here): Parse's files route behind the kit: uploads of any content type answer at once …
import t, { type Test } from 'tap'
import { AUTH_ROUTES } from '../lib/access/restriction.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, asCaller, queryRows, type CloudRequest } from '../lib/index.js'

// ── restriction ──
// Route restriction against the real Parse Server on the embedded PostgreSQL, over real HTTP.
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
    // Parse's pages take the app id from their link; whether they are open is still the restriction's call.
    assertBlocked(t, await kit.request('GET', `/parse/apps/${APP_ID}/verify_email?token=x&username=a`), 'Parse\'s pages, not opened')
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
  const resetLinks: string[] = []
  const kit = await startKit(t, {
    allowedRoutes: [{ path: '/classes/Note', methods: ['GET'] }, { path: '/apps/*', methods: ['GET', 'POST'] }],
    // Parse's password reset email, its link and the pages it leads to (the last allowed route).
    parseServerOptions: {
      publicServerURL: 'http://mail.example.test/parse',
      appName: 'Restriction',
      emailAdapter: { sendMail () {}, sendPasswordResetEmail ({ link }: { link: string }) { resetLinks.push(link) } },
      // A page whose handler fails as no Parse.Error (as a module that cannot load at its first use does).
      pages: { customRoutes: [{ method: 'GET', path: 'broken', handler: () => { throw new TypeError('the page broke') } }] }
    }
  })
  await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { title: 'public' } })
  const read = await kit.request('GET', '/parse/classes/Note', { headers: appHeaders })
  t.equal(read.status, 200, read.text)
  t.equal(read.json.results[0].title, 'public')
  assertBlocked(t, await kit.request('POST', '/parse/classes/Note', { headers: appHeaders, body: {} }), 'POST not opened')
  assertBlocked(t, await kit.request('GET', '/parse/classes/Other', { headers: appHeaders }), 'other class not opened')

  t.test('opened, Parse\'s pages answer a browser following an email\'s link (no headers: the app id is in the link)', async (t) => {
    const user = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'forgetful', password: 'old-password-1', email: 'forgetful@example.test' } })
    t.equal(user.status, 201, user.text)
    t.equal((await kit.request('POST', '/parse/requestPasswordReset', { headers: masterHeaders, body: { email: 'forgetful@example.test' } })).status, 200)
    await until('the reset email', () => resetLinks.length > 0)
    const link = new URL(resetLinks[0])
    t.equal(link.pathname, `/parse/apps/${APP_ID}/request_password_reset`, 'the link names the app in its path')
    const page = await fetch(`${kit.origin}${link.pathname}${link.search}`, { redirect: 'manual' })
    t.equal(page.status, 200, 'the reset page answers')
    t.match(page.headers.get('content-type'), /^text\/html/, 'as HTML, which a browser renders')
    t.match(await page.text(), /<form/, 'with its form')
    const form = new URLSearchParams({ username: 'forgetful', token: link.searchParams.get('token')!, new_password: 'new-password-2' })
    const posted = await fetch(`${kit.origin}${link.pathname}`, { method: 'POST', body: form, redirect: 'manual' })
    t.equal(posted.status, 200, 'the form is taken')
    t.match(posted.headers.get('content-type'), /^text\/html/, 'its answer a page too')
    const login = await kit.request('POST', '/parse/login', { headers: masterHeaders, body: { username: 'forgetful', password: 'new-password-2' } })
    t.equal(login.status, 200, `the new password signs in: ${login.text}`)
    const broken = await kit.request('GET', `/parse/apps/${APP_ID}/broken`)
    t.equal(broken.status, 500, 'a page that fails unexpectedly answers 500')
    t.same(broken.json, { code: 1, error: 'Internal server error.' }, 'in the {code, error} shape (Parse\'s own says `message`)')
    for (const other of ['/parse/apps/someone-else/request_password_reset?token=x', '/parse/apps/choose_password?appId=someone-else']) {
      const refused = await fetch(`${kit.origin}${other}`)
      t.equal(refused.status, 403, `${other}: another app id is refused`)
      t.same(await refused.json(), { error: 'unauthorized' })
    }
  })
})

// ── from test/file-upload.test.ts ──
// Parse's files route behind the kit: uploads of any content type answer at once
// (never a hung request), a closed /files refuses at once, and a file's url is
// the same absolute {serverURL}/files/{appId}/{name} on every read path — REST,
// queryRows and the SDK inside a handler, the /functions twin — and serves the bytes.
@ParseClass('Album')
class Album extends BaseModel {
  @ParseField({ type: 'String' }) declare title: string
  @ParseField({ type: 'File' }) declare cover: Parse.File
}

@Route('albums')
export class AlbumFunctions {
  @CloudFunction({ methods: ['GET'] })
  static async albumRows (request: CloudRequest) {
    return queryRows(new Parse.Query(Album), request)
  }

  @CloudFunction({ methods: ['GET'] })
  static async albumObjects (request: CloudRequest) {
    return new Parse.Query(Album).find(asCaller(request))
  }
}

const SERVER_URL = 'http://files.example.test:8080/parse'

/** POST with a raw body (not JSON-encoded), and optionally no Content-Type at all. */
async function upload (origin: string, name: string, body: string | Uint8Array, contentType: string | undefined, headers: Record<string, string> = masterHeaders) {
  const response = await fetch(`${origin}/parse/files/${name}`, {
    method: 'POST',
    headers: contentType === undefined ? headers : { ...headers, 'content-type': contentType },
    body: new Blob([body as BlobPart]), // a Blob with no type: fetch adds no Content-Type of its own
    signal: AbortSignal.timeout(scaled(30_000))
  })
  const text = await response.text()
  let json: any
  try { json = JSON.parse(text) } catch {}
  return { status: response.status, text, json }
}

t.test('uploads through Parse\'s files route', async (t) => {
  const kit = await startKit(t, { serverURL: SERVER_URL })

  const cases: Array<[string, string | Uint8Array, string | undefined]> = [
    ['photo.txt', 'hello', 'text/plain'],
    ['note.json', '{"not":"parsed"}', 'text/plain'],
    ['pixel.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]), 'image/png'],
    ['blob.bin', new Uint8Array([0, 1, 2, 3, 254, 255]), 'application/octet-stream'],
    ['data.json', '{"a":1}', 'application/json'],
    ['untyped.bin', new Uint8Array([7, 0, 7]), undefined]
  ]
  for (const [name, body, type] of cases) {
    t.test(`${type ?? 'no content type'}: 201 { name, url }, and the url serves the bytes`, async (t) => {
      const created = await upload(kit.origin, name, body, type)
      t.equal(created.status, 201, created.text)
      t.match(created.json, { name: new RegExp(`_${name.replace('.', '\\.')}$`), url: String })
      t.equal(created.json.url, `${SERVER_URL}/files/${APP_ID}/${created.json.name}`)
      const served = await fetch(kit.origin + new URL(created.json.url).pathname, { headers: masterHeaders }) // /files is closed by default
      t.equal(served.status, 200)
      t.same(new Uint8Array(await served.arrayBuffer()), typeof body === 'string' ? new TextEncoder().encode(body) : body)
    })
  }

  t.test('without the master key /files is closed: 403 {code, error} at once', async (t) => {
    const refused = await upload(kit.origin, 'photo.txt', 'hello', 'text/plain', appHeaders)
    t.equal(refused.status, 403, refused.text)
    t.match(refused.json, { code: Parse.Error.OPERATION_FORBIDDEN, error: String })
  })
})

t.test('an opened /files takes uploads from a signed-in user without the master key', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [{ path: '/files/*', methods: ['POST'] }] })
  const user = await kit.signUp('uploader')
  const created = await upload(kit.origin, 'open.txt', 'hello', 'text/plain', { ...appHeaders, 'x-parse-session-token': user.token })
  t.equal(created.status, 201, created.text)
  t.match(created.json, { name: /_open\.txt$/, url: /\/parse\/files\/test-app\/.+_open\.txt$/ })
})

t.test('a file\'s url is {serverURL}/files/{appId}/{name} on every read path', async (t) => {
  const kit = await startKit(t, { serverURL: SERVER_URL, allowedRoutes: [{ path: '/classes/Album', methods: ['GET'] }] })
  const created = await upload(kit.origin, 'cover.txt', 'cover bytes', 'text/plain')
  t.equal(created.status, 201, created.text)
  const url = `${SERVER_URL}/files/${APP_ID}/${created.json.name}`
  const saved = await kit.request('POST', '/parse/classes/Album', {
    headers: masterHeaders,
    body: { title: 'one', cover: { __type: 'File', name: created.json.name } }
  })
  t.equal(saved.status, 201, saved.text)
  const expected = { __type: 'File', name: created.json.name, url }

  const rest = await kit.request('GET', '/parse/classes/Album', { headers: appHeaders })
  t.equal(rest.status, 200, rest.text)
  t.same(rest.json.results[0].cover, expected, 'REST find')
  // Parse works its mount out from the URL's length before and after decoding: a percent-encoded query once shifted it.
  const where = encodeURIComponent(JSON.stringify({ title: 'one' }))
  const filtered = await kit.request('GET', `/parse/classes/Album?where=${where}`, { headers: appHeaders })
  t.equal(filtered.status, 200, filtered.text)
  t.same(filtered.json.results[0].cover, expected, 'REST find with an encoded query')
  const rows = await kit.request('GET', '/parse/albums/albumRows', { headers: appHeaders })
  t.equal(rows.status, 200, rows.text)
  t.same(rows.json.results[0].cover, expected, 'queryRows in a handler')
  const objects = await kit.request('GET', '/parse/albums/albumObjects', { headers: appHeaders })
  t.equal(objects.status, 200, objects.text)
  t.same(objects.json[0].cover, expected, 'Parse.Query in a handler')
  // What Parse.Cloud.run sends.
  const run = await kit.request('POST', '/parse/functions/albumObjects', { headers: appHeaders, body: {} })
  t.equal(run.status, 200, run.text)
  t.same(run.json.result[0].cover, expected, 'the /functions twin (Parse.Cloud.run)')

  const served = await fetch(kit.origin + new URL(url).pathname, { headers: masterHeaders })
  t.equal(served.status, 200)
  t.equal(await served.text(), 'cover bytes')
})

t.test('a file url serves without headers once GET /files is opened, as Parse serves it (<img src>)', async (t) => {
  const kit = await startKit(t, { serverURL: SERVER_URL, allowedRoutes: [{ path: '/files/*', methods: ['GET'] }] })
  const created = await upload(kit.origin, 'open.txt', 'shown', 'text/plain')
  t.equal(created.status, 201, created.text)
  const path = new URL(created.json.url).pathname
  const served = await fetch(kit.origin + path)
  t.equal(served.status, 200, 'no app id header: the path names the app')
  t.equal(await served.text(), 'shown')
  const otherApp = await fetch(kit.origin + path.replace(`/files/${APP_ID}/`, '/files/another-app/'))
  t.equal(otherApp.status, 403, 'a path naming another app is refused')
  const wrongHeader = await fetch(kit.origin + path, { headers: { 'x-parse-application-id': 'another-app' } })
  t.equal(wrongHeader.status, 403, 'a header naming another app still wins over the path')
  const upload403 = await upload(kit.origin, 'no-headers.txt', 'x', 'text/plain', {})
  t.equal(upload403.status, 403, 'an upload still needs the app id header')
})

t.test('a file url without headers is refused while /files is closed', async (t) => {
  const kit = await startKit(t, { serverURL: SERVER_URL })
  const created = await upload(kit.origin, 'closed.txt', 'hidden', 'text/plain')
  t.equal(created.status, 201, created.text)
  const refused = await fetch(kit.origin + new URL(created.json.url).pathname)
  t.equal(refused.status, 403)
  t.match(await refused.json(), { code: Parse.Error.OPERATION_FORBIDDEN, error: String })
})

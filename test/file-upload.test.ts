// Parse's files route behind the kit: uploads of any content type answer at once
// (never a hung request), a closed /files refuses at once, and a file's url is
// the same absolute {serverURL}/files/{appId}/{name} on every read path — REST,
// queryRows and the SDK inside a handler, the /functions twin — and serves the bytes.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, asCaller, queryRows, type CloudRequest } from '../lib/index.js'
import { APP_ID, appHeaders, masterHeaders, startKit } from './helpers/kit.js'

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
    signal: AbortSignal.timeout(30_000)
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

// Hostile requests against the gate over a real listener: what an application
// opens with allowedRoutes must not open more than it lists.
import t from 'tap'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, type CloudRequest } from '../lib/index.js'
import { APP_ID, appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { rawRequest } from './helpers/raw-http.js'
import { createRequire } from 'node:module'

// Parse's own WebSocket library (Node 20 has no global WebSocket).
interface Socket { on (event: string, listener: (data?: unknown) => void): void, send (text: string): void, close (): void }
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string) => Socket

// One server for the file: /batch and one class opened, LiveQuery on.
let shared: Promise<Kit> | undefined
const sharedKit = () => {
  shared ??= startKit(t, {
    allowedRoutes: [{ path: '/batch', methods: ['POST'] }, { path: '/classes/Comment', methods: ['GET', 'POST'] }],
    liveQuery: { classNames: ['Probe'] }
  })
  return shared
}

t.test('an opened /batch does not open what its inner requests name', async (t) => {
  const kit = await sharedKit()
  // A user another client must not list.
  await kit.signUp('batch-victim')
  const batch = (requests: unknown[]) => kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests } })

  const inner = [
    { method: 'GET', path: '/parse/users' },
    { method: 'GET', path: '/parse/classes/_User' },
    { method: 'GET', path: '/parse/classes/Comment/../_User' },
    { method: 'GET', path: '/parse/classes/Comment/../../users' },
    { method: 'GET', path: '/parse/schemas' },
    { method: 'GET', path: '/parse//roles' },
    { method: 'DELETE', path: '/parse/classes/Comment' },
    { method: 'POST', path: '/parse/classes/Comment/x/../../Other' }
  ]
  for (const request of inner) {
    const result = await batch([request])
    t.equal(result.status, 403, `${request.method} ${request.path} inside /batch → 403 (${result.text.slice(0, 120)})`)
    t.equal(result.json?.code, 119, `${request.method} ${request.path} → code 119`)
    t.notMatch(result.text, /batch-victim/, `${request.path}: no user row leaks`)
  }
  const mixed = await batch([{ method: 'GET', path: '/parse/classes/Comment' }, { method: 'GET', path: '/parse/users' }])
  t.equal(mixed.status, 403, 'one closed inner request refuses the whole batch')

  const allowed = await batch([{ method: 'GET', path: '/parse/classes/Comment' }])
  t.equal(allowed.status, 200, 'inner requests the allow-list opens still run')
  t.ok(Array.isArray(allowed.json), 'Parse answers the batch')

  const master = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'GET', path: '/parse/users' }] } })
  t.equal(master.status, 200, 'the master key still batches anything')
  t.match(master.text, /batch-victim/)
})

t.test('an opened /batch resolves its inner paths from the url the batch was sent to, as Parse does', async (t) => {
  const kit = await sharedKit()
  const port = Number(new URL(kit.origin).port)
  // Parse strips from each inner path the batch's own url minus "/batch", query string and
  // encoding included: a url spelled otherwise than "/parse/batch" moves that prefix.
  const spellings = [
    { url: '/parse/batch?/batch', inner: '/parse/batch?' },
    { url: '/parse/batch?q=/parse/batch', inner: '/parse/batch?q=/parse' },
    { url: '/%70arse/batch', inner: '/%70arse' }
  ]
  for (const { url, inner } of spellings) {
    for (const closed of ['/classes/Hidden', '/users']) {
      const body = JSON.stringify({ requests: [{ method: 'POST', path: `${inner}${closed}`, body: { username: `smuggled${spellings.findIndex((s) => s.url === url)}`, password: 'p-1', note: 'smuggled' } }] })
      const result = await rawRequest(port, `POST ${url} HTTP/1.1`, { 'x-parse-application-id': APP_ID, 'content-type': 'application/json' }, body)
      t.equal(result.status, 403, `POST ${url} with POST ${inner}${closed} inside → 403 (${result.body.slice(0, 160)})`)
    }
  }
  for (const url of ['/parse/batch/', '/parse/batch?x=1', '/parse/BATCH']) {
    for (const headers of [appHeaders, masterHeaders]) {
      const result = await kit.request('POST', url, { headers, body: { requests: [{ method: 'GET', path: '/parse/classes/Comment' }] } })
      t.equal(result.status, 400, `POST ${url} (which Parse cannot resolve inner paths from) → 400, not Parse's 500 (${result.text.slice(0, 160)})`)
      t.match(result.json, { code: 102, error: /a batch is sent to \/parse\/batch/ })
    }
  }
  const hidden = await kit.request('GET', '/parse/classes/Hidden', { headers: masterHeaders })
  t.same(hidden.json?.results ?? [], [], 'no row was created in the closed class')
  const users = await kit.request('GET', '/parse/users?where={"username":{"$regex":"^smuggled"}}', { headers: masterHeaders })
  t.same(users.json?.results ?? [], [], 'no user signed up through the closed /users')
})

const calls = { limited: 0 }

@ParseClass('Probe')
class Probe extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

@Route(Probe)
class ProbeFunctions {
  @CloudFunction({ methods: ['POST'], validation: { fields: { count: { type: Number }, mode: { type: String, options: ['a', 'b'] } } } })
  static echoProbe (request: CloudRequest) { return { params: request.params } }

  @CloudFunction({ methods: ['GET'], validation: { fields: { id: { type: String, required: true } } } })
  static readProbe (request: CloudRequest) { return { params: request.params } }

  @CloudFunction({ methods: ['GET', 'POST'], rateLimit: { windowMs: 60_000, max: 2 } })
  static limitedProbe () { calls.limited++; return 'ok' }
}
void Probe; void ProbeFunctions

t.test('declared fields are checked wherever they arrive', async (t) => {
  const kit = await sharedKit()
  const json = { ...appHeaders, 'content-type': 'application/json' }
  for (const url of ['/parse/probes/echoProbe', '/parse/functions/echoProbe']) {
    const typed = await kit.request('POST', `${url}?count=many&mode=z`, { headers: appHeaders, body: {} })
    t.equal(typed.status, 400, `${url}: a declared field in the query string of a POST is refused (${typed.text})`)
    t.equal(typed.json?.code, 142)
    const repeated = await kit.request('POST', `${url}?mode=a&mode=b`, { headers: appHeaders, body: {} })
    t.equal(repeated.status, 400, `${url}: a repeated declared field in the query is refused (${repeated.text})`)
    const plain = await kit.request('POST', `${url}?page=2`, { headers: appHeaders, body: { count: 3, mode: 'a' } })
    t.same(plain.json?.params ?? plain.json?.result?.params, { page: '2', count: 3, mode: 'a' }, `${url}: undeclared query params and body fields still arrive`)
  }
  const port = Number(new URL(kit.origin).port)
  for (const url of ['/parse/probes/readProbe?id=abc', '/parse/functions/readProbe?id=abc']) {
    const withBody = await rawRequest(port, `GET ${url} HTTP/1.1`, { ...json, 'x-parse-application-id': APP_ID }, JSON.stringify({ id: { $gt: '' } }))
    const params = withBody.json?.params ?? withBody.json?.result?.params
    t.not(typeof params?.id, 'object', `${url}: a GET body does not replace a checked query field (${withBody.body})`)
  }
})

t.test('a masterKeyIps range Node cannot compile fails at boot, not as a 500 per master-key call', async (t) => {
  for (const range of ['127.0.0.1/33', '10.0.0.0/abc', '::1/200']) {
    await t.rejects(
      startKit(t, { parseServerOptions: { masterKeyIps: [range] } }),
      { message: /masterKeyIps.*127\.0\.0\.1\/33|masterKeyIps.*10\.0\.0\.0\/abc|masterKeyIps.*::1\/200/ },
      `${range} is refused at boot naming the option`
    )
  }
})

t.test('one rate-limit counter whatever the spelling of the route', async (t) => {
  const kit = await sharedKit()
  const port = Number(new URL(kit.origin).port)
  const spellings = [
    'GET /parse/probes/limitedProbe', 'HEAD /parse/probes/limitedProbe', 'GET /parse/functions/limitedProbe', 'POST /parse/functions/limitedProbe',
    'GET /parse/probes/limited%50robe', 'GET /parse/functions/limited%50robe', 'GET /parse/probes/limitedProbe/', 'GET /parse/PROBES/limitedProbe',
    'GET /parse/functions/limitedProbe/', 'GET /parse/functions/LIMITEDPROBE', 'POST /parse/probes/limitedProbe?x=1', 'GET /%70arse/probes/limitedProbe'
  ]
  const statuses: number[] = []
  for (const spelling of spellings) {
    const [method, url] = spelling.split(' ')
    const body = method === 'POST' ? '{}' : undefined
    const result = await rawRequest(port, `${method} ${url} HTTP/1.1`, { 'x-parse-application-id': APP_ID, ...(body ? { 'content-type': 'application/json' } : {}) }, body)
    statuses.push(result.status)
    t.not(result.status, 500, `${spelling} → ${result.status}`)
  }
  t.equal(calls.limited, 2, `the function ran exactly max times across every spelling (statuses ${statuses.join(',')})`)
})

t.test('a declared route spelled another way is a 404 naming the route, not a 405 for the verb it takes', async (t) => {
  const kit = await sharedKit()
  for (const url of ['/parse/probes/readProbe/?id=a', '/parse/PROBES/readProbe?id=a', '/parse/probes/READPROBE?id=a']) {
    const result = await kit.request('GET', url, { headers: appHeaders })
    t.equal(result.status, 404, `GET ${url} → 404 (${result.text})`)
    t.match(result.json?.error, /Did you mean \/parse\/probes\/readProbe\?/, `GET ${url} names the declared route`)
  }
  const wrongVerb = await kit.request('PUT', '/parse/PROBES/readProbe', { headers: appHeaders, body: {} })
  t.equal(wrongVerb.status, 405, 'a verb the function does not take still answers 405')
})

t.test('LiveQuery checks the application id like every other path', async (t) => {
  const kit = await sharedKit()
  const url = kit.origin.replace(/^http/, 'ws') + '/parse'
  const connectAs = (message: Record<string, unknown>) => new Promise<any>((resolve, reject) => {
    const socket = new WebSocket(url)
    socket.on('open', () => socket.send(JSON.stringify({ op: 'connect', ...message })))
    socket.on('message', (data) => { resolve(JSON.parse(String(data))); socket.close() })
    socket.on('error', reject)
  })
  const wrong = await connectAs({ applicationId: 'someone-else' })
  t.equal(wrong.op, 'error', `a wrong application id is refused (${JSON.stringify(wrong)})`)
  const missing = await connectAs({})
  t.equal(missing.op, 'error', `a missing application id is refused (${JSON.stringify(missing)})`)
  const right = await connectAs({ applicationId: APP_ID })
  t.equal(right.op, 'connected', 'the application id connects')
})

t.test('a verb Fastify has no route for under the mount answers {code, error} from the gate', async (t) => {
  const kit = await sharedKit()
  const port = Number(new URL(kit.origin).port)
  for (const line of ['PROPFIND /parse/classes/Comment', 'SEARCH /parse/probes/readProbe', 'MKCOL /parse/', 'REPORT /parse/functions/hello']) {
    const result = await rawRequest(port, `${line} HTTP/1.1`, { 'x-parse-application-id': APP_ID })
    t.equal(result.status, 400, `${line} → 400`)
    t.equal(result.json?.code, 102, `${line} → code 102 (${result.body})`)
    t.match(result.json?.error, new RegExp(`method ${line.split(' ')[0]} is not served`), `${line}: the error names the method`)
  }
})

t.test('Parse\'s answers do not name the framework that serves them (X-Powered-By)', async (t) => {
  const kit = await sharedKit()
  const answers = [
    await kit.request('GET', '/parse/classes/Comment', { headers: appHeaders }),
    await kit.request('GET', `/parse/files/${APP_ID}/missing.txt`, {}),
    await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [] } })
  ]
  for (const answer of answers) t.equal(answer.headers.get('x-powered-by'), null, `${answer.status}: no X-Powered-By (${answer.text.slice(0, 80)})`)
})

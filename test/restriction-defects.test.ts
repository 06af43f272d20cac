// The restriction's details, each tried over real HTTP against the real server:
// where the master key is honoured from, verbs on the /functions twin, the app id
// before anything else, secrets kept out of logs, one body limit and request
// timeouts, 404 for typos, check order and messages of declared endpoints.
import t from 'tap'
import { Writable } from 'node:stream'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, kitServerOptions, KIT_SERVER_DEFAULTS, type CloudRequest } from '../lib/index.js'
import { PARSE_DEFAULT_MASTER_KEY_IPS, addressAllowed, masterKeyVerdict, readCredentials } from '../lib/access/credentials.js'
import { redactUrl } from '../lib/host/server-options.js'
import { mapRequestTarget } from '../lib/access/request-target.js'
import { closestPath } from '../lib/suggest.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'
import { rawRequest } from './helpers/raw-http.js'
import net from 'node:net'

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
      // The client gives up after 20 s of dribbling (the server's limit here is 1.5 s).
      const giveUp = setTimeout(() => socket.destroy(), 20_000)
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

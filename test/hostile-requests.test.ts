// Hostile and malformed requests against a real listener, one test process for
// what were separate files (each process costs seconds of loading Parse Server):
// - test/edge-answers.test.ts: slow bodies, parser refusals, failed batches answer right;
// - test/auth-limits.test.ts: password guessing is limited per username and per address;
// - test/lazy-validation.test.ts: input schemas compiled on first use validate as at boot
//   (last: its deliberately broken route declaration would refuse any later kit).
// Each part boots its own kit with its own options; the classes of all parts are
// declared in the one process, under distinct names.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, Type, ParseClass, ParseField, kitServerOptions, Route, type CloudRequest } from '../lib/index.js'
import { boundedCall, CallTimeoutError } from '../lib/storage/call-bound.js'
import { DEFAULT_TIMEOUT_SECONDS } from '../lib/storage/database.js'
import { isDatabaseUnavailable } from '../lib/storage/unavailable.js'
import { APP_ID, appHeaders, masterHeaders, startKit, MASTER_KEY, tempDir } from './helpers/kit.js'
import { resolveOptions } from '../lib/options.js'
import { checkCloudFunctionOptions } from '../lib/routing/options.js'
import { inputSchema } from '../lib/routing/schema.js'
import { lazyValidation } from '../lib/routing/lazy-validation.js'
import { AttemptCounters, ATTEMPT_COUNTERS_CAPACITY } from '../lib/host/attempt-counters.js'
import { rmSync } from 'node:fs'
import Fastify from 'fastify'
import { kitPlugin } from '../plugin.js'
import { resetKitConfig } from '../lib/config.js'
import { clusterFromTemplate } from './helpers/pg-template.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { scaled } from './helpers/time-scale.js'

// ── from test/edge-answers.test.ts ──
// Edges where the server used to answer with the wrong status or shape: a slow
// request body (408, the kit's shape), refusals from Node's parser that close
// the connection (Connection: close, so a keep-alive client never reuses a dead
// socket), a failed transactional /batch (the inner error, a 4xx, nothing
// stored), and databaseTimeout as the bound of a whole database call.
@ParseClass('Edge', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: {}, delete: {}, addField: {} } })
class Edge extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
}

class EdgeFunctions {
  @CloudFunction()
  static fails () { throw new Parse.Error(Parse.Error.SCRIPT_FAILED, 'this function always fails') }

  @CloudFunction()
  static echo (request: { params: Record<string, unknown> }) { return request.params }
}

/** Writes the head and the first byte of a 100000-byte body, then one byte every `gapMs`; resolves with everything received. */
function slowBody (port: number, path: string, gapMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    let timer: NodeJS.Timeout | undefined
    const giveUp = setTimeout(() => socket.destroy(), scaled(60_000))
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: ${APP_ID}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`)
      timer = setInterval(() => { if (!socket.destroyed) socket.write(' ') }, gapMs)
    })
    socket.on('data', (chunk) => { received += String(chunk) })
    socket.on('error', () => {})
    socket.on('close', () => { clearInterval(timer); clearTimeout(giveUp); resolve(received) })
  })
}

function head (raw: string): { status: number, headers: Record<string, string>, body: any } {
  const [top, body] = raw.split('\r\n\r\n')
  const lines = top.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  let json: unknown
  try { json = JSON.parse(body) } catch {}
  return { status: Number(lines[0].split(' ')[1]), headers, body: json }
}

/** One request on a keep-alive agent with a single socket, answered or failed. */
function viaAgent (agent: http.Agent, port: number, headers: Record<string, string>): Promise<{ status?: number, connection?: string, error?: string }> {
  return new Promise((resolve) => {
    const request = http.request({ port, host: '127.0.0.1', path: '/parse/functions/echo', method: 'POST', agent, headers: { ...appHeaders, 'content-type': 'application/json', ...headers } }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode, connection: response.headers.connection }))
    })
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    request.end('{}')
  })
}

t.test('edge answers', async (t) => {
  const { logger: _logger, ...server } = kitServerOptions({ requestTimeout: 1_500 })
  const kit = await startKit(t, { models: [Edge], functions: [EdgeFunctions], allowedRoutes: [{ path: '/batch', methods: ['POST'] }, { path: '/classes/*' }, { path: '/functions/*', methods: ['POST'] }] }, server)
  const port = Number(new URL(kit.origin).port)

  t.test('5. a slow request body is answered 408 in the kit\'s shape, and the connection closes', async (t) => {
    const paths = ['/parse/functions/echo', '/parse/classes/Edge']
    const started = Date.now()
    const answers = await Promise.all(paths.map((path) => slowBody(port, path, 400)))
    t.ok(Date.now() - started < 20_000, 'ended near the 1.5 s bound, not at Node\'s 30 s check')
    for (const [index, path] of paths.entries()) {
      const answer = head(answers[index])
      t.equal(answer.status, 408, `${path}: 408`)
      t.equal(answer.headers.connection, 'close', `${path}: Connection: close`)
      t.same(answer.body, { code: 124, error: 'The request (headers and body) did not arrive in time.' }, `${path}: {code, error}`)
    }
  })

  t.test('6. headers too large: 431 with Connection: close; a keep-alive client goes on without a reset', async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    const statuses: Array<number | string | undefined> = []
    for (let round = 0; round < 20; round++) {
      statuses.push((await viaAgent(agent, port, {})).status)
      const refused = await viaAgent(agent, port, { 'x-padding': 'p'.repeat(20_000) })
      statuses.push(refused.status ?? refused.error)
      if (round === 0) {
        t.equal(refused.status, 431)
        t.equal(refused.connection, 'close', 'the refusal says the connection closes')
      }
    }
    t.same(statuses.filter((status) => status !== 200 && status !== 431), [], 'no request failed with a reset (40 on one keep-alive socket)')
  })

  t.test('a doubled slash before the mount is refused in the kit\'s shape, not Fastify\'s 404', async (t) => {
    for (const url of ['//parse/functions/echo', '//parse/classes/Edge', '///parse', '//parse']) {
      const answer = await kit.request('POST', url, { headers: appHeaders, body: {} })
      t.same([answer.status, answer.json], [400, { code: 102, error: 'Request refused: empty path segments (//) are refused.' }], url)
    }
    const elsewhere = await kit.request('GET', '//elsewhere', { headers: appHeaders })
    t.equal(elsewhere.status, 404, 'a path outside the mount stays the application\'s')
  })

  t.test('a body nested deeper than Parse can walk is refused 400 in the kit\'s shape, not Parse\'s 500', async (t) => {
    const nest = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
    const refused = { status: 400, code: 107, error: /nested deeper than 64 levels/ }
    for (const headers of [appHeaders, masterHeaders]) {
      const who = headers === masterHeaders ? 'master key' : 'client'
      const save = await kit.request('POST', '/parse/classes/Edge', { headers, body: `{"label":"deep","x":${nest(3000)}}` })
      t.match({ status: save.status, ...save.json }, refused, `${who}: a save 3001 levels deep (${save.text.slice(0, 100)})`)
      const inner = await kit.request('POST', '/parse/batch', { headers, body: `{"requests":[{"method":"POST","path":"/parse/classes/Edge","body":{"x":${nest(3000)}}}]}` })
      t.match({ status: inner.status, ...inner.json }, refused, `${who}: the same inside a /batch (${inner.text.slice(0, 100)})`)
    }
    // Top-level body 1, its "x" 2, …: 64 levels are taken.
    const deepest = await kit.request('POST', '/parse/classes/Edge', { headers: masterHeaders, body: `{"label":"64 levels","x":${nest(63)}}` })
    t.equal(deepest.status, 201, `a body 64 levels deep is saved (${deepest.text.slice(0, 100)})`)
    const over = await kit.request('POST', '/parse/classes/Edge', { headers: masterHeaders, body: `{"label":"65 levels","x":${nest(64)}}` })
    t.match({ status: over.status, ...over.json }, refused, 'one level more is refused')
  })

  t.test('a find whose where, limit or skip Parse cannot run is refused 400, not Parse\'s 500', async (t) => {
    const find = (query: string) => kit.request('GET', `/parse/classes/Edge?${query}`, { headers: appHeaders })
    const cases: Array<[string, RegExp]> = [
      ['where=null', /where must be a JSON object \(got null\)/],
      [`where=${encodeURIComponent('{"$or":[null]}')}`, /\$or must be a list of conditions/],
      [`where=${encodeURIComponent('{"$and":"x"}')}`, /\$and must be a list of conditions/],
      [`where=${encodeURIComponent('{"label":{"$inQuery":{"className":"Edge","where":{"$or":[1]}}}}')}`, /\$or must be a list of conditions/],
      ['limit=abc', /limit must be a whole number/],
      ['count=1&limit=0&where=null', /where must be a JSON object/]
    ]
    for (const [query, error] of cases) {
      const answer = await find(query)
      t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error }, `GET ?${decodeURIComponent(query)} (${answer.text.slice(0, 100)})`)
    }
    const overridden = await kit.request('POST', '/parse/classes/Edge', { headers: masterHeaders, body: { _method: 'GET', where: null } })
    t.match({ status: overridden.status, ...overridden.json }, { status: 400, code: 102, error: /where must be a JSON object/ }, 'a POST overridden to GET, master key or not')
    // A search box's text taken as a pattern: PostgreSQL cannot compile it.
    for (const query of [`where=${encodeURIComponent('{"label":{"$regex":"["}}')}`, `count=1&limit=0&where=${encodeURIComponent('{"label":{"$regex":"a(b"}}')}`]) {
      const answer = await find(query)
      t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error: /\$regex is not a valid regular expression/ }, `GET ?${decodeURIComponent(query)} (${answer.text.slice(0, 100)})`)
    }
    const escaped = await find(`where=${encodeURIComponent('{"label":{"$regex":"\\\\["}}')}`)
    t.equal(escaped.status, 200, `an escaped pattern runs (${escaped.text.slice(0, 100)})`)
    const fine = await find(`where=${encodeURIComponent('{"$or":[{"label":"a"},{"label":"b"}]}')}&limit=5&skip=0`)
    t.equal(fine.status, 200, `a well-formed find still runs (${fine.text.slice(0, 100)})`)
  })

  t.test('an ACL entry that is not an object is refused 400 (123), not Parse\'s 500', async (t) => {
    const refused = { status: 400, code: 123, error: /the ACL entry for "\*" must be an object such as \{"read": true\} \(got null\)/ }
    const made = await kit.request('POST', '/parse/classes/Edge', { headers: appHeaders, body: { label: 'acl' } })
    t.equal(made.status, 201, made.text)
    const writes: Array<[string, string, Record<string, string>, unknown]> = [
      ['POST', '/parse/classes/Edge', appHeaders, { label: 'x', ACL: { '*': null } }],
      ['PUT', `/parse/classes/Edge/${made.json.objectId}`, masterHeaders, { ACL: { '*': null } }],
      ['POST', '/parse/users', masterHeaders, { username: 'null-acl', password: 'p-1', ACL: { '*': null } }],
      ['POST', '/parse/batch', appHeaders, { transaction: true, requests: [{ method: 'POST', path: '/parse/classes/Edge', body: { ACL: { '*': null } } }] }]
    ]
    for (const [method, url, headers, body] of writes) {
      const answer = await kit.request(method, url, { headers, body })
      t.match({ status: answer.status, ...answer.json }, refused, `${method} ${url} (${answer.text.slice(0, 120)})`)
    }
    const fine = await kit.request('POST', '/parse/classes/Edge', { headers: appHeaders, body: { label: 'y', ACL: { '*': { read: true } } } })
    t.equal(fine.status, 201, `a well-formed ACL is saved (${fine.text.slice(0, 100)})`)
  })

  t.test('7. a failed transactional /batch answers the inner error with a 4xx and stores nothing', async (t) => {
    const batch = (transaction: boolean) => kit.request('POST', '/parse/batch', {
      headers: appHeaders,
      body: { transaction, requests: [{ method: 'POST', path: '/parse/classes/Edge', body: { label: `in a ${transaction ? 'transaction' : 'batch'}` } }, { method: 'POST', path: '/parse/functions/fails', body: {} }] }
    })
    const transactional = await batch(true)
    t.equal(transactional.status, 400, 'a 4xx, not 500')
    // Parse runs a batch's inner requests itself: a declared function is unknown there (141 either way).
    t.equal(transactional.json.code, 141, 'the inner failure\'s code')
    t.match(transactional.json.error, /fails/, 'and its message')
    const stored = await kit.request('GET', `/parse/classes/Edge?where=${encodeURIComponent(JSON.stringify({ label: 'in a transaction' }))}`, { headers: masterHeaders })
    t.same(stored.json.results, [], 'the other write was rolled back')
    const plain = await batch(false)
    t.equal(plain.status, 200, 'without transaction: 200, each answer in place')
    t.equal(plain.json[1].error.code, 141)
    const fine = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'POST', path: '/parse/classes/Edge', body: { label: 'committed' } }] } })
    t.equal(fine.status, 200, 'a transactional batch that succeeds is unchanged')
    t.ok(fine.json[0].success.objectId)
  })
})

t.test('8. databaseTimeout bounds a whole call (pool wait included); default 10 s', async (t) => {
  t.equal(DEFAULT_TIMEOUT_SECONDS, 10, 'a default below common 15–30 s client timeouts')
  const never = boundedCall(() => new Promise(() => {}), 200)
  const started = Date.now()
  const error = await (never() as Promise<unknown>).then(() => undefined, (reason: unknown) => reason)
  t.ok(error instanceof CallTimeoutError, 'a call that never settles is answered')
  t.ok(Date.now() - started >= 190, 'at the bound')
  t.ok(isDatabaseUnavailable(error), 'as the database not answering (503)')
  const quick = boundedCall(async (value: unknown) => value, 200)
  t.equal(await quick('answer'), 'answer', 'a call within the bound is unchanged')
})

// ── from test/auth-limits.test.ts ──
// Password guessing on the auth routes allowAuthRoutes opens: attempts are
// limited per username (whatever the address) and per address (whatever the
// username), inner /batch requests included, answered 429 with Retry-After;
// and Parse's accountLockout is on by default. Addresses come from
// X-Forwarded-For (Fastify's trustProxy), as behind a load balancer.
const from = (address: string) => ({ ...appHeaders, 'x-forwarded-for': address })

t.test('accountLockout is on by default with allowAuthRoutes, and configurable', async (t) => {
  const base = { appId: APP_ID, masterKey: MASTER_KEY }
  t.same(resolveOptions({ ...base, allowAuthRoutes: true }).parseServerOptions.accountLockout, { threshold: 10, duration: 5 })
  t.same(resolveOptions({ ...base, allowAuthRoutes: true, parseServerOptions: { accountLockout: { threshold: 3 } } }).parseServerOptions.accountLockout, { threshold: 3, duration: 5 })
  t.equal(resolveOptions({ ...base, allowAuthRoutes: true, parseServerOptions: { accountLockout: false } }).parseServerOptions.accountLockout, false, 'false turns it off')
  t.equal(resolveOptions(base).parseServerOptions.accountLockout, undefined, 'routes closed: Parse\'s default')
  t.same(resolveOptions(base).authRateLimit, { max: 10, maxPerAddress: 100, windowMs: 60_000 }, 'rate limit defaults')
  t.equal(resolveOptions({ ...base, authRateLimit: false }).authRateLimit, false)
  t.throws(() => resolveOptions({ ...base, authRateLimit: { max: 0 } }), { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "authRateLimit.max": must be a whole number of attempts per username from 1 to 1000000 (got 0)' })
  t.throws(() => resolveOptions({ ...base, authRateLimit: { mx: 1 } as never }), { code: 'FPK_ERR_OPTION_UNKNOWN', message: /"authRateLimit\.mx": unknown option; did you mean "max"\?/ })
  t.throws(() => resolveOptions({ ...base, authRateLimit: true as never }), /"authRateLimit": must be false or \{ max\?, maxPerAddress\?, windowMs\? \} \(got true\)/)
})

t.test('without Redis, a junk flood of more names than the counters hold leaves a counted account\'s counter', async (t) => {
  const counters = new AttemptCounters()
  const windowMs = 60_000
  for (let i = 0; i < 4; i++) counters.incr('auth|name|victim', windowMs)
  for (let i = 0; i < ATTEMPT_COUNTERS_CAPACITY + 5_200; i++) counters.incr(`auth|name|junk-${i}@example.com`, windowMs)
  t.equal(counters.size, ATTEMPT_COUNTERS_CAPACITY, 'bounded')
  t.equal(counters.incr('auth|name|victim', windowMs).current, 5, 'the victim\'s counter is still there, over a limit of 3')
  // Expired counters go first, whatever their count.
  const later = new AttemptCounters(2)
  later.incr('a', 1_000, 0)
  later.incr('a', 1_000, 0)
  later.incr('b', 5_000, 0)
  later.incr('c', 5_000, 2_000)
  t.equal(later.incr('b', 5_000, 2_000).current, 2, 'the expired repeated counter made room, not a live one')
})

t.test('auth routes under attack', async (t) => {
  const kit = await startKit(t, {
    allowAuthRoutes: true,
    // Parse's pages too: their forms (password reset, resend verification) are sign-in attempts.
    allowedRoutes: [{ path: '/batch', methods: ['POST'] }, { path: '/apps/*', methods: ['POST'] }],
    authRateLimit: { max: 3, maxPerAddress: 6, windowMs: 60_000 },
    parseServerOptions: { accountLockout: { threshold: 2, duration: 1 } }
  }, { trustProxy: true })
  const create = async (username: string) => {
    const answer = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username, password: 'right-password-1' } })
    if (answer.status !== 201) throw new Error(answer.text)
  }
  await create('victim')
  await create('locked')
  const answer = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'TwoNames', email: 'two.names@example.com', password: 'right-password-1' } })
  if (answer.status !== 201) throw new Error(answer.text)
  const login = (address: string, username: string, password: string) =>
    kit.request('POST', '/parse/login', { headers: from(address), body: { username, password } })

  t.test('one username: the attempt after the limit answers 429, from any address', async (t) => {
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await login(`10.0.0.${i + 1}`, 'victim', `wrong-${i}`)).status)
    t.notOk(statuses.includes(429), `the first 3 reach Parse (${statuses.join(', ')})`)
    const refused = await login('10.0.0.9', 'victim', 'right-password-1')
    t.equal(refused.status, 429, 'the 4th, with the right password from a new address, is refused')
    t.equal(refused.json.code, 155)
    t.match(refused.json.error, /Too many sign-in attempts for this account/)
    t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After')
    const viaQuery = await kit.request('GET', '/parse/login?username=VICTIM&password=x', { headers: from('10.0.0.10') })
    t.equal(viaQuery.status, 429, 'GET /login, and the username in another case, count the same')
    const overridden = await kit.request('POST', '/parse/login', { headers: from('10.0.0.11'), body: { _method: 'GET', username: 'victim', password: 'x' } })
    t.equal(overridden.status, 429, 'and a POST overridden to GET with the username in its body')
  })

  t.test('an account named by username, by email, or by email in the username field is one counter', async (t) => {
    // Parse answers each (wrong password; then its accountLockout): none is the kit's 429.
    t.not((await login('10.4.0.1', 'twonames', 'wrong-1')).status, 429)
    t.not((await kit.request('POST', '/parse/login', { headers: from('10.4.0.2'), body: { email: 'Two.Names@example.com', password: 'wrong-2' } })).status, 429)
    t.not((await login('10.4.0.3', 'two.names@example.com', 'wrong-3')).status, 429)
    t.equal((await login('10.4.0.4', 'TwoNames', 'right-password-1')).status, 429, 'the 4th attempt on the account is refused')
    t.equal((await kit.request('POST', '/parse/requestPasswordReset', { headers: from('10.4.0.5'), body: { email: 'two.names@example.com' } })).status, 429, 'and a password reset for its email')
    t.not((await kit.request('POST', '/parse/login', { headers: from('10.4.0.6'), body: { email: 'nobody@example.com', password: 'x' } })).status, 429, 'an email no account has counts as itself')
  })

  t.test('an email stored in mixed case is the account\'s counter too (Parse stores it as given and logs in by it exactly)', async (t) => {
    const created = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'mixedcase', email: 'Mixed.Case@Example.com', password: 'right-password-1' } })
    t.equal(created.status, 201, created.text)
    for (let i = 0; i < 3; i++) t.not((await login(`10.5.0.${i + 1}`, 'mixedcase', `wrong-${i}`)).status, 429)
    const byEmail = await kit.request('POST', '/parse/login', { headers: from('10.5.0.9'), body: { email: 'Mixed.Case@Example.com', password: 'right-password-1' } })
    t.equal(byEmail.status, 429, 'the 4th attempt, by the email as stored, is refused (it was a fresh counter: twice the guesses)')
    t.equal((await login('10.5.0.10', 'Mixed.Case@Example.com', 'x')).status, 429, 'and by that email in the username field')
  })

  t.test('one address: the attempt after the limit answers 429, whatever the username', async (t) => {
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await login('10.1.0.1', `nobody-${i}`, 'x')).status)
    t.same(statuses, [404, 404, 404, 404, 404, 404], 'six unknown users: Parse answers')
    const refused = await login('10.1.0.1', 'nobody-new', 'x')
    t.equal(refused.status, 429)
    t.match(refused.json.error, /from this address/)
    const signUp = await kit.request('POST', '/parse/users', { headers: from('10.1.0.1'), body: { username: 'fresh', password: 'p-1' } })
    t.equal(signUp.status, 429, 'sign-up from that address counts too')
    const reset = await kit.request('POST', '/parse/requestPasswordReset', { headers: from('10.1.0.1'), body: { email: 'a@example.com' } })
    t.equal(reset.status, 429, 'and /requestPasswordReset')
    t.equal((await login('10.1.0.2', 'nobody-new', 'x')).status, 404, 'another address is not limited')
  })

  t.test('Parse\'s pages\' forms count: the password reset form (token guesses) and the resend-verification form', async (t) => {
    // As a browser posts them: a form body, no headers, the app id in the path.
    const page = (address: string, path: string, fields: Record<string, string>) => kit.request('POST', path, {
      headers: { 'x-forwarded-for': address }, body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded'
    })
    const reset = `/parse/apps/${APP_ID}/request_password_reset`
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await page('10.6.0.1', reset, { token: `guess-${i}`, new_password: 'new-password-1' })).status)
    t.notOk(statuses.includes(429), `the first 6 token guesses reach Parse (${statuses.join(', ')})`)
    const refused = await page('10.6.0.1', reset, { token: 'guess-7', new_password: 'new-password-1' })
    t.equal(refused.status, 429, 'the 7th from that address is refused')
    t.same(refused.json?.code, 155, refused.text)
    t.match(refused.json?.error, /from this address/)
    t.equal((await page('10.6.0.1', `/parse/APPS/${APP_ID}/Request_Password_Reset/`, { token: 'guess-8', new_password: 'x' })).status, 429, 'the path in another case, with a trailing slash, counts the same (Express routes it the same)')
    t.equal((await page('10.6.0.1', `/parse/apps/${APP_ID}/request_password_reset`, { _method: 'POST', token: 'guess-9', new_password: 'x' })).status, 429, 'and with a _method')

    const resend = `/parse/apps/${APP_ID}/resend_verification_email`
    for (let i = 0; i < 3; i++) t.not((await page(`10.7.0.${i + 1}`, resend, { username: 'mailbombed' })).status, 429, `resend ${i + 1} reaches Parse`)
    const fourth = await page('10.7.0.9', resend, { username: 'MailBombed' })
    t.equal(fourth.status, 429, 'the 4th resend for one account, from a new address, is refused')
    t.match(fourth.json?.error, /for this account/)
  })

  t.test('inner /batch requests count as the attempts they are', async (t) => {
    const requests = Array.from({ length: 5 }, (_, i) => ({ method: 'POST', path: '/parse/login', body: { username: 'batch-target', password: `guess-${i}` } }))
    const answer = await kit.request('POST', '/parse/batch', { headers: from('10.2.0.1'), body: { requests } })
    t.equal(answer.status, 429, 'five guesses in one batch are over the limit of 3')
  })

  t.test('Parse\'s accountLockout locks an account after failed logins', async (t) => {
    t.equal((await login('10.3.0.1', 'locked', 'wrong-1')).status, 404)
    t.equal((await login('10.3.0.2', 'locked', 'wrong-2')).status, 404)
    const third = await login('10.3.0.3', 'locked', 'right-password-1')
    t.not(third.status, 200, 'the right password no longer logs in')
    t.match(third.json.error, /locked/i)
  })

  t.test('the master key is not limited', async (t) => {
    // victim is over the limit (and locked by Parse after its failed logins): the master key reaches Parse.
    const answer = await kit.request('POST', '/parse/login', { headers: masterHeaders, body: { username: 'victim', password: 'right-password-1' } })
    t.not(answer.status, 429)
    t.match(answer.json.error, /locked/, 'Parse\'s own answer')
  })
})

// ── from test/lazy-validation.test.ts ──
// Declared routes compile their input schemas on first use (boot stays cheap with
// many functions): validation must stay exactly what Fastify's own compile gave —
// the entity route and its /functions twin answer alike, for the function whose
// route Fastify compiled at boot and for those compiled later — and a schema error
// is still refused before the server runs (response schemas, compiled at boot once
// per schema object: lib/routing/shared-serializers.ts).
const fields = {
  title: { type: String, required: true },
  count: { type: Number },
  flag: { type: Boolean },
  status: { type: String, options: ['draft', 'published'] },
  level: { type: Number, default: 3 }
} as const

const echo = (request: CloudRequest) => ({ params: request.params, types: Object.fromEntries(Object.entries(request.params).map(([k, v]) => [k, typeof v])) })

@Route('checks')
export class Checks {
  // Declared first: the one route Fastify compiles itself at boot.
  @CloudFunction({ validation: { fields } })
  static first (request: CloudRequest) { return echo(request) }

  @CloudFunction({ validation: { fields } })
  static later (request: CloudRequest) { return echo(request) }

  @CloudFunction({ methods: ['GET'], validation: { fields } })
  static read (request: CloudRequest) { return echo(request) }
}

t.test('entity route and twin validate alike, whether compiled at boot or on first call', async (t) => {
  const kit = await startKit(t)
  const call = (method: string, url: string, body?: unknown) => kit.request(method, url, { headers: masterHeaders, ...(body === undefined ? {} : { body }) })

  for (const name of ['first', 'later']) {
    const answers = []
    for (const url of [`/parse/checks/${name}`, `/parse/functions/${name}`]) {
      const ok = await call('POST', url, { title: 't', count: 5, flag: true, status: 'draft', extra: 'kept' })
      t.equal(ok.status, 200, ok.text)
      const result = url.includes('/functions/') ? ok.json.result : ok.json
      t.same(result.params, { title: 't', count: 5, flag: true, status: 'draft', extra: 'kept', level: 3 }, `${url}: defaulted, undeclared kept`)
      // A JSON body has types: a wrong one is refused naming the field, never converted.
      for (const [field, value] of [['count', '5'], ['flag', 'true'], ['title', 12345], ['title', null]] as const) {
        const converted = await call('POST', url, { title: 't', [field]: value })
        t.equal(converted.status, 400, `${url} ${field}=${JSON.stringify(value)}: ${converted.text}`)
        t.match(converted.json, { code: Parse.Error.VALIDATION_ERROR, error: new RegExp(`body/${field} must be`) })
      }
      const missing = await call('POST', url, { count: 1 })
      const badEnum = await call('POST', url, { title: 't', status: 'gone' })
      const badType = await call('POST', url, { title: 't', count: 'many' })
      for (const refused of [missing, badEnum, badType]) {
        t.equal(refused.status, 400, refused.text)
        t.equal(refused.json.code, Parse.Error.VALIDATION_ERROR)
      }
      t.match(missing.json.error, /title/)
      t.equal(badEnum.json.error, 'body/status must be one of draft, published', 'an enum refusal names the allowed values')
      answers.push([missing.json, badEnum.json, badType.json])
    }
    t.same(answers[0], answers[1], `${name}: the twin refuses with the same answers as the entity route`)
  }

  const query = await call('GET', '/parse/checks/read?title=q&count=2&flag=false')
  const twin = await call('GET', '/parse/functions/read?title=q&count=2&flag=false')
  t.same(query.json.params, { title: 'q', count: 2, flag: false, level: 3 }, 'query strings are coerced too')
  t.same(twin.json.result.params, query.json.params)
  const badQuery = await call('GET', '/parse/checks/read?count=2')
  const badTwin = await call('GET', '/parse/functions/read?count=2')
  t.equal(badQuery.status, 400)
  t.same(badTwin.json, badQuery.json)
})

t.test('field options that would make a broken schema are refused at import', async (t) => {
  const declare = (field: object) => () => CloudFunction({ validation: { fields: { f: field } } } as never)(class Owner {}, 'fn', { value: () => {} } as never)
  t.throws(declare({ type: String, options: ['a', 'b', 'a'] }), /validation\.fields\.f\.options" lists "a" twice/)
  t.throws(declare({ type: String, description: 5 }), /validation\.fields\.f\.description" must be text/)
  // Two objects that differ only in their keys' order are one value to JSON Schema.
  t.throws(declare({ options: [{ x: 1, y: 2 }, { y: 2, x: 1 }] }), /validation\.fields\.f\.options" lists \{"y":2,"x":1\} twice/)
  t.throws(declare({ options: ['low', undefined] }), /validation\.fields\.f\.options" item 1 is no JSON value/)
  t.throws(declare({ options: [{ at: () => 1 }] }), /validation\.fields\.f\.options" item 0 is no JSON value/)
  t.throws(declare({ type: Object, default: { at: () => 1 } }), /validation\.fields\.f\.default" is no JSON value/)
  t.throws(declare({ type: Number, default: 10n }), /validation\.fields\.f\.default" is no JSON value/)
  // What is accepted compiles, as the function's first call will compile it (checked, not declared: no kit serves these).
  const compile = lazyValidation().forRoute()
  for (const field of [{ options: [{ x: 1 }, { x: 2 }, [1], null, 0] }, { options: [NaN] }, { type: String, pattern: '\\p{L}+' }, { type: Number, min: 5, max: 1 }]) {
    const options = { validation: { fields: { f: field } } } as never
    t.doesNotThrow(() => checkCloudFunctionOptions('Owner.fn', options), `${JSON.stringify(field)} is accepted`)
    t.doesNotThrow(() => compile({ schema: inputSchema(options)!, httpPart: 'body', method: 'POST', url: '/x' } as never)({ f: 1 }), `${JSON.stringify(field)} compiles`)
  }
})

t.test('a malformed response schema still fails boot', async (t) => {
  // After the first kit has closed (one kit per process), with a function declared for this boot only.
  // A sound response schema first: Fastify compiles that one itself, the broken one goes through the kit's shared compiler.
  class Broken {}
  CloudFunction({ returns: Type.Object({ ok: Type.Boolean() }) })(Broken, 'sound', { value: () => ({ ok: true }) } as never)
  CloudFunction({ returns: Type.Unsafe({ type: 'nonsense' }) })(Broken, 'broken', { value: () => ({}) } as never)
  Route('broken')(Broken)
  resetKitConfig()
  const dir = tempDir()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true }) // its database, once closed
  })
  await t.rejects(
    (async () => {
      // A database on the process's shared PostgreSQL (none on the MongoDB lane: a server of its own then).
      const database = await sharedPostgres(t)
      if (database.databaseURI === undefined) await clusterFromTemplate(`${dir}/postgres`)
      await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, dataDir: `${dir}/postgres`, ephemeralDatabase: true, ...database })
      await app.ready()
    })(),
    /serialization schema .*broken/
  )
})

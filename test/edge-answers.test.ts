// Edges where the server used to answer with the wrong status or shape: a slow
// request body (408, the kit's shape), refusals from Node's parser that close
// the connection (Connection: close, so a keep-alive client never reuses a dead
// socket), a failed transactional /batch (the inner error, a 4xx, nothing
// stored), and databaseTimeout as the bound of a whole database call.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, kitServerOptions } from '../lib/index.js'
import { boundedCall, CallTimeoutError } from '../lib/storage/call-bound.js'
import { DEFAULT_TIMEOUT_SECONDS } from '../lib/storage/database.js'
import { isDatabaseUnavailable } from '../lib/storage/unavailable.js'
import { APP_ID, appHeaders, masterHeaders, startKit } from './helpers/kit.js'

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
    const giveUp = setTimeout(() => socket.destroy(), 60_000)
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

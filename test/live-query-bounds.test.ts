// LiveQuery's sockets have the bounds HTTP requests have: upgrades only on the
// mount path, frames no larger than the body limit (refused from the frame
// header, before the payload is read), a deadline for the `connect` message,
// limits on subscriptions per socket and sockets per address, and a refusal
// naming the option for a class LiveQuery does not serve. Clients are raw `ws`
// sockets, as an attacker's would be. And app.close() ends with a subscribed
// client connected.
import t from 'tap'
import { createHook } from 'node:async_hooks'
import { once } from 'node:events'
import { connect } from 'node:net'
import WebSocket from 'ws'
import { BaseModel, ParseClass, ParseField } from '../lib/index.js'
import { APP_ID, startKit } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'
import { until } from './helpers/until.js'

@ParseClass('Ping')
class Ping extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}

const CONNECT_TIMEOUT_MS = 1_500
/** Generous: the machine is shared. */
const WAIT_MS = 20_000

interface Client { ws: WebSocket, messages: Array<Record<string, any>>, next (predicate: (message: Record<string, any>) => boolean): Promise<Record<string, any>> }

async function open (url: string): Promise<Client> {
  const ws = new WebSocket(url)
  const messages: Array<Record<string, any>> = []
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())))
  await once(ws, 'open')
  const next = (predicate: (message: Record<string, any>) => boolean) => new Promise<Record<string, any>>((resolve, reject) => {
    const started = Date.now()
    const check = () => {
      const found = messages.find(predicate)
      if (found) return resolve(found)
      if (Date.now() - started > WAIT_MS) return reject(new Error(`no such message; got ${JSON.stringify(messages)}`))
      setTimeout(check, 20)
    }
    check()
  })
  return { ws, messages, next }
}

async function connected (url: string): Promise<Client> {
  const client = await open(url)
  client.ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID }))
  await client.next((message) => message.op === 'connected')
  return client
}

const subscribe = (client: Client, requestId: number, className: string) =>
  client.ws.send(JSON.stringify({ op: 'subscribe', requestId, query: { className, where: {} } }))

/** Resolves with the HTTP status an upgrade is refused with. */
async function refusedUpgrade (url: string): Promise<number> {
  return (await refusal(url)).status
}

/** The status and request id header of a refused upgrade. */
function refusal (url: string): Promise<{ status: number, requestId: unknown }> {
  const ws = new WebSocket(url)
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_request, response) => { resolve({ status: response.statusCode ?? 0, requestId: response.headers['x-request-id'] }); ws.terminate() })
    ws.on('open', () => { ws.close(); reject(new Error(`${url} was accepted`)) })
    ws.on('error', () => {})
  })
}

t.test('LiveQuery socket bounds', async (t) => {
  const logLines: string[] = []
  const kit = await startKit(t, {
    models: [Ping],
    liveQuery: { classNames: ['Ping'], connectTimeoutMs: CONNECT_TIMEOUT_MS, maxSubscriptionsPerConnection: 3, maxConnectionsPerAddress: 6 }
  }, { logger: { level: 'warn', stream: { write: (line: string) => { logLines.push(line) } } } })
  const base = kit.origin.replace(/^http/, 'ws')
  const url = `${base}/parse`
  const sockets: WebSocket[] = []
  t.teardown(() => { for (const ws of sockets) ws.terminate() })

  t.test('an upgrade on any other path is refused', async (t) => {
    t.equal(await refusedUpgrade(`${base}/anything`), 404, 'outside the mount')
    t.equal(await refusedUpgrade(`${base}/parse/classes/Ping`), 404, 'below the mount')
    const refused = await refusal(`${base}/anything`)
    t.match(refused.requestId, /^\S+$/, 'the refusal carries its request id, as every answer does')
    const client = await connected(url)
    sockets.push(client.ws)
    t.pass('the mount path itself is served')
    client.ws.close()
  })

  t.test('a frame over the body limit is refused from its header, before its payload is read', async (t) => {
    const client = await open(url)
    sockets.push(client.ws)
    client.ws.send('x'.repeat(2 * 1024 * 1024))
    const [code] = await once(client.ws, 'close')
    t.equal(code, 1009, 'closed as "message too big" (the default limit is the 1 MiB body limit)')
    // A client causes a socket error at will: it is logged in one short line, never as a dump of the socket.
    const deadline = Date.now() + WAIT_MS
    while (!logLines.some((line) => line.includes('Max payload size exceeded')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    const logged = logLines.filter((line) => line.includes('Max payload size exceeded'))
    t.equal(logged.length, 1, 'the socket error is logged once')
    t.match(logged[0], /LiveQuery socket from 127\.0\.0\.1: Max payload size exceeded/)
    t.equal(JSON.parse(logged[0]).level, 40, 'at warn: the client erred, not the server')
    t.same(logLines.filter((line) => line.length > 2_000).map((line) => line.slice(0, 120)), [], 'no log line dumps the socket')

    // A raw frame header announcing 90 MB, then 1 KiB of it: the server closes without waiting for the rest.
    const { port } = new URL(kit.origin)
    const socket = connect(Number(port), '127.0.0.1')
    await once(socket, 'connect')
    socket.write(['GET /parse HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'))
    const [handshake] = await once(socket, 'data') as [Buffer]
    t.match(handshake.toString(), /^HTTP\/1\.1 101/, 'upgraded')
    const header = Buffer.alloc(14)
    header[0] = 0x81 // final text frame
    header[1] = 0x80 | 127 // masked, 64-bit length
    header.writeBigUInt64BE(90_000_000n, 2)
    header.writeUInt32BE(0x01020304, 10) // mask
    socket.write(Buffer.concat([header, Buffer.alloc(1024)]))
    const closedAt = Date.now()
    let stillOpen: NodeJS.Timeout | undefined // cleared: a pending timer would keep the file running 20 s after its tests
    await Promise.race([once(socket, 'close'), new Promise((_resolve, reject) => { stillOpen = setTimeout(() => reject(new Error('still open')), WAIT_MS) })])
      .finally(() => clearTimeout(stillOpen))
    t.ok(Date.now() - closedAt < WAIT_MS, 'the server ended the socket with 90 MB still unsent')
  })

  t.test('a socket that never sends connect is closed after the deadline', async (t) => {
    const client = await open(url)
    sockets.push(client.ws)
    const started = Date.now()
    const [code, reason] = await once(client.ws, 'close')
    t.equal(code, 1008, 'policy violation')
    t.match(String(reason), /no accepted connect message within 1500 ms/)
    t.ok(Date.now() - started >= CONNECT_TIMEOUT_MS - 100, 'not before the deadline')
  })

  t.test('a connected socket outlives the deadline', async (t) => {
    const client = await connected(url)
    sockets.push(client.ws)
    await new Promise((resolve) => setTimeout(resolve, CONNECT_TIMEOUT_MS + 500))
    t.equal(client.ws.readyState, WebSocket.OPEN)
    client.ws.close()
  })

  t.test('subscriptions over the limit, and to a class LiveQuery does not serve, are refused', async (t) => {
    const client = await connected(url)
    sockets.push(client.ws)
    for (const id of [1, 2, 3]) subscribe(client, id, 'Ping')
    for (const id of [1, 2, 3]) await client.next((message) => message.op === 'subscribed' && message.requestId === id)
    subscribe(client, 4, 'Ping')
    const over = await client.next((message) => message.op === 'error' && message.requestId === 4)
    t.match(over.error, /At most 3 subscriptions per connection \(liveQuery\.maxSubscriptionsPerConnection\)/)
    t.notOk(client.messages.some((message) => message.op === 'subscribed' && message.requestId === 4), 'never subscribed')

    client.ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 1 }))
    await client.next((message) => message.op === 'unsubscribed' && message.requestId === 1)
    subscribe(client, 5, 'Ping')
    await client.next((message) => message.op === 'subscribed' && message.requestId === 5)
    t.pass('an unsubscribe frees a place')

    client.ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 2 }))
    await client.next((message) => message.op === 'unsubscribed' && message.requestId === 2)
    subscribe(client, 6, '_User')
    const unlisted = await client.next((message) => message.op === 'error' && message.requestId === 6)
    t.equal(unlisted.code, 119)
    t.match(unlisted.error, /Class _User is not in liveQuery\.classNames/, 'the refusal names the option')
    client.ws.close()
  })

  t.test('update frames for subscriptions the socket does not hold are refused, however many', async (t) => {
    const client = await connected(url)
    sockets.push(client.ws)
    subscribe(client, 1, 'Ping')
    await client.next((message) => message.op === 'subscribed' && message.requestId === 1)
    const query = { className: 'Ping', where: {} }
    for (let id = 1000; id < 6000; id++) client.ws.send(JSON.stringify({ op: 'update', requestId: id, query }))
    await client.next((message) => message.op === 'error' && message.requestId === 5999)
    const refused = client.messages.filter((message) => message.op === 'error' && message.requestId >= 1000)
    t.equal(refused.length, 5000, 'each is refused')
    t.match(refused[0].error, /Cannot find subscription with requestId 1000/)
    t.notOk(client.messages.some((message) => message.op === 'subscribed' && message.requestId >= 1000), 'none became a subscription')
    // The limit (3) still leaves two places: the 5,000 updates took none of them.
    subscribe(client, 2, 'Ping')
    subscribe(client, 3, 'Ping')
    await client.next((message) => message.op === 'subscribed' && message.requestId === 3)
    t.ok(client.messages.some((message) => message.op === 'subscribed' && message.requestId === 2), 'the places left are intact')
    client.ws.send(JSON.stringify({ op: 'update', requestId: 1, query: { className: 'Ping', where: { text: 'x' } } }))
    await client.next((message) => message.op === 'subscribed' && message.requestId === 1 && client.messages.filter((m) => m.op === 'subscribed' && m.requestId === 1).length === 2)
    t.pass('an update of a held subscription still works')
    client.ws.close()
  })

  t.test('sockets per address are limited', async (t) => {
    const clients = await Promise.all(Array.from({ length: 6 }, () => open(url)))
    sockets.push(...clients.map((client) => client.ws))
    const refused = await refusal(url)
    t.equal(refused.status, 429, 'the seventh socket from one address is refused')
    t.match(refused.requestId, /^\S+$/, 'with its request id')
    for (const client of clients) client.ws.close()
    await Promise.all(clients.map((client) => client.ws.readyState === WebSocket.CLOSED ? undefined : once(client.ws, 'close')))
    const again = await connected(url)
    sockets.push(again.ws)
    t.pass('closed sockets free their places')
    again.ws.close()
  })

  t.test('a closed socket leaves no ping timer of Parse\'s running (it kept the process alive 20 s after app.close())', async (t) => {
    // Parse pings every socket on an interval (websocketTimeout, 10 s by default).
    const pings: NodeJS.Timeout[] = []
    const hook = createHook({
      init (_id, type, _trigger, resource) {
        if (type === 'Timeout' && (resource as { _repeat: unknown })._repeat === 10_000) pings.push(resource as NodeJS.Timeout)
      }
    }).enable()
    const client = await connected(url).finally(() => hook.disable())
    t.ok(pings.length > 0, 'Parse started its ping interval for the socket')
    client.ws.close()
    await once(client.ws, 'close')
    // Without the fix Parse clears it itself on its second tick, 20 s after the connection.
    await until('the socket\'s ping interval to be cleared', () => pings.every((timer) => (timer as unknown as { _destroyed: boolean })._destroyed), scaled(2_000))
  })

  t.test('app.close() ends within 2 s with a subscribed client', async (t) => {
    const client = await connected(url)
    sockets.push(client.ws)
    subscribe(client, 1, 'Ping')
    await client.next((message) => message.op === 'subscribed')
    const started = Date.now()
    await kit.app.close()
    const took = Date.now() - started
    t.ok(took < 2_000, `closed in ${took} ms`)
    t.not(client.ws.readyState, WebSocket.OPEN, 'the client was disconnected')
  })
})

// LiveQuery: a subscription with a session token receives only rows that token
// may read; @BeforeSubscribe can refuse; update events carry the changed fields.
// And what a client can make the server log (was client-log-levels.test.ts, in
// this process to spare one start of Parse Server): its own mistakes (an unknown
// function, LiveQuery messages it got wrong) are info lines without a stack,
// never error-level lines an attacker could repeat at will to page someone; a
// LiveQuery client pointed at the server root (what Parse's own examples use)
// is refused with an answer, and a warn line, naming the URL to use.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import WebSocket from 'ws'
import { BaseModel, BeforeSubscribe, ParseClass, ParseField, implementACL } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { APP_ID, appHeaders, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const master = { useMasterKey: true }
const EVENT_TIMEOUT_MS = 15_000

@ParseClass('Chat')
class Chat extends BaseModel {
  @ParseField({ type: 'String' }) declare room: string
  @ParseField({ type: 'String' }) declare text: string

  @BeforeSubscribe()
  static refuseSecretRooms (request: { query: Parse.Query }) {
    const where = (request.query.toJSON() as { where?: { room?: unknown } }).where
    if (where?.room === 'secret') throw new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'No such room')
  }
}

interface Subscriber { events: Array<Record<string, any>>, child: ChildProcess, waitFor (predicate: (event: Record<string, any>) => boolean): Promise<Record<string, any>> }

function subscribe (origin: string, token: string, where: Record<string, unknown>): Subscriber {
  const child = spawn(process.execPath, [path.join(here, 'helpers', 'live-query-client.mjs'), `${origin}/parse`, APP_ID, token, 'Chat', JSON.stringify(where)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const events: Array<Record<string, any>> = []
  const arrived = new EventEmitter()
  let buffered = ''
  child.stdout!.on('data', (chunk) => {
    buffered += chunk
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) {
      if (!line.trim()) continue
      events.push(JSON.parse(line))
      arrived.emit('event')
    }
  })
  // Resolves on the event itself (no polling); the bound only turns a missing event into a readable failure.
  const waitFor = (predicate: (event: Record<string, any>) => boolean) => new Promise<Record<string, any>>((resolve, reject) => {
    const check = () => {
      const found = events.find(predicate)
      if (!found) return
      clearTimeout(timer)
      arrived.off('event', check)
      resolve(found)
    }
    const timer = setTimeout(() => {
      arrived.off('event', check)
      reject(new Error(`no such event within ${EVENT_TIMEOUT_MS} ms; got ${JSON.stringify(events)}`))
    }, EVENT_TIMEOUT_MS)
    arrived.on('event', check)
    check()
  })
  return { events, child, waitFor }
}

t.test('LiveQuery on the kit', async (t) => {
  t.equal(modelByName('Chat')?.model, Chat, '@ParseClass registered Chat')
  const kit = await startKit(t, { liveQuery: { classNames: ['Chat'] } })
  const alice = await kit.signUp('alice')
  const bob = await kit.signUp('bob')
  const readableBy = (id: string) => implementACL({ owner: [{ user: id, read: true, write: true }] })

  const mine = await new Chat({ room: 'lobby', text: 'hi alice' }).setACL(readableBy(alice.id)) as Chat
  await mine.save(null, master)
  const theirs = new Chat({ room: 'lobby', text: 'hi bob' })
  theirs.setACL(readableBy(bob.id))
  await theirs.save(null, master)

  const subscriber = subscribe(kit.origin, alice.token, { room: 'lobby' })
  const refused = subscribe(kit.origin, alice.token, { room: 'secret' })
  const owner = subscribe(kit.origin, bob.token, { room: 'lobby' })
  t.teardown(() => { subscriber.child.kill('SIGTERM'); refused.child.kill('SIGTERM'); owner.child.kill('SIGTERM') })
  await subscriber.waitFor((event) => event.event === 'open')
  await owner.waitFor((event) => event.event === 'open')

  theirs.text = 'bob only'
  await theirs.save(null, master)
  mine.text = 'edited for alice'
  await mine.save(null, master)

  const update = await subscriber.waitFor((event) => event.event === 'update')
  t.equal(update.object.objectId, mine.id, 'the update that arrives is the readable row')
  t.equal(update.object.text, 'edited for alice', 'with the changed field')
  // Sync points instead of a pause: bob received his row's update, so the server has
  // published it; and a later update of alice's row reached her after it.
  await owner.waitFor((event) => event.event === 'update' && event.object?.objectId === theirs.id)
  mine.text = 'after bob'
  await mine.save(null, master)
  await subscriber.waitFor((event) => event.event === 'update' && event.object?.text === 'after bob')
  t.notOk(subscriber.events.some((event) => event.object?.objectId === theirs.id), 'a row the token may not read never arrives')

  const error = await refused.waitFor((event) => event.event === 'error')
  t.match(error.message, /No such room/, '@BeforeSubscribe refused the subscription')
})

// ── client log levels (was client-log-levels.test.ts) ──

@ParseClass('Chirp')
class Chirp extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
}

interface LogLine { level: number, msg: string, err?: unknown }

/** Resolves with the status and body an upgrade is refused with. */
function refusedUpgrade (url: string): Promise<{ status: number, body: string }> {
  const ws = new WebSocket(url)
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += String(chunk) })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }); ws.terminate() })
    })
    ws.on('open', () => { ws.close(); reject(new Error(`${url} was accepted`)) })
    ws.on('error', () => {})
  })
}

t.test('client mistakes log no error-level line; LiveQuery at the root says where to connect', async (t) => {
  const lines: LogLine[] = []
  const kit = await startKit(t, { models: [Chirp], liveQuery: { classNames: ['Chirp'] } }, {
    logger: { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } }
  })
  const base = kit.origin.replace(/^http/, 'ws')
  const errorLines = () => lines.filter((line) => line.level >= 50).map((line) => line.msg)

  t.test('an unknown function', async (t) => {
    for (let i = 0; i < 3; i++) {
      const answer = await kit.request('POST', '/parse/functions/noSuchFunction', { headers: appHeaders, body: {} })
      t.equal(answer.status, 400)
      t.equal(answer.json.code, 141)
    }
    await until('the refusals to be logged', () => lines.filter((line) => /Invalid function/.test(line.msg + JSON.stringify(line))).length >= 3)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /Invalid function/.test(JSON.stringify(line)))
    t.ok(logged.every((line) => line.level === 30 && line.err === undefined), 'info lines without a stack')
  })

  t.test('LiveQuery protocol mistakes', async (t) => {
    const ws = new WebSocket(`${base}/parse`)
    const messages: Array<Record<string, unknown>> = []
    ws.on('message', (data) => messages.push(JSON.parse(String(data))))
    t.teardown(() => ws.terminate())
    await once(ws, 'open')
    ws.send('this is not JSON')
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Chirp', where: {} } })) // before connect
    ws.send(JSON.stringify({ op: 'connect', applicationId: 'wrong-app' }))
    ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID }))
    await until('connected', () => messages.some((message) => message.op === 'connected'))
    ws.send(JSON.stringify({ op: 'bogus' }))
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 2, query: { where: {} } })) // no className
    ws.send(JSON.stringify({ op: 'subscribe', requestId: 3, query: { className: 'NoSuchClass', where: {} } }))
    ws.send(JSON.stringify({ op: 'unsubscribe', requestId: 99 }))
    await until('each mistake to be answered', () => messages.filter((message) => message.op === 'error').length >= 5)
    await until('the mistakes to be logged', () => lines.filter((line) => /unable to parse request|Connect message error|Can not find/.test(line.msg)).length >= 3)
    t.same(errorLines(), [], 'no error-level line')
    const logged = lines.filter((line) => /unable to parse request|Connect message error|Key in request|Can not find/.test(line.msg))
    t.ok(logged.length >= 4, `each mistake is still logged (${logged.length} lines)`)
    t.ok(logged.every((line) => line.level === 30 && line.err === undefined), 'at info, without a stack')
  })

  t.test('LiveQuery at the server root', async (t) => {
    const refused = await refusedUpgrade(base)
    t.equal(refused.status, 404, 'refused')
    const body = JSON.parse(refused.body) as { code: number, error: string }
    t.equal(body.code, 101)
    t.match(body.error, `LiveQuery is served at ${base}/parse`, 'the answer names the URL to use')
    for (let i = 0; i < 3; i++) t.equal((await refusedUpgrade(`${base}/?x=${i}`)).status, 404, 'the SDK retries')
    const warned = lines.filter((line) => line.level === 40 && /WebSocket upgrade at \/ was refused/.test(line.msg))
    t.equal(warned.length, 1, 'one warn line, however often the client retries')
    t.match(warned[0]?.msg, `${base}/parse`, 'naming the URL to use')
    t.same(errorLines(), [], 'no error-level line')
  })
})

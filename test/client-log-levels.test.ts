// What a client can make the server log: its own mistakes (an unknown
// function, LiveQuery messages it got wrong) are info lines without a stack,
// never error-level lines an attacker could repeat at will to page someone. And
// a LiveQuery client pointed at the server root (what Parse's own examples use)
// is refused with an answer, and a warn line, naming the URL to use.
import t from 'tap'
import { once } from 'node:events'
import WebSocket from 'ws'
import { BaseModel, ParseClass, ParseField } from '../lib/index.js'
import { APP_ID, appHeaders, startKit } from './helpers/kit.js'
import { until } from './helpers/until.js'

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

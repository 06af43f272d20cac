// LiveQuery subscriptions with `keys` (the SDK's select()) and `watch` on a
// class with a beforeSubscribe trigger. Before: Parse handed the query to the
// SDK's withJSON, which takes both as text, and every such subscription was
// refused (141, "json.keys.split is not a function").
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, BeforeSubscribe, ParseClass, ParseField } from '../lib/index.js'
import { APP_ID, appHeaders, startKit } from './helpers/kit.js'
import { openLiveQuerySocket, type LiveQuerySocket } from './helpers/live-query-socket.js'
import { scaled } from './helpers/time-scale.js'

const subscribed: unknown[] = []

@ParseClass('Board', { protectedFields: { '*': ['secret'] } })
class Board extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
  @ParseField({ type: 'Number' }) declare n: number
  @ParseField({ type: 'String' }) declare secret: string
  @BeforeSubscribe()
  static seen (request: Parse.Cloud.TriggerRequest & { query: Parse.Query }) { subscribed.push(request.query.toJSON()) }
}
void Board

type Client = LiveQuerySocket

async function open (url: string): Promise<Client> {
  const { ws, messages, next } = await openLiveQuerySocket(url, scaled(10_000))
  ws.send(JSON.stringify({ op: 'connect', applicationId: APP_ID }))
  await next((message) => message.op === 'connected')
  return { ws, messages, next }
}

t.test('keys and watch reach a class with a beforeSubscribe as lists, and work', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [{ path: '/classes/*' }], liveQuery: { classNames: ['Board'] } })
  const url = `${kit.origin.replace(/^http/, 'ws')}/parse`
  const client = await open(url)
  t.teardown(() => client.ws.close())
  const subscribe = (requestId: number, query: Record<string, unknown>) => client.ws.send(JSON.stringify({ op: 'subscribe', requestId, query: { className: 'Board', where: {}, ...query } }))

  subscribe(1, { keys: ['text'] })
  const first = await client.next((message) => message.requestId === 1)
  t.equal(first.op, 'subscribed', `keys: ${JSON.stringify(first)}`)
  subscribe(2, { watch: ['n'] })
  const second = await client.next((message) => message.requestId === 2)
  t.equal(second.op, 'subscribed', `watch: ${JSON.stringify(second)}`)
  t.match(subscribed, [{ keys: 'text' }, { watch: 'n' }], 'the trigger sees the query as the SDK builds it')

  const created = await kit.request('POST', '/parse/classes/Board', { headers: appHeaders, body: { text: 'hello', n: 1 } })
  t.equal(created.status, 201, created.text)
  const id = created.json.objectId as string
  const event = await client.next((message) => message.op === 'create' && message.requestId === 1)
  t.same(Object.keys(event.object).filter((key) => !['className', 'objectId', 'createdAt', 'updatedAt'].includes(key)).sort(), ['text'], `only the selected key (${JSON.stringify(event.object)})`)
  await client.next((message) => message.op === 'create' && message.requestId === 2)

  // watch: a change of another field sends nothing, a change of n does.
  t.equal((await kit.request('PUT', `/parse/classes/Board/${id}`, { headers: appHeaders, body: { text: 'again' } })).status, 200)
  await client.next((message) => message.op === 'update' && message.requestId === 1)
  t.equal((await kit.request('PUT', `/parse/classes/Board/${id}`, { headers: appHeaders, body: { n: 2 } })).status, 200)
  const watched = await client.next((message) => message.op === 'update' && message.requestId === 2)
  t.equal(watched.object.n, 2)
  t.equal(client.messages.filter((message) => message.op === 'update' && message.requestId === 2).length, 1, 'one update on the watched subscription: the change of n')
  t.notOk(client.messages.some((message) => message.op === 'error'), `no errors (${JSON.stringify(client.messages.filter((message) => message.op === 'error'))})`)

  // Parse's check of a protected field in watch still applies.
  subscribe(3, { watch: ['secret'] })
  const refused = await client.next((message) => message.requestId === 3)
  t.equal(refused.op, 'error', `watch of a protected field: ${JSON.stringify(refused)}`)
})

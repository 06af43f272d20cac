// LiveQuery: a subscription with a session token receives only rows that token
// may read; @BeforeSubscribe can refuse; update events carry the changed fields.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { BaseModel, BeforeSubscribe, ParseClass, ParseField, implementACL } from '../lib/index.js'
import { modelByName } from '../lib/model/registry.js'
import { APP_ID, startKit } from './helpers/kit.js'

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

// A declared GET route answers HEAD itself (lib/routing/head-route.ts). Its
// answers are checked against Fastify's own HEAD route for the same handler,
// for every kind of payload a handler or an onSend hook can produce, on a bare
// Fastify instance: the kit's routes use exactly these options.
import t from 'tap'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type RouteHandlerMethod, type onSendHookHandler } from 'fastify'
import { getVerbs } from '../lib/routing/head-route.js'

interface Case { name: string, handler: RouteHandlerMethod, onSend?: onSendHookHandler }

const CASES: Case[] = [
  { name: 'a JSON string', handler: async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify({ a: 1, text: 'héllo' })) },
  { name: 'an object Fastify serialises', handler: async () => ({ a: 1, list: [1, 2, 3] }) },
  { name: 'a Buffer', handler: async (_request, reply) => reply.type('application/octet-stream').send(Buffer.from('bytes')) },
  { name: 'no payload (204)', handler: async (_request, reply) => reply.code(204).send() },
  { name: 'a thrown error', handler: async () => { throw Object.assign(new Error('refused'), { statusCode: 403 }) } },
  { name: 'a Node stream', handler: async (_request, reply) => reply.type('text/plain').send(Readable.from(['a', 'b'])) },
  { name: 'a web stream', handler: async (_request, reply) => reply.type('text/plain').send(new ReadableStream({ start (controller) { controller.enqueue(new TextEncoder().encode('web')); controller.close() } })) },
  {
    name: 'a stream an onSend hook makes',
    handler: async () => ({ compressed: false }),
    onSend: (_request, reply, payload, done) => { reply.header('x-made', 'stream'); done(null, Readable.from([String(payload)])) }
  }
]

async function answers (app: FastifyInstance, url: string): Promise<Record<string, unknown>> {
  const response = await app.inject({ method: 'HEAD', url })
  const { date: _date, ...headers } = response.headers
  return { status: response.statusCode, headers, body: response.body }
}

t.test('HEAD on a GET route answers as Fastify\'s own HEAD route', async (t) => {
  for (const { name, handler, onSend } of CASES) {
    const fastifys = Fastify()
    const kits = Fastify()
    if (onSend) { fastifys.addHook('onSend', onSend); kits.addHook('onSend', onSend) }
    fastifys.route({ method: 'GET', url: '/thing', handler })
    kits.route({ ...getVerbs(kits, ['GET'], '/thing'), url: '/thing', handler })
    t.same(await answers(kits, '/thing'), await answers(fastifys, '/thing'), name)
    const get = await kits.inject({ method: 'GET', url: '/thing' })
    t.not(get.statusCode, 404, `${name}: GET still served`)
    await Promise.all([fastifys.close(), kits.close()])
  }
})

t.test('where Fastify would add no HEAD route, none is taken', async (t) => {
  const handler: RouteHandlerMethod = async () => ({ ran: true })
  // The instance answers no HEAD for GET routes.
  const noHead = Fastify({ exposeHeadRoutes: false })
  noHead.route({ ...getVerbs(noHead, ['GET'], '/thing'), url: '/thing', handler })
  t.equal((await noHead.inject({ method: 'HEAD', url: '/thing' })).statusCode, 404, 'exposeHeadRoutes: false: HEAD is not answered')
  t.equal((await noHead.inject({ method: 'GET', url: '/thing' })).statusCode, 200)
  // The application's own HEAD route on the path stays the one that answers.
  const own = Fastify()
  own.head('/thing', async (_request, reply) => reply.header('x-own', 'yes').send())
  t.doesNotThrow(() => own.route({ ...getVerbs(own, ['GET'], '/thing'), url: '/thing', handler }), 'no duplicate route')
  const head = await own.inject({ method: 'HEAD', url: '/thing' })
  t.equal(head.headers['x-own'], 'yes', 'the application\'s HEAD route answers')
  t.equal((await own.inject({ method: 'GET', url: '/thing' })).json().ran, true)
  await Promise.all([noHead.close(), own.close()])
})

// Response schemas (`returns`): Fastify serialises with them on both routes of
// a function, fields they do not list are not sent, and the API document
// shows them as the 200 response. (Their compile-time side: test/types/.)
import t from 'tap'
import Parse from 'parse/node'
import { Type } from '@sinclair/typebox'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

@ParseClass('Shape')
class Shape extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'String' }) declare secret: string
}

const Public = Type.Object({ shown: Type.String(), count: Type.Integer() }, { description: 'The public part' })
const ShapeJSON = Type.Object({ objectId: Type.String(), name: Type.String(), createdAt: Type.String({ format: 'date-time' }) })

@Route('shapes')
export class ShapeFunctions {
  @CloudFunction({ methods: ['GET'], returns: Public })
  static leaky () {
    const answer = { shown: 'yes', count: 2, secret: 'must not leave the server' }
    return answer
  }

  @CloudFunction({ returns: { id: { type: String, required: true }, done: { type: Boolean } } })
  static shorthand () {
    const answer = { id: 'x', done: true, internal: 'not listed' }
    return answer
  }

  @CloudFunction({ returns: ShapeJSON })
  static async saved () {
    return new Shape({ name: 'circle', secret: 'kept in the database' }).save(null, { useMasterKey: true })
  }

  @CloudFunction({ methods: ['GET'] })
  static untyped () {
    return { shown: 'yes', secret: 'sent: no schema' }
  }

  @CloudFunction({ rateLimit: { windowMs: 600_000, max: 1 }, requireMaster: true })
  static limited () {
    return { done: true }
  }
}

t.test('returns', async (t) => {
  const kit = await startKit(t, { docs: { title: 'Shapes', version: '1.0.0' } })
  const post = (url: string) => kit.request('POST', url, { headers: masterHeaders, body: {} })

  t.test('a field the schema does not list is not sent, on both routes', async (t) => {
    const entity = await kit.request('GET', '/parse/shapes/leaky', { headers: appHeaders })
    t.equal(entity.status, 200)
    t.same(entity.json, { shown: 'yes', count: 2 })
    t.notMatch(entity.text, /secret/)
    const functions = await post('/parse/functions/leaky')
    t.same(functions.json, { result: { shown: 'yes', count: 2 } })
    t.notMatch(functions.text, /secret/)
    t.same((await post('/parse/shapes/shorthand')).json, { id: 'x', done: true }, 'the validation-style shorthand')
  })

  t.test('a Parse.Object answers through its toJSON(), cut to the schema', async (t) => {
    const saved = await post('/parse/shapes/saved')
    t.equal(saved.status, 200)
    t.same(Object.keys(saved.json).sort(), ['createdAt', 'name', 'objectId'])
    t.equal(saved.json.name, 'circle')
    const stored = await new Parse.Query(Shape).get(saved.json.objectId, { useMasterKey: true })
    t.equal(stored.secret, 'kept in the database')
    // On Parse's /functions path the object keeps the tags Parse.Cloud.run decodes into a Parse.Object.
    const wrapped = await post('/parse/functions/saved')
    t.same(Object.keys(wrapped.json.result).sort(), ['__type', 'className', 'createdAt', 'name', 'objectId'])
    t.match(wrapped.json.result, { __type: 'Object', className: 'Shape', name: 'circle' })
    t.notMatch(wrapped.text, /secret/)
  })

  t.test('without returns the answer is sent whole', async (t) => {
    t.same((await kit.request('GET', '/parse/shapes/untyped', { headers: appHeaders })).json, { shown: 'yes', secret: 'sent: no schema' })
  })

  t.test('the API document shows the schema as the 200 response', async (t) => {
    const document = (await kit.request('GET', '/api-docs/json')).json
    const leaky = document.paths['/shapes/leaky'].get.responses['200']
    t.equal(leaky.description, 'The public part')
    t.same(Object.keys(leaky.content['application/json'].schema.properties), ['shown', 'count'])
    const shorthand = document.paths['/shapes/shorthand'].post.responses['200']
    t.equal(shorthand.description, 'What shorthand answers', 'a description of its own, not "Default Response"')
    t.same(shorthand.content['application/json'].schema.required, ['id'])
    // Besides its 200, every operation lists the refusals it can give (docs/reference/http-answers.md).
    t.same(Object.keys(document.paths['/shapes/untyped'].get.responses), ['200', '400', '403', '405', '500', '503', 'default'], 'no 404 or 409: a declared route cannot give them; anything else is the default error shape')
    t.equal(document.paths['/shapes/untyped'].get.responses['200'].description, 'Default Response', 'no returns: no schema')
  })

  t.test('the refusals a function can give are documented from its declaration, and given as documented', async (t) => {
    const document = (await kit.request('GET', '/api-docs/json')).json
    const limited = document.paths['/shapes/limited'].post.responses
    t.same(Object.keys(limited), ['200', '400', '403', '405', '413', '415', '429', '500', '503', 'default'])
    t.match(limited['403'].description, /only callers presenting the master key/)
    t.match(limited['429'], { description: /more than 1 calls in 600000 ms/, headers: { 'Retry-After': { schema: { type: 'integer' } } } })
    t.same(limited['429'].content['application/json'].schema, { $ref: '#/components/schemas/ErrorAnswer' })
    t.match(document.components.schemas.ErrorAnswer, { type: 'object', required: ['error'], properties: { code: { type: 'integer' }, error: { type: 'string' } } })
    t.notMatch(document.paths['/shapes/untyped'].get.responses['400'].description, /body/, 'a GET takes no body: no body refusals')

    const noMaster = await kit.request('POST', '/parse/shapes/limited', { headers: appHeaders, body: {} })
    t.match({ status: noMaster.status, ...noMaster.json }, { status: 403, code: Parse.Error.OPERATION_FORBIDDEN })
    const second = await kit.request('POST', '/parse/shapes/limited', { headers: appHeaders, body: {} })
    t.match({ status: second.status, ...second.json }, { status: 429, code: Parse.Error.REQUEST_LIMIT_EXCEEDED, error: String })
    t.ok(Number(second.headers.get('retry-after')) > 0, 'Retry-After, as documented')
  })
})

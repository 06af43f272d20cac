// The baseline a scale boot is read against: bare Fastify registering the
// routes the kit registers for N generated functions (same verbs and paths,
// a GET route answering HEAD too, one route per verb for the /functions twins,
// an input schema and three hooks each, validators not compiled, as the kit
// defers them), in a fresh process. What boot time a machine gives for that
// many routes is Fastify's own cost; the kit's boot above it is the kit's.
// argv: N. Prints its BareRoutesSample as one marked JSON line on stdout.
import { performance } from 'node:perf_hooks'
import Fastify, { type FastifySchema, type HTTPMethods, type RouteHandlerMethod, type onRequestHookHandler, type onSendHookHandler, type preValidationHookHandler } from 'fastify'
import { generatedFunctions, GENERATED_URL_PREFIXES } from './generated-functions.js'
import { BARE_ROUTES_RESULT_MARK, MOUNT, type BareRoutesSample } from './shared.js'

const count = Number(process.argv[2])
if (!Number.isInteger(count) || count < 0) throw new Error('usage: bare-routes.ts N')

const input = { type: 'object', properties: { title: { type: 'string' }, count: { type: 'number' }, status: { enum: ['draft', 'published'] } } }
const onRequest: onRequestHookHandler = (_request, _reply, done) => done()
const preValidation: preValidationHookHandler[] = [(_request, _reply, done) => done(), (_request, _reply, done) => done()]
const onSend: onSendHookHandler = (_request, _reply, payload, done) => done(null, payload)
const handler: RouteHandlerMethod = async () => ({ ok: true })
const validatorCompiler = () => () => true

const app = Fastify({ logger: { level: 'warn' } })
let routes = 0
app.addHook('onRoute', (route) => {
  if (GENERATED_URL_PREFIXES.some((prefix) => route.url.startsWith(prefix))) routes++
})
const started = performance.now()
const cpu = process.cpuUsage()
await app.register(async (scope) => {
  const route = (method: HTTPMethods[], url: string) => {
    const inQuery = method.includes('GET')
    const schema: FastifySchema = inQuery ? { querystring: input } : { body: input }
    const verbs = inQuery ? { method: [...method, 'HEAD'] as HTTPMethods[], exposeHeadRoute: false, onSend } : { method }
    scope.route({ ...verbs, url, schema, validatorCompiler, onRequest, preValidation, handler })
  }
  for (const { name, prefix, methods } of generatedFunctions(count)) {
    const inQuery = methods.filter((method) => method === 'GET')
    const inBody = methods.filter((method) => method !== 'GET' && method !== 'HEAD')
    if (inQuery.length > 0) route(inQuery, `${MOUNT}/${prefix}/${name}`)
    if (inBody.length > 0) route(inBody, `${MOUNT}/${prefix}/${name}`)
  }
  // Every function here has a @Route prefix: the kit serves their /functions twins with one route per verb.
  if (count > 0) {
    route(['POST'], `${MOUNT}/functions/:name`)
    route(['GET'], `${MOUNT}/functions/:name`)
  }
})
await app.ready()
const { user, system } = process.cpuUsage(cpu)
const sample: BareRoutesSample = { functions: count, routes, bootMs: performance.now() - started, bootCpuMs: (user + system) / 1000 }
await app.close()
process.stdout.write(`\n${BARE_ROUTES_RESULT_MARK}${JSON.stringify(sample)}\n`)

// API documentation: the OpenAPI 3.0 document of the example app and of more
// declarations, checked with a maintained OpenAPI validator and rule by rule;
// Swagger UI in a real headless Chromium; and the app without @fastify/swagger-ui.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { register } from 'node:module'
import path from 'node:path'
import { compileErrors, validate } from '@readme/openapi-parser'
import {
  BaseModel, CloudFunction, ParseClass, ParseField, ParseVersionField, ProtectedCloudFunction, Route, setupSwagger, Type, type CloudFunctionOptions
} from '../lib/index.js'
import { resetKitConfig } from '../lib/config.js'
import { checkOperationIds, operationIds } from '../lib/docs/operation-ids.js'
import { packageInfo } from '../lib/docs/package-info.js'
import { kitPlugin } from '../plugin.js'
import { buildExampleApp } from '../fixtures/app.js'
import { APP_ID, MASTER_KEY, httpRequest, tempDir } from './helpers/kit.js'
import { launchChromium, noChromium } from './helpers/browser.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'
import { sharedPostgres } from './helpers/shared-postgres.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

/** Set to 1 (Atomics: the module hooks run on a thread of their own): '@fastify/swagger-ui' does not resolve, as when not installed. */
const swaggerUiMissing = new Int32Array(new SharedArrayBuffer(4))
register(`data:text/javascript,${encodeURIComponent(`let missing
export function initialize (data) { missing = data.missing }
export async function resolve (specifier, context, next) {
  if (Atomics.load(missing, 0) === 1 && (specifier === '@fastify/swagger-ui' || specifier.startsWith('@fastify/swagger-ui/'))) {
    const error = new Error("Cannot find package '@fastify/swagger-ui' imported from " + context.parentURL)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}`)}`, { data: { missing: swaggerUiMissing } })
const EXAMPLE_MASTER_KEY = 'example-master-key-for-the-docs-test-7Qx2'
const FIXTURE_PATHS = [
  '/functions/hello', '/notes/createNote', '/notes/deleteNote', '/notes/getNote', '/notes/listNotes', '/notes/updateNote',
  '/orders/createOrder', '/orders/getOrder', '/orders/setStatus', '/products/listProducts'
]
const SESSION_OR_MASTER = [{ appId: [], sessionToken: [] }, { appId: [], masterKey: [] }]
const APP_ID_ONLY = [{ appId: [] }]

interface Served {
  app: FastifyInstance
  origin: string
  get (url: string): Promise<{ status: number, text: string, json: any, type: string }>
}

/** A database of its own for a kit of this file, on the test process's one PostgreSQL (shared-postgres.ts). */
async function kitDatabase (t: Test, dir: string): Promise<{ dataDir: string, ephemeralDatabase: true, databaseURI?: string }> {
  const { databaseURI } = await sharedPostgres(t)
  // The kit keeps its files beside dataDir, as startKit's kits do.
  return { dataDir: path.join(dir, 'postgres'), ephemeralDatabase: true, ...(databaseURI ? { databaseURI } : {}) }
}

/** The example application (fixtures/app.ts) on a database of its own, listening on loopback. */
async function startExampleApp (t: Test, logLines?: string[]): Promise<Served> {
  resetKitConfig()
  process.env.DOCS_ENABLED = 'true'
  delete process.env.DOCS_PATH
  const dir = tempDir('fpk-docs-')
  const logger = logLines
    ? { level: 'warn', stream: { write: (line: string) => { logLines.push(line) } } }
    : { level: process.env.TEST_LOG_LEVEL ?? 'error' }
  const app = await buildExampleApp({
    kit: { ...await kitDatabase(t, dir), masterKey: EXAMPLE_MASTER_KEY },
    // Parse's first boot on a busy machine can outlast Fastify's 10 s default.
    fastify: { logger, pluginTimeout: 120_000 }
  })
  return listen(t, app, dir)
}

async function listen (t: Test, app: FastifyInstance, dir: string): Promise<Served> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return {
    app,
    origin,
    async get (url) {
      const result = await httpRequest(origin, 'GET', url)
      return { status: result.status, text: result.text, json: result.json, type: result.headers.get('content-type') ?? '' }
    }
  }
}

async function assertValidOpenApi30 (t: Test, document: any): Promise<void> {
  t.match(document.openapi, /^3\.0\.\d+$/, 'declares OpenAPI 3.0')
  const result = await validate(structuredClone(document))
  t.ok(result.valid, result.valid ? 'valid OpenAPI 3.0 (@readme/openapi-parser)' : compileErrors(result))
}

/**
 * Redocly's lint, typed for what this file passes it: checking a literal against its own config
 * type (derived from a JSON schema) cost tsc some 2.3 s of `npm run typecheck`'s 10.
 */
interface RedoclyLint {
  createConfig (config: { extends: string[], rules: Record<string, 'error' | 'warn' | 'off'> }): Promise<unknown>
  lintFromString (options: { source: string, absoluteRef: string, config: unknown }): Promise<Array<{ severity: string, ruleId: string, message: string, location: Array<{ pointer?: string }> }>>
}

/** Loaded when a lint runs (some 0.8 CPU-s to import). */
const redocly = async () => await import('@redocly/openapi-core') as unknown as RedoclyLint

/** Redocly's recommended rules, with operationId, license and unused components as errors. */
async function assertLintClean (t: Test, document: any): Promise<void> {
  const { createConfig, lintFromString } = await redocly()
  const config = await createConfig({
    extends: ['recommended'],
    rules: { 'operation-operationId': 'error', 'info-license': 'error', 'no-unused-components': 'error' }
  })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`), [],
    'no problem under Redocly\'s recommended rules plus operation-operationId, info-license and no-unused-components')
}

function operationsOf (document: any): Array<{ path: string, method: string, operation: any }> {
  const found = []
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      if (item[method]) found.push({ path, method, operation: item[method] })
    }
  }
  return found
}

function assertNoSecret (t: Test, text: string, secret: string, label: string): void {
  t.notOk(text.includes(secret), `${label} does not contain the master key`)
}

t.test('configuration mistakes fail at boot, naming the option', async (t) => {
  const cases: Array<[unknown, string | undefined, RegExp]> = [
    [{ version: '1.0.0' }, undefined, /setupSwagger option "title": required/],
    [{ title: 'API' }, undefined, /setupSwagger option "version": required/],
    [{ title: 'API', version: '1', restApiKey: 'yes' }, undefined, /setupSwagger option "restApiKey": must be true or false/],
    [{ title: 'API', version: '1', schemes: ['ftp'] }, undefined, /setupSwagger option "schemes"/],
    [{ title: 'API', version: '1', host: 'https://api.example.com' }, undefined, /setupSwagger option "host"/],
    [{ title: 'API', version: '1', basePath: 'parse' }, undefined, /setupSwagger option "basePath": must start with "\/"/],
    [{ title: 'API', version: '1', enabled: true }, undefined, /setupSwagger option "enabled": unknown option/],
    [{ title: 'API', version: '1' }, 'api-docs', /setupSwagger option "path": must start with "\/"/],
    [{ title: 'API', version: '1' }, '/docs/:id', /setupSwagger option "path": must be a plain URL path/],
    [{ title: 'API', version: '1' }, '/', /setupSwagger option "path": must not be "\/"/],
    [{ title: 'API', version: '1', license: 'MIT' }, undefined, /setupSwagger option "license": must be \{ name, url\? \} or false/],
    [{ title: 'API', version: '1', contact: { mail: 'a@b.c' } }, undefined, /setupSwagger option "contact": must be \{ name\?, url\?, email\? \} or false/],
    [{ title: 'API', version: '1', models: 'some' }, undefined, /setupSwagger option "models": must be "referenced" or "all"/]
  ]
  for (const [config, docsPath, message] of cases) {
    const app = Fastify()
    await t.rejects(setupSwagger(app, config as never, docsPath), message, `${JSON.stringify(config)} at ${docsPath ?? 'the default path'}`)
    await app.close()
  }
  for (const [docs, message] of [
    [{ version: '1.0.0' }, /kitPlugin option "docs\.title": required/],
    [{ title: 'API', version: '1', path: 'docs' }, /kitPlugin option "docs\.path": must start with "\/"/],
    ['on', /kitPlugin option "docs": must be an object/]
  ] as Array<[unknown, RegExp]>) {
    resetKitConfig()
    const app = Fastify()
    await t.rejects(async () => { await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, docs: docs as never }) }, message)
    await app.close().catch(() => {})
  }
})

t.test('the swagger option of a @CloudFunction is checked at import', async (t) => {
  const declare = (swagger: unknown) => () => {
    class Misdeclared {
      @CloudFunction({ swagger } as CloudFunctionOptions)
      static misdeclared () { return null }
    }
    return Misdeclared
  }
  t.throws(declare({ sumary: 'x' }), { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /^@CloudFunction Misdeclared\.misdeclared: option "swagger\.sumary" is not a swagger option; did you mean "summary"\?/ })
  t.throws(declare({ operationID: 'x' }), { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /did you mean "operationId"\?/ })
  t.throws(declare({ examples: { answers: {} } }), { code: 'FPK_ERR_ROUTE_OPTION_UNKNOWN', message: /option "swagger\.examples\.answers" is not an example; did you mean "answer"\?/ })
  t.throws(declare({ deprecated: 'yes' }), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /option "swagger\.deprecated" must be true or false/ })
  t.throws(declare({ operationId: 'create note' }), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /option "swagger\.operationId" must be letters, digits and _/ })
  t.throws(declare({ responses: { 201: { description: 'Created' } } }), {
    code: 'FPK_ERR_ROUTE_OPTION_INVALID',
    message: /option "swagger\.responses\.201" is not what the route answers: a declared function answers 200 on success/
  })
  t.throws(declare({ responses: { 2000: { description: 'x' } } }), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: /"swagger\.responses\.2000" is not an HTTP status/ })
  // Two functions the document would give one operationId (checked when the server gets ready).
  const fn = (name: string, prefix: string | undefined, options: CloudFunctionOptions) => ({ name, prefix, options, label: `Declared.${name}`, owner: Object, isStatic: true, invoke: () => null })
  t.throws(() => operationIds([fn('first', undefined, { swagger: { operationId: 'same' } }), fn('second', undefined, { swagger: { operationId: 'same' } })]), {
    code: 'FPK_ERR_ROUTE_OPTION_INVALID',
    message: /^@CloudFunction Declared\.second: its operationId "same" is also that of Declared\.first/
  })
  t.throws(() => operationIds([fn('bC', 'a', {}), fn('cD', undefined, { swagger: { operationId: 'aBC' } })]), { message: /"aBC" is also that of Declared\.bC/ }, 'a derived id counts too')
  // The boot's check (onReady) builds no map but refuses exactly what the document's ids refuse, verb suffixes included.
  const twoVerbs = fn('archive', 'box', { methods: ['GET', 'DELETE'] })
  const clashes = [
    [fn('first', undefined, { swagger: { operationId: 'same' } }), fn('second', undefined, { swagger: { operationId: 'same' } })],
    [fn('bC', 'a', {}), fn('cD', undefined, { swagger: { operationId: 'aBC' } })],
    [twoVerbs, fn('other', undefined, { swagger: { operationId: 'boxArchiveDelete' } })]
  ]
  for (const functions of clashes) {
    const refusal = t.throws(() => operationIds(functions)) as Error
    t.throws(() => checkOperationIds(functions), { code: 'FPK_ERR_ROUTE_OPTION_INVALID', message: refusal.message }, refusal.message)
  }
  const apart = [twoVerbs, fn('other', undefined, { swagger: { operationId: 'boxArchiveGet' } }), fn('stow', 'shelf', { methods: ['PUT', 'PATCH'] })]
  t.doesNotThrow(() => checkOperationIds(apart), 'ids that differ pass the check')
  t.same([...operationIds(apart)].map(([name, byVerb]) => [name, [...byVerb]]), [
    ['archive', [['get', 'boxArchive'], ['delete', 'boxArchiveDelete']]],
    ['other', [['post', 'boxArchiveGet']]],
    ['stow', [['put', 'shelfStow'], ['patch', 'shelfStowPatch']]]
  ], 'the document\'s ids: each function its own, the first verb bare, the others suffixed')
})

t.test('license and contact default to the application\'s package.json', async (t) => {
  const dir = tempDir('fpk-docs-package-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  t.same(packageInfo(dir), {}, 'no package.json: neither')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ license: 'Apache-2.0', author: 'Ada Lovelace <ada@example.com> (https://example.com/ada)' }))
  t.same(packageInfo(dir), {
    license: { name: 'Apache-2.0', url: 'https://spdx.org/licenses/Apache-2.0.html' },
    contact: { name: 'Ada Lovelace', email: 'ada@example.com', url: 'https://example.com/ada' }
  })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ license: '(MIT OR Apache-2.0)', author: { name: 'Shop team' } }))
  t.same(packageInfo(dir), { license: { name: '(MIT OR Apache-2.0)' }, contact: { name: 'Shop team' } }, 'an expression has no single text to link')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ license: 'UNLICENSED' }))
  t.same(packageInfo(dir), {}, 'UNLICENSED: no license in the document')
})

t.test('setupSwagger on its own documents the routes added after it', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await setupSwagger(app, { title: 'Standalone', version: '2.0.0', basePath: '/' }, '/docs')
  app.post('/echo', { schema: { tags: ['tools'], summary: 'Echoes', body: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } } }, async (request) => request.body)
  await app.ready()
  const response = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  await assertValidOpenApi30(t, document)
  t.same(document.info, { title: 'Standalone', description: 'Auto-generated API documentation', version: '2.0.0', license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' } }, 'title, version, the default description and the package\'s license')
  t.same(document.servers, [{ url: '/' }])
  t.same(Object.keys(document.paths), ['/echo'], 'the application\'s route, not the docs routes')
  t.same(document.paths['/echo'].post.requestBody.content['application/json'].schema.required, ['text'])
  t.equal((await app.inject({ method: 'GET', url: '/docs' })).statusCode, 200, 'Swagger UI is served (the package is installed here)')
})

t.test('the example app', async (t) => {
  const served = await startExampleApp(t)
  const json = await served.get('/api-docs/json')
  t.equal(json.status, 200, 'GET /api-docs/json')
  t.match(json.type, /application\/json/)
  const document = json.json

  t.test('is valid OpenAPI 3.0', async (t) => {
    await assertValidOpenApi30(t, document)
    t.same(document.info, {
      title: 'fastify-parse-kit example',
      description: 'Auto-generated API documentation',
      version: '1.0.0',
      license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' }
    }, 'the license of the package.json in the working directory')
    t.same(document.servers, [{ url: '/parse' }], 'basePath defaults to the mount path')
  })

  t.test('passes Redocly\'s recommended lint with operationId, license and unused-component rules', async (t) => {
    await assertLintClean(t, document)
  })

  t.test('operationIds: prefix and method name, the first declared verb without a suffix', async (t) => {
    const ids = operationsOf(document).map(({ path, method, operation }) => `${method} ${path} ${operation.operationId}`).sort()
    t.same(ids, [
      'get /functions/hello helloGet',
      'get /notes/getNote notesGetNote',
      'get /notes/listNotes notesListNotes',
      'get /orders/getOrder ordersGetOrder',
      'get /products/listProducts productsListProducts',
      'post /functions/hello hello',
      'post /notes/createNote notesCreateNote',
      'post /notes/deleteNote notesDeleteNote',
      'post /notes/updateNote notesUpdateNote',
      'post /orders/createOrder ordersCreateOrder',
      'post /orders/setStatus ordersSetStatus'
    ])
  })

  t.test('swagger.examples: the request on the body or each query parameter, the answer on the 200', async (t) => {
    const create = document.paths['/notes/createNote'].post
    t.same(create.requestBody.content['application/json'].example, { title: 'Groceries', body: 'Milk, eggs', status: 'draft' })
    t.match(create.responses['200'].content['application/json'].example, { objectId: 'xWMyZ4YEGZ', slug: 'groceries' })
    const list = document.paths['/notes/listNotes'].get.parameters
    t.same(list.map((p: any) => [p.name, p.example]), [['limit', 20], ['after', undefined], ['status', 'published']])
    t.match(document.paths['/orders/createOrder'].post.requestBody.content['application/json'].example, { lines: [{ quantity: 2 }], dropPoint: { latitude: 52.52 } })
  })

  t.test('each operation lists the errors it can give', async (t) => {
    const statuses = (path: string, method: string) => Object.keys(document.paths[path][method].responses).sort()
    t.same(statuses('/functions/hello', 'get'), ['200', '400', '403', '405', '500', '503', 'default'], 'a read without session, roles or limit: no 404, 409, 413 or 429')
    t.same(statuses('/notes/createNote', 'post'), ['200', '400', '403', '405', '413', '415', '500', '503', 'default'], 'a body: 413 and 415 as well')
    t.same(statuses('/notes/getNote', 'get'), ['200', '400', '403', '404', '405', '500', '503', 'default'], '404 where the function declares it')
    t.same(statuses('/orders/setStatus', 'post'), ['200', '400', '403', '404', '405', '409', '413', '415', '500', '503', 'default'], '404 and 409 where declared')
    const declared = document.paths['/notes/getNote'].get.responses['404']
    t.same(declared, {
      description: '101: no note with this id, or the caller may not read it',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorAnswer' } } }
    }, 'a declared error status with only a description answers the shared error body')
    t.match(document.paths['/notes/getNote'].get.responses.default.description, /101 → 404, 5001 \(CONFLICT\) → 409/, 'default: what a handler\'s own Parse.Error answers')
    t.notOk(document.paths['/notes/createNote'].post.responses['429'], 'no rateLimit, no 429')
  })

  t.test('paths: @Route prefix + method name, /functions/{name} without @Route, nothing else', async (t) => {
    t.same(Object.keys(document.paths).sort(), FIXTURE_PATHS)
    t.notOk(Object.keys(document.paths).some((p) => p.includes('*')), 'Parse\'s catch-all routes are hidden')
    t.same(Object.keys(document.paths['/notes/createNote']), ['post'], 'only the declared verb: the 405 answers are hidden')
    t.same(Object.keys(document.paths['/functions/hello']).sort(), ['get', 'post'], 'hello declares POST and GET')
  })

  t.test('GET takes query parameters, other verbs a JSON body, from validation.fields', async (t) => {
    for (const { path, method, operation } of operationsOf(document)) {
      if (method === 'get') t.notOk(operation.requestBody, `${method} ${path} has no body`)
      else t.ok(operation.requestBody?.content?.['application/json'], `${method} ${path} takes a JSON body`)
    }
    const list = document.paths['/notes/listNotes'].get.parameters
    t.same(list.map((p: any) => [p.in, p.name, p.required]), [['query', 'limit', false], ['query', 'after', false], ['query', 'status', false]])
    t.same(list[2].schema.enum, ['draft', 'published'])
    t.same(list[1].schema, { type: 'string' }, 'after: an opaque string')
    t.match(list[1].description, /`next` of the previous page.*(skip|offset).*refused/s, 'after says where it comes from, and that offset paging is refused')
    t.same(document.paths['/notes/getNote'].get.parameters.map((p: any) => [p.name, p.required]), [['id', true]])
    const create = document.paths['/notes/createNote'].post.requestBody.content['application/json'].schema
    t.same(Object.keys(create.properties), ['title', 'body', 'status'])
    t.same(create.required, ['title'])
    // fieldsOf(Note, …): the model's description and limits, not restated by the handler.
    t.equal(create.properties.title.description, 'Headline')
    t.equal(create.properties.title.maxLength, 200)
    t.same(create.properties.status.enum, ['draft', 'published'])
    t.equal(document.paths['/notes/createNote'].post.summary, 'Creates a note owned by the caller; published notes are public.', 'description → summary')
    t.same(document.paths['/notes/listNotes'].get.tags, ['notes'])
    t.same(document.paths['/functions/hello'].get.tags, ['functions'])
  })

  t.test('a paged list answers next, count and countKind, each described', async (t) => {
    for (const path of ['/notes/listNotes', '/products/listProducts']) {
      const answer = document.paths[path].get.responses['200'].content['application/json'].schema
      t.same(Object.keys(answer.properties), ['results', 'next', 'count', 'countKind'], path)
      t.same(answer.required, ['results', 'next'], `${path}: count and countKind are there when the list counts`)
      t.same(answer.properties.next.nullable, true, `${path}: next is null on the last page`)
      t.match(answer.properties.next.description, /`after`/)
      t.same(answer.properties.count.type, 'integer')
      t.match(answer.properties.count.description, /countKind/, 'count says that countKind tells what it means')
      t.same(answer.properties.countKind.enum, ['exact', 'estimated', 'atLeast'])
      t.match(answer.properties.countKind.description, /atLeast: at least `count` rows match/)
    }
    t.match(document.paths['/notes/listNotes'].get.summary, /exact up to 1000, then `countKind` is `atLeast`/, 'the list says which count it answers')
  })

  t.test('security: application id everywhere; requiresAuth adds session token or master key', async (t) => {
    t.same(document.security, APP_ID_ONLY)
    const schemes = document.components.securitySchemes
    t.same(Object.keys(schemes).sort(), ['appId', 'masterKey', 'sessionToken'], 'no REST API key unless restApiKey is true')
    t.same([schemes.appId.in, schemes.appId.name], ['header', 'X-Parse-Application-Id'])
    t.match(schemes.appId.description, /"fastify-parse-kit-example"/, 'the configured appId is shown in the authorize dialog')
    for (const path of ['/notes/createNote', '/notes/updateNote', '/notes/deleteNote']) t.same(document.paths[path].post.security, SESSION_OR_MASTER, path)
    for (const path of ['/notes/listNotes', '/notes/getNote']) t.same(document.paths[path].get.security, APP_ID_ONLY, path)
    t.same(document.paths['/functions/hello'].post.security, APP_ID_ONLY)
  })

  t.test('routes left out of the document still answer', async (t) => {
    const headers = { 'x-parse-application-id': 'fastify-parse-kit-example' }
    const hello = await httpRequest(served.origin, 'POST', '/parse/functions/hello', { headers, body: {} })
    t.same([hello.status, hello.json], [200, { result: { message: 'Hello, world!' } }], 'the declared function')
    t.equal((await httpRequest(served.origin, 'GET', '/parse/notes/createNote', { headers })).status, 405, 'a verb it does not declare')
    t.equal((await httpRequest(served.origin, 'GET', '/parse/classes/Note', { headers })).status, 403, 'Parse\'s closed REST surface')
  })

  t.test('the master key is never rendered', async (t) => {
    assertNoSecret(t, json.text, EXAMPLE_MASTER_KEY, '/api-docs/json')
    for (const url of ['/api-docs', '/api-docs/static/swagger-initializer.js', '/api-docs/yaml']) {
      const page = await served.get(url)
      t.equal(page.status, 200, `GET ${url}`)
      assertNoSecret(t, page.text, EXAMPLE_MASTER_KEY, url)
    }
    t.match((await served.get('/api-docs')).type, /text\/html/, 'Swagger UI at /api-docs')
  })

  t.test('Swagger UI in headless Chromium lists the endpoints', { skip: noChromium() }, async (t) => {
    await browserCheck(t, served.origin)
  })

  t.test('no component schema that no operation uses', async (t) => {
    t.same(Object.keys(document.components.schemas), ['ErrorAnswer'], 'model schemas are left out unless an operation refers to them (models: "all" keeps them)')
  })

  t.test('built again when a declaration is added', async (t) => {
    const before = await served.get('/api-docs/json')
    t.notOk(before.json.components.schemas.DocsLateModel)
    declareLateModels('DocsLateModel')
    const after = (await served.get('/api-docs/json')).json
    t.notOk(after.components.schemas.DocsLateModel, 'a model no operation uses stays out')
    await assertLintClean(t, after)
  })
})

// Before the shop's declarations: the example app's document must hold its own paths only.
t.test('without @fastify/swagger-ui installed', async (t) => {
  // The package fails to resolve exactly as one that is not installed, from here to the test's end
  // (a resolve hook of this process; a child process for it cost some 4 CPU-s more).
  Atomics.store(swaggerUiMissing, 0, 1)
  t.teardown(() => { Atomics.store(swaggerUiMissing, 0, 0) })
  await t.rejects(import('@fastify/swagger-ui' as string), { code: 'ERR_MODULE_NOT_FOUND' }, 'the package does not resolve in this process')
  const logLines: string[] = []
  const served = await startExampleApp(t, logLines)
  const ui = await served.get('/api-docs')
  t.equal(ui.status, 404, 'GET /api-docs answers 404')
  const json = await served.get('/api-docs/json')
  t.equal(json.status, 200, 'GET /api-docs/json still serves the document')
  await assertValidOpenApi30(t, json.json)
  t.same(Object.keys(json.json.paths).sort(), FIXTURE_PATHS)
  assertNoSecret(t, json.text, EXAMPLE_MASTER_KEY, '/api-docs/json')
  await served.get('/api-docs')
  const warnings = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40 && /@fastify\/swagger-ui is not installed/.test(entry.msg))
  t.equal(warnings.length, 1, 'one warning, at boot, however often the path is asked for')
  t.match(warnings[0]?.msg, /GET \/api-docs \(Swagger UI\) answers 404; the OpenAPI document is served at GET \/api-docs\/json/)
})

t.test('declarations shape the document (app calls setupSwagger after kitPlugin)', async (t) => {
  declareShop()
  resetKitConfig()
  const dir = tempDir('fpk-docs-')
  // Parse's first boot on a busy machine can outlast Fastify's 10 s default plugin timeout.
  const app = Fastify({ logger: { level: process.env.TEST_LOG_LEVEL ?? 'error' }, pluginTimeout: 120_000 })
  await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, ...await kitDatabase(t, dir) })
  await setupSwagger(app, {
    title: 'Shop',
    version: '3.1.0',
    description: 'The shop',
    restApiKey: true,
    host: 'api.example.com',
    schemes: ['https'],
    appId: APP_ID,
    license: { name: 'Proprietary' },
    contact: { name: 'Shop API team', email: 'api@shop.example.com' },
    models: 'all'
  }, '/reference')
  // The application's own routes, documented the normal Fastify way.
  app.get('/status', { schema: { summary: 'Service status', tags: ['ops'], response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }))
  app.get('/parse/custom/ping', { schema: { summary: 'Ping under the mount' } }, async () => 'pong')
  const served = await listen(t, app, dir)

  t.equal((await served.get('/api-docs/json')).status, 404, 'nothing at the default path')
  const json = await served.get('/reference/json')
  t.equal(json.status, 200, 'GET /reference/json')
  const document = json.json
  await assertValidOpenApi30(t, document)
  assertNoSecret(t, json.text, MASTER_KEY, '/reference/json')
  assertNoSecret(t, (await served.get('/reference')).text, MASTER_KEY, '/reference')
  t.same(document.info, {
    title: 'Shop',
    description: 'The shop',
    version: '3.1.0',
    license: { name: 'Proprietary' },
    contact: { name: 'Shop API team', email: 'api@shop.example.com' }
  }, 'license and contact as configured')
  t.same(document.servers, [{ url: 'https://api.example.com/parse' }], 'host, schemes and basePath make the server URL')

  t.test('no lint error on the declared operations (several verbs, models: "all")', async (t) => {
    // Every model is listed on purpose here (models: "all"), so that rule is off; the
    // application's own routes say what they say; warnings (summaries, example.com) are the test's.
    const { createConfig, lintFromString } = await redocly()
    const config = await createConfig({ extends: ['recommended'], rules: { 'operation-operationId': 'error', 'info-license': 'error', 'no-unused-components': 'off' } })
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
    const ours = problems.filter((problem) => problem.severity === 'error' && !/~1(status|custom~1ping)\//.test(problem.location[0]?.pointer ?? ''))
    t.same(ours.map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`), [], 'no error')
  })

  t.test('operationId: derived, overridden, one per verb; deprecated', async (t) => {
    const paths = document.paths
    t.equal(paths['/docs-orders/placeDocsOrder'].post.operationId, 'docsOrdersPlaceDocsOrder', 'a kebab-case prefix in camelCase, then the method name')
    t.same([paths['/docs-orders/setDocsStatus'].put.operationId, paths['/docs-orders/setDocsStatus'].patch.operationId], ['docsOrdersSetDocsStatus', 'docsOrdersSetDocsStatusPatch'], 'the first declared verb keeps the id')
    t.same([paths['/docs-orders/archive'].get.operationId, paths['/docs-orders/archive'].delete.operationId], ['docsOrdersArchive', 'docsOrdersArchiveDelete'])
    t.equal(paths['/functions/searchLoose'].get.operationId, 'searchLoose', 'without @Route: the method name')
    t.equal(paths['/docs-orders/describedOrder'].post.operationId, 'describeOrder', 'swagger.operationId')
    t.equal(paths['/docs-orders/describedOrder'].post.deprecated, true, 'swagger.deprecated')
    t.notOk('deprecated' in paths['/docs-orders/placeDocsOrder'].post)
    t.notOk(paths['/status'].get.operationId, 'the application\'s own route keeps what it declares')
    t.equal(paths['/docs-orders/getDocsOrder'].get.summary, 'Get docs order', 'no description: the method name in words as the summary')
  })

  t.test('429 only with a rateLimit, 404 only where declared', async (t) => {
    const limited = document.paths['/docs-orders/limitedPing'].post.responses
    t.match(limited['429'], { description: /155: more than 5 calls in 1000 ms/, headers: { 'Retry-After': {} } })
    t.notOk(document.paths['/docs-orders/placeDocsOrder'].post.responses['429'])
    t.notOk(document.paths['/docs-orders/placeDocsOrder'].post.responses['404'])
    t.notOk(document.paths['/docs-orders/placeDocsOrder'].post.responses['409'], 'no 409 unless declared, though a versioned model exists')
  })

  t.test('a string answer is JSON on both paths, with or without a schema that fits it', async (t) => {
    const headers = { 'x-parse-application-id': APP_ID }
    for (const name of ['stringAnswer', 'stringInsteadOfObject', 'protectedPing']) {
      const own = await httpRequest(served.origin, 'POST', `/parse/docs-orders/${name}`, { headers: name === 'protectedPing' ? { ...headers, 'x-parse-master-key': MASTER_KEY } : headers, body: {} })
      t.same([own.status, own.headers.get('content-type'), own.text], [200, 'application/json; charset=utf-8', '"pong"'], `${name} on its route`)
      const twin = await httpRequest(served.origin, 'POST', `/parse/functions/${name}`, { headers: name === 'protectedPing' ? { ...headers, 'x-parse-master-key': MASTER_KEY } : headers, body: {} })
      t.same([twin.status, twin.headers.get('content-type'), twin.json], [200, 'application/json; charset=utf-8', { result: 'pong' }], `${name} on /functions`)
    }
    t.same(document.paths['/docs-orders/stringAnswer'].post.responses['200'].content['application/json'].schema, { type: 'string', description: 'A word' })
    // A refusal that names a field names it as input validation does: where it was sent, then its path.
    const misplaced = await httpRequest(served.origin, 'DELETE', '/parse/docs-orders/archive?before=x', { headers, body: { before: 'y' } })
    t.same([misplaced.status, misplaced.json], [400, { code: 142, error: 'querystring/before must be sent in the request body: it is a declared input of archive' }])
    t.same(Object.keys(document.paths['/functions/putLoose']), ['put'], 'a function without @Route: its declared verb')
    t.equal(document.paths['/functions/putLoose'].put.operationId, 'putLoose')
  })

  t.test('built again when a model is declared later', async (t) => {
    declareLateModels('DocsLaterModel')
    const after = (await served.get('/reference/json')).json
    t.same(after.components.schemas.DocsLaterModel?.properties?.label, { type: 'string', description: 'Declared after the first request' })
    t.notOk(after.components.schemas.DocsNotAModel, 'fields without @ParseClass give no schema')
  })

  t.test('one schema per @ParseClass with its constraints (models: "all")', async (t) => {
    const note = document.components.schemas.Note
    t.equal(note.type, 'object')
    t.equal(note.description, 'A short text; public once published, otherwise only its author reads it')
    t.same(note.required, ['title'])
    t.same(note.properties.title, { type: 'string', maxLength: 200, description: 'Headline' })
    t.same(note.properties.status, { type: 'string', enum: ['draft', 'published'], default: 'draft' })
    t.same(note.properties.views, { type: 'integer', minimum: 0, default: 0 })
    t.same(note.properties.createdAt, { type: 'string', format: 'date-time', readOnly: true })
  })

  t.test('paths and verbs', async (t) => {
    const paths = document.paths
    for (const p of ['/docs-orders/placeDocsOrder', '/docs-orders/getDocsOrder', '/docs-orders/setDocsStatus', '/docs-orders/archive', '/docs-orders/protectedPing', '/docs-orders/describedOrder', '/functions/searchLoose', '/functions/postOnly']) {
      t.ok(paths[p], `${p} is documented`)
    }
    t.notOk(paths['/functions/placeDocsOrder'], 'a routed function is not repeated at /functions/{name}')
    t.same(Object.keys(paths['/docs-orders/setDocsStatus']).sort(), ['patch', 'put'])
    t.same(Object.keys(paths['/docs-orders/archive']).sort(), ['delete', 'get'])
    t.same(Object.keys(paths['/functions/searchLoose']), ['get'], 'a function without @Route keeps its declared verb')
    t.same(Object.keys(paths['/functions/postOnly']), ['post'])
    t.ok(paths['/custom/ping'], 'the application\'s route under the mount is relative to the server URL')
    t.ok(paths['/status'], 'the application\'s route outside the mount keeps its path…')
    t.same(paths['/status'].servers, [{ url: 'https://api.example.com' }], '…and its own server root')
    t.same(paths['/status'].get.tags, ['ops'])
    t.equal(paths['/status'].get.summary, 'Service status')
    t.same(paths['/status'].get.responses['200'].content['application/json'].schema.properties.ok, { type: 'boolean' })
    t.notOk(Object.keys(paths).some((p) => p.startsWith('/reference')), 'the docs\' own routes are hidden')
  })

  t.test('query parameters for GET, a JSON body for every other verb', async (t) => {
    const paths = document.paths
    t.same(paths['/docs-orders/archive'].get.parameters.map((p: any) => [p.in, p.name, p.required, p.schema.type]), [['query', 'before', true, 'string']])
    t.notOk(paths['/docs-orders/archive'].get.requestBody)
    t.same(paths['/docs-orders/archive'].delete.requestBody.content['application/json'].schema.required, ['before'])
    for (const verb of ['put', 'patch']) {
      const body = paths['/docs-orders/setDocsStatus'][verb].requestBody.content['application/json'].schema
      t.same(body.properties.status.enum, ['pending', 'paid', 'shipped', 'cancelled'], `${verb}: enum from validation.fields options`)
      t.same(body.required, ['id', 'status'])
      t.notOk(paths['/docs-orders/setDocsStatus'][verb].parameters, `${verb} has no query parameters`)
    }
    t.same(paths['/functions/searchLoose'].get.parameters.map((p: any) => [p.name, p.schema.type, p.description]), [['q', 'string', 'Words to look for']])
    t.same(paths['/functions/postOnly'].post.requestBody.content['application/json'].schema, { type: 'object', additionalProperties: true }, 'no fields: an open JSON body')
    t.same(paths['/docs-orders/placeDocsOrder'].post.requestBody.content['application/json'].schema.properties.deliverAfter, { type: 'string', format: 'date-time' })
  })

  t.test('security per function; the REST API key when restApiKey is true', async (t) => {
    const withKey = (requirements: object[]) => requirements.map((r) => ({ ...r, restApiKey: [] }))
    const paths = document.paths
    t.same(document.security, withKey(APP_ID_ONLY), 'the document default')
    t.same(Object.keys(document.components.securitySchemes).sort(), ['appId', 'masterKey', 'restApiKey', 'sessionToken'])
    t.same([document.components.securitySchemes.restApiKey.in, document.components.securitySchemes.restApiKey.name], ['header', 'X-Parse-REST-API-Key'])
    t.same(paths['/docs-orders/placeDocsOrder'].post.security, withKey(SESSION_OR_MASTER), 'requiresAuth')
    t.same(paths['/docs-orders/getDocsOrder'].get.security, withKey(SESSION_OR_MASTER), 'requireRoles')
    t.match(paths['/docs-orders/getDocsOrder'].get.description, /Requires one of the roles Admin, Editor\./)
    t.same(paths['/docs-orders/setDocsStatus'].put.security, withKey(SESSION_OR_MASTER), 'validation.requireUser')
    t.same(paths['/docs-orders/protectedPing'].post.security, withKey(SESSION_OR_MASTER), '@ProtectedCloudFunction')
    t.same(paths['/docs-orders/archive'].get.security, withKey(APP_ID_ONLY), 'no declaration: application id only')
    t.same(paths['/functions/searchLoose'].get.security, withKey(APP_ID_ONLY))
    t.notOk(paths['/status'].get.security, 'the application\'s own route keeps the document default')
    for (const { path, method, operation } of operationsOf(document)) {
      for (const requirement of operation.security ?? []) t.notOk('masterKey' in requirement && Object.keys(requirement).length === 1, `${method} ${path}: the master key alone is never a requirement`)
    }
  })

  t.test('the swagger block: summary, description, tags, responses', async (t) => {
    const operation = document.paths['/docs-orders/describedOrder'].post
    t.equal(operation.summary, 'Describe an order')
    t.equal(operation.description, 'Longer words about the order.')
    t.same(operation.tags, ['Orders', 'Reporting'])
    t.equal(operation.responses['200'].description, 'The order summary')
    t.same(operation.responses['200'].content['application/json'].schema.properties.totalCents, { type: 'integer' })
    t.equal(operation.responses['404'].description, 'No such order')
    t.equal(document.paths['/docs-orders/placeDocsOrder'].post.summary, 'Places an order for the caller.', 'description without a swagger block')
    t.same(document.paths['/docs-orders/placeDocsOrder'].post.tags, ['docs-orders'], 'tag defaults to the @Route prefix')
  })

  t.test('component schemas: types, required, constraints, Pointer and GeoPoint shapes', async (t) => {
    const schemas = document.components.schemas
    t.ok(schemas.Note, 'the example app\'s model')
    t.ok(schemas.DocsCoupon, 'every @ParseClass')
    t.notOk(schemas.DocsDraft, 'a class with fields but without @ParseClass is absent')
    const order = schemas.DocsOrder
    t.equal(order.description, 'An order in the docs test')
    t.same(order.required, ['customer', 'totalCents'])
    t.same(order.properties.customer, {
      type: 'object',
      description: 'Who ordered',
      required: ['__type', 'className', 'objectId'],
      properties: { __type: { type: 'string', enum: ['Pointer'] }, className: { type: 'string', enum: ['_User'] }, objectId: { type: 'string' } }
    })
    t.same(order.properties.coupons.type, 'array')
    t.same(order.properties.coupons.items.properties.className, { type: 'string', enum: ['DocsCoupon'] })
    t.same(order.properties.deliverAfter, { type: 'string', format: 'date-time' })
    t.same(order.properties.dropPoint.required, ['__type', 'latitude', 'longitude'])
    t.same(order.properties.dropPoint.properties.latitude, { type: 'number', minimum: -90, maximum: 90 })
    t.same(order.properties.note, { type: 'string', maxLength: 500 })
    t.same(order.properties.totalCents, { type: 'integer', minimum: 0, description: 'Sum of the lines, in cents' })
    t.same(order.properties.rating, { type: 'number', minimum: 1, maximum: 5 })
    t.same(order.properties.status, { type: 'string', enum: ['pending', 'paid', 'shipped', 'cancelled'] })
    t.same(order.properties.code, { type: 'string', pattern: '^(?:[A-Z]{3}-\\d+)$' })
    t.same(order.properties.version, { type: 'integer', minimum: 1, description: 'Version for optimistic locking; set by the server', readOnly: true })
  })
})

async function browserCheck (t: Test, origin: string): Promise<void> {
  // Kept to look at with FPK_KEEP_SCREENSHOTS=1; otherwise removed with the file's other folders (one a run piled up).
  const screenshot = path.join(tempDir('fpk-docs-screenshot-', { keep: Boolean(process.env.FPK_KEEP_SCREENSHOTS) }), 'api-docs.png')
  const context = await launchChromium(t, { width: 1280, height: 1400 })
  try {
    const page = context.pages()[0] ?? await context.newPage()
    const response = await page.goto(`${origin}/api-docs`)
    t.equal(response?.status(), 200, 'the page loads')
    await page.waitForSelector('.opblock-summary-path', { timeout: scaled(30_000) })
    const listed = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((node) => node.getAttribute('data-path') ?? node.textContent ?? ''))
    t.same([...new Set(listed)].sort(), FIXTURE_PATHS, 'every fixture endpoint is listed')
    t.match(await page.textContent('.info .title'), /fastify-parse-kit example/, 'the title is shown')
    await page.screenshot({ path: screenshot, fullPage: true })
    t.ok(existsSync(screenshot), `screenshot saved: ${screenshot}`)

    await page.click('.btn.authorize')
    await page.waitForSelector('.auth-container', { timeout: scaled(10_000) })
    const dialog = await page.textContent('.modal-ux') ?? ''
    t.match(dialog, /X-Parse-Application-Id/, 'the authorize dialog offers the application id header')
    t.match(dialog, /fastify-parse-kit-example/, '…and shows the configured appId')
    t.match(dialog, /X-Parse-Session-Token/, 'the session token header')
    t.notOk(dialog.includes(EXAMPLE_MASTER_KEY), 'the master key value is not shown')
    await page.screenshot({ path: screenshot.replace(/\.png$/, '-authorize.png') })
  } finally {
    await context.close()
  }
}

/** Declared only when called, so the example app's first document has none of them. */
function declareLateModels (className: string): unknown[] {
  @ParseClass(className)
  class LateModel extends BaseModel {
    @ParseField({ type: 'String', description: 'Declared after the first request' }) declare label: string
  }
  class NotAModel extends BaseModel {
    @ParseField({ type: 'String' }) declare label: string
  }
  return [LateModel, NotAModel]
}

function declareShop (): unknown[] {
  @ParseClass('DocsCoupon')
  class Coupon extends BaseModel {
    @ParseField({ type: 'String', required: true }) declare code: string
  }

  @ParseClass('DocsOrder', { description: 'An order in the docs test' })
  class Order extends BaseModel {
    @ParseField({ type: 'Pointer', targetClass: '_User', required: true, description: 'Who ordered' }) declare customer: unknown
    @ParseField({ type: 'Array', targetClass: 'DocsCoupon' }) declare coupons: unknown[]
    @ParseField({ type: 'Date' }) declare deliverAfter: Date
    @ParseField({ type: 'GeoPoint', geo: true }) declare dropPoint: unknown
    @ParseField({ type: 'String', maxLength: 500 }) declare note: string
    @ParseField({ type: 'Number', required: true, min: 0, integer: true, description: 'Sum of the lines, in cents' }) declare totalCents: number
    @ParseField({ type: 'Number', min: 1, max: 5 }) declare rating: number
    @ParseField({ type: 'String', enum: ['pending', 'paid', 'shipped', 'cancelled'] }) declare status: string
    @ParseField({ type: 'String', pattern: '[A-Z]{3}-\\d+' }) declare code: string
    @ParseVersionField() declare version: number
  }

  class DocsDraft extends BaseModel {
    @ParseField({ type: 'String' }) declare text: string
  }

  const statuses = ['pending', 'paid', 'shipped', 'cancelled']

  @Route('docs-orders')
  class OrderFunctions {
    @CloudFunction({ methods: ['POST'], requiresAuth: true, description: 'Places an order for the caller.', validation: { fields: { deliverAfter: { type: Date }, note: { type: String } } } })
    static placeDocsOrder () { return { id: 'o1' } }

    @CloudFunction({ methods: ['GET'], requireRoles: ['Admin', 'Editor'], validation: { fields: { id: { type: String, required: true } } } })
    static getDocsOrder () { return null }

    @CloudFunction({ methods: ['PUT', 'PATCH'], validation: { requireUser: true, fields: { id: { type: String, required: true }, status: { type: String, required: true, options: statuses } } } })
    static setDocsStatus () { return null }

    @CloudFunction({ methods: ['GET', 'DELETE'], validation: { fields: { before: { type: String, required: true } } } })
    static archive () { return null }

    @ProtectedCloudFunction()
    static protectedPing () { return 'pong' }

    @CloudFunction({
      swagger: {
        operationId: 'describeOrder',
        deprecated: true,
        summary: 'Describe an order',
        description: 'Longer words about the order.',
        tags: ['Orders', 'Reporting'],
        responses: {
          200: { description: 'The order summary', type: 'object', properties: { totalCents: { type: 'integer' } } },
          404: { description: 'No such order', type: 'object', properties: { code: { type: 'integer' }, error: { type: 'string' } } }
        }
      }
    })
    static describedOrder () { return { totalCents: 0 } }

    @CloudFunction({ rateLimit: { windowMs: 1000, max: 5 } })
    static limitedPing () { return { pong: true } }

    @CloudFunction({ returns: Type.String({ description: 'A word' }) })
    static stringAnswer () { return 'pong' }

    // A plain-JavaScript handler that answers other than it declares.
    @CloudFunction({ returns: { ok: { type: Boolean } } })
    static stringInsteadOfObject () { return 'pong' as unknown as { ok: boolean } }
  }

  class LooseFunctions {
    @CloudFunction({ methods: ['GET'], validation: { fields: { q: { type: String, description: 'Words to look for' } } } })
    static searchLoose () { return [] }

    @CloudFunction()
    static postOnly () { return 'ok' }

    @CloudFunction({ methods: ['PUT'] })
    static putLoose () { return 'ok' }
  }

  return [Coupon, Order, DocsDraft, OrderFunctions, LooseFunctions]
}

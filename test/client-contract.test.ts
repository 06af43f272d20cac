// The API document is a contract a generated client can rely on: the example
// app's document goes through openapi-typescript (as `fpk client` does), an
// openapi-fetch client calls every operation with valid and with schema-derived
// invalid inputs, and every answer must be one the operation documents, its body
// matching the documented schema (ajv) and its documented headers present.
import t from 'tap'
import { rmSync } from 'node:fs'
import path from 'node:path'
import createClient from 'openapi-fetch'
import openapiTS, { astToString } from 'openapi-typescript'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { buildExampleApp } from '../fixtures/app.js'
import { resetKitConfig } from '../lib/config.js'
import { tempDir } from './helpers/kit.js'
import { clusterFromTemplate } from './helpers/pg-template.js'

const MASTER_KEY = 'client-contract-master-key'
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

interface Answer { operation: string, method: string, path: string, status: number, body: unknown, headers: Headers, input: string }

t.test('a client generated from the example app\'s document', async (t) => {
  resetKitConfig()
  process.env.DOCS_ENABLED = 'true'
  delete process.env.DOCS_PATH
  const dir = tempDir('fpk-client-')
  await clusterFromTemplate(path.join(dir, 'postgres'))
  const app = await buildExampleApp({
    kit: { dataDir: path.join(dir, 'postgres'), ephemeralDatabase: true, masterKey: MASTER_KEY },
    fastify: { logger: { level: process.env.TEST_LOG_LEVEL ?? 'error' }, pluginTimeout: 120_000 }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const document = await (await fetch(`${origin}/api-docs/json`)).json()
  const token = app.demoToken
  t.match(token, /^r:/, 'the seeded demo user has a session')

  t.test('openapi-typescript types every error answer, not only 200', async (t) => {
    const types = astToString(await openapiTS(document))
    t.match(types, /ErrorAnswer: \{/, 'the shared error schema')
    // Each operation is typed under its operationId (`operations`), which the paths refer to.
    t.match(types, /post: operations\["ordersCreateOrder"\]/, 'a path names its operation by operationId')
    const createOrder = types.slice(types.indexOf('ordersCreateOrder: {'))
    t.match(createOrder, /400: \{/)
    t.match(types, /"Retry-After"\?: number/, 'Retry-After is a typed header')
    // A paged list: the cursor in, the next cursor and the count's meaning out.
    const listNotes = types.slice(types.indexOf('notesListNotes: {'), types.indexOf('notesGetNote: {'))
    t.match(listNotes, /after\?: string;/, 'after is a typed query parameter')
    t.match(listNotes, /next: string \| null;/, 'next: the cursor of the next page, or null')
    t.match(listNotes, /count\?: number;/)
    t.match(listNotes, /countKind\?: "exact" \| "estimated" \| "atLeast";/, 'countKind: what count means')
    t.match(listNotes, /@description How many rows match/, 'count carries its description into the client')
  })

  const client = createClient<any>({ baseUrl: `${origin}/parse` })
  const answers: Answer[] = []
  const call = async (path: string, method: string, input: string, init: { headers?: Record<string, string>, params?: Record<string, unknown>, body?: unknown, raw?: string, contentType?: string, query?: string }) => {
    const headers = init.headers ?? as.app
    let response: Response
    let body: unknown
    if (init.query !== undefined) {
      // A query string as written, which a generated client would not send.
      response = await fetch(`${origin}/parse${path}?${init.query}`, { method: method.toUpperCase(), headers })
      body = await response.json()
    } else if (init.raw !== undefined) {
      response = await fetch(`${origin}/parse${path}`, { method: method.toUpperCase(), headers: { ...headers, 'content-type': init.contentType ?? 'application/json' }, body: init.raw })
      const text = await response.text()
      try { body = text ? JSON.parse(text) : undefined } catch { body = text }
    } else {
      const options = { headers, ...(init.params ? { params: { query: init.params } } : {}), ...(init.body !== undefined ? { body: init.body } : {}) }
      // openapi-fetch has read the body: `data` for a 2xx, `error` otherwise.
      const result = await (client as unknown as Record<string, (path: string, options: object) => Promise<{ response: Response, data?: unknown, error?: unknown }>>)[method.toUpperCase()](path, options)
      response = result.response
      body = response.ok ? result.data : result.error
    }
    const operation = `${method.toUpperCase()} ${path}`
    answers.push({ operation, method, path, status: response.status, body, headers: response.headers, input })
    return { status: response.status, body: body as any }
  }
  const appHeaders = { 'x-parse-application-id': app.kit.options.appId }
  const as = { app: appHeaders, user: { ...appHeaders, 'x-parse-session-token': token! }, master: { ...appHeaders, 'x-parse-master-key': MASTER_KEY } }

  t.test('the happy paths', async (t) => {
    const products = await call('/products/listProducts', 'get', 'valid', { params: { limit: 10 } })
    t.equal(products.status, 200)
    const product = products.body.results[0].objectId
    const order = await call('/orders/createOrder', 'post', 'valid', { headers: as.user, body: { lines: [{ product, quantity: 1 }], note: 'ring twice', coupons: [], dropPoint: { latitude: 1, longitude: 2 } } })
    t.equal(order.status, 200, JSON.stringify(order.body))
    t.equal((await call('/orders/getOrder', 'get', 'valid', { headers: as.user, params: { id: order.body.id } })).status, 200)
    t.equal((await call('/orders/setStatus', 'post', 'valid', { headers: as.user, body: { id: order.body.id, status: 'cancelled' } })).status, 200)
    const note = await call('/notes/createNote', 'post', 'valid', { headers: as.user, body: { title: 'from a typed client', status: 'published' } })
    t.equal(note.status, 200, JSON.stringify(note.body))
    for (const [path, method, params] of [['/notes/getNote', 'get', { id: note.body.objectId }], ['/notes/listNotes', 'get', { limit: 5 }]] as const) {
      t.equal((await call(path, method, 'valid', { headers: as.user, params })).status, 200, path)
    }
    const first = await call('/notes/listNotes', 'get', 'valid', { headers: as.user, params: { limit: 1 } })
    t.same([first.status, first.body.countKind, first.body.results.length], [200, 'exact', 1], 'a page of one, counted exactly (under the cap)')
    t.type(first.body.next, 'string', 'more notes than one: a next page')
    const second = await call('/notes/listNotes', 'get', 'valid', { headers: as.user, params: { limit: 1, after: first.body.next } })
    t.equal(second.status, 200)
    t.not(second.body.results[0].objectId, first.body.results[0].objectId, 'after: the page after the first')
    const tampered = await call('/notes/listNotes', 'get', 'tampered cursor', { headers: as.user, params: { after: `${first.body.next as string}x` } })
    t.match({ status: tampered.status, ...tampered.body }, { status: 400, code: 142, error: /^after: / })
    const skipped = await call('/notes/listNotes', 'get', 'skip', { headers: as.user, params: { skip: 1 } })
    t.match({ status: skipped.status, ...skipped.body }, { status: 400, code: 142, error: /^skip is not supported: page with `after`/ })
    t.equal((await call('/notes/updateNote', 'post', 'valid', { headers: as.user, body: { id: note.body.objectId, body: 'more' } })).status, 200)
    t.equal((await call('/notes/deleteNote', 'post', 'valid', { headers: as.user, body: { id: note.body.objectId } })).status, 200)
    t.equal((await call('/functions/hello', 'post', 'valid', { body: {} })).status, 200)
    t.equal((await call('/functions/hello', 'get', 'valid', {})).status, 200)
  })

  t.test('invalid inputs derived from each operation\'s schema', async (t) => {
    let calls = 0
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const method of METHODS) {
        const operation = item[method]
        if (!operation) continue
        const inQuery = method === 'get'
        const fields = inQuery
          ? Object.fromEntries((operation.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string, schema: object, required?: boolean }) => [p.name, { ...p.schema, required: p.required }]))
          : Object.fromEntries(Object.entries(operation.requestBody?.content?.['application/json']?.schema?.properties ?? {}).map(([name, schema]) => [name, { ...schema as object, required: (operation.requestBody.content['application/json'].schema.required ?? []).includes(name) }]))
        const valid = Object.fromEntries(Object.entries(fields).filter(([, schema]) => (schema as { required?: boolean }).required).map(([name, schema]) => [name, sample(schema)]))
        const send = (input: string, values: Record<string, unknown>, headers: Record<string, string> = as.user) => inQuery
          ? call(path, method, input, { headers, params: values })
          : call(path, method, input, { headers, body: values })
        for (const headers of [{}, as.app, as.user, as.master]) await send('valid sample', valid, headers)
        for (const [name, schema] of Object.entries(fields)) {
          for (const [label, value] of wrongValues(schema as Record<string, any>, inQuery)) {
            const answer = await send(`${name} ${label}`, { ...valid, [name]: value })
            calls++
            if (!inQuery || label !== 'absent') {
              t.equal(answer.status, 400, `${method} ${path} ${name} ${label}: ${JSON.stringify(answer.body)}`)
              t.match(answer.body?.error, new RegExp(name), 'the refusal names the field')
            }
          }
        }
        if (!inQuery) {
          for (const raw of ['[]', 'null', '"text"', '12', '{', '{"dropPoint":{"__proto__":{"x":1}}}']) {
            await call(path, method, `body ${raw}`, { headers: as.user, raw })
            await call(path, method, `text/plain body ${raw}`, { headers: as.user, raw, contentType: 'text/plain' })
          }
          const poisoned = answers.at(-2)!
          t.match(poisoned.body, { code: 107, error: /refused on purpose/ }, `${path}: __proto__ is said to be refused on purpose`)
        }
        // A verb the path does not take.
        await call(path, method === 'get' ? 'delete' : 'put', 'other verb', { headers: as.user, raw: '{}' })
      }
    }
    t.ok(calls > 40, `${calls} invalid field values sent`)
  })

  t.test('a query string\'s numbers: decimal text of a finite number, within the documented bounds of limit', async (t) => {
    const limit = document.paths['/products/listProducts'].get.parameters.find((p: { name: string }) => p.name === 'limit')
    t.same([limit.schema.type, limit.schema.minimum, limit.schema.maximum], ['integer', 0, 1000], 'the document shows the bounds')
    const list = (value: string) => call('/products/listProducts', 'get', `limit=${value}`, { query: `limit=${value}` })
    for (const [value, why] of [['%20', 'a blank'], ['', 'nothing'], ['0x10', 'hexadecimal'], ['1e400', 'not finite'], ['Infinity', 'not finite'], ['12abc', 'trailing text'],
      ['1.5', 'not whole'], ['-1', 'below 0'], ['1001', 'over the maximum']]) {
      const answer = await list(value)
      t.equal(answer.status, 400, `limit=${value}: ${why}`)
      t.match(answer.body, { code: 142, error: /^querystring\/limit must be / }, `limit=${value} is refused naming the field`)
    }
    for (const [value, rows] of [['2', 2], ['2e0', 2], ['0', 0], ['1.0', 1]] as const) {
      const answer = await list(value)
      t.same([answer.status, answer.body.results?.length], [200, rows], `limit=${value} reads as ${rows}`)
    }
  })

  t.test('coupons: null, [null] and [{}] are refused with 142, not a 500', async (t) => {
    for (const coupons of [null, [null], [{}], 'c1']) {
      const answer = await call('/orders/createOrder', 'post', `coupons ${JSON.stringify(coupons)}`, { headers: as.user, body: { lines: [{ product: 'x', quantity: 1 }], coupons } })
      t.match({ status: answer.status, ...answer.body }, { status: 400, code: 142, error: /coupons/ }, JSON.stringify(coupons))
    }
    const longNote = await call('/orders/createOrder', 'post', 'note too long', { headers: as.user, body: { lines: [{ product: 'x', quantity: 1 }], note: 'n'.repeat(501) } })
    t.match(longNote.body, { code: 142, error: /note must NOT have more than 500 characters/ })
    const status = await call('/orders/setStatus', 'post', 'status not allowed', { headers: as.user, body: { id: 'x', status: 'lost' } })
    t.equal(status.body.error, 'body/status must be one of pending, paid, shipped, cancelled')
  })

  t.test('every answer is documented for its operation and matches the documented schema', async (t) => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(ajv)
    const validators = new Map<object, ReturnType<typeof ajv.compile>>()
    const validatorFor = (schema: object) => {
      let validate = validators.get(schema)
      if (!validate) validators.set(schema, validate = ajv.compile({ allOf: [openApi30ToJsonSchema(schema)], components: openApi30ToJsonSchema(document.components) }))
      return validate
    }
    const statuses = new Map<string, Set<number>>()
    let checked = 0
    for (const answer of answers) {
      const documentedPath = document.paths[answer.path]
      const operation = documentedPath?.[answer.method] ?? Object.values(documentedPath ?? {})[0]
      const documented = operation?.responses?.[String(answer.status)]
      statuses.set(answer.operation, (statuses.get(answer.operation) ?? new Set()).add(answer.status))
      if (!t.ok(documented, `${answer.operation} (${answer.input}) answered ${answer.status}, which it documents: ${JSON.stringify(answer.body).slice(0, 160)}`)) continue
      const schema = documented.content?.['application/json']?.schema
      if (schema) {
        const validate = validatorFor(schema)
        t.ok(validate(answer.body), `${answer.operation} ${answer.status} (${answer.input}) matches its schema: ${ajv.errorsText(validate.errors)} ${JSON.stringify(answer.body).slice(0, 200)}`)
      }
      for (const header of Object.keys(documented.headers ?? {})) t.ok(answer.headers.get(header), `${answer.operation} ${answer.status} sends ${header}`)
      checked++
    }
    t.comment(`${checked} answers checked; statuses seen: ${[...new Set(answers.map((a) => a.status))].sort().join(', ')}`)
    t.ok([...statuses.values()].some((seen) => seen.has(405)), 'a wrong verb was met')
    t.notOk(answers.some((answer) => answer.status >= 500), 'no 5xx')
  })
})

/** A value of the right type for a field schema. */
function sample (schema: Record<string, any>): unknown {
  if (schema.enum) return schema.enum[0]
  switch (schema.type) {
    case 'string': return schema.format === 'date-time' ? new Date(0).toISOString() : 'x'
    case 'number': case 'integer': return schema.minimum ?? 1
    case 'boolean': return true
    case 'array': return schema.items?.type === 'object' ? [sample(schema.items)] : []
    // Its required properties, each of the right type.
    case 'object': return Object.fromEntries((schema.required ?? []).map((name: string) => [name, sample(schema.properties[name])]))
    default: return 'x'
  }
}

/** Values a field must refuse, by its schema (as the query string sees them when `inQuery`). */
function wrongValues (schema: Record<string, any>, inQuery: boolean): [string, unknown][] {
  const wrong: [string, unknown][] = []
  if (schema.enum) wrong.push(['not allowed', 'zzz-not-allowed'])
  if (schema.maxLength !== undefined) wrong.push(['too long', 'x'.repeat(schema.maxLength + 1)])
  if (schema.format === 'date-time') wrong.push(['not a date', 'yesterday'])
  if (inQuery) {
    if (schema.type === 'number' || schema.type === 'integer') wrong.push(['not a number', 'many'])
    return wrong
  }
  if (schema.type === 'string') wrong.push(['a number', 12345], ['null', null], ['an object', {}])
  if (schema.type === 'number' || schema.type === 'integer') wrong.push(['text', '12'], ['null', null])
  if (schema.type === 'boolean') wrong.push(['text', 'true'])
  if (schema.type === 'array') wrong.push(['null', null], ['an object', {}], ['text', 'a'])
  if (schema.type === 'array' && schema.items?.type) wrong.push(['[null]', [null]], ['[{}]', schema.items.type === 'object' ? [1] : [{}]])
  if (schema.type === 'object') wrong.push(['null', null], ['a list', []], ['text', 'a'])
  return wrong
}

/** OpenAPI 3.0's `nullable` as JSON Schema, and #/components/... kept addressable. */
function openApi30ToJsonSchema (value: any): any {
  if (Array.isArray(value)) return value.map(openApi30ToJsonSchema)
  if (!value || typeof value !== 'object') return value
  const copy: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) copy[key] = openApi30ToJsonSchema(inner)
  if (copy.nullable === true && typeof copy.type === 'string') copy.type = [copy.type, 'null']
  return copy
}

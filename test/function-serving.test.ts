// Declared functions as the kit serves them, one test process for what were
// separate files (each process costs seconds of loading Parse Server):
// - a function declared after the kit booted is refused with what to do, instead
//   of being silently neither served nor documented;
// - query-string values of declared fields arrive converted to their declared
//   type, undeclared ones as strings; the endpoints guide, the generated
//   templates and the API document say the same.
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { appHeaders, startKit } from './helpers/kit.js'

// ── declared after boot (was late-declaration.test.ts) ──

@Route('early')
class Early {
  @CloudFunction({ methods: ['GET'] }) static ping () { return 'pong' }
}

t.test('a @CloudFunction declared after boot throws, naming it and what to change', async (t) => {
  t.same(declaredFunctions().filter((fn) => fn.owner === Early).map((fn) => fn.label).sort(), ['Early.ping'], '@CloudFunction declared Early')
  const kit = await startKit(t, { docs: { title: 'Late', version: '1.0.0' } })
  t.equal((await kit.request('GET', '/parse/early/ping', { headers: appHeaders })).json, 'pong')
  t.throws(() => {
    class Late {
      static later () { return 'never served' }
    }
    CloudFunction()(Late, 'later', Object.getOwnPropertyDescriptor(Late, 'later')!)
  }, /@CloudFunction Late\.later: declared after kitPlugin booted, so it would be neither served nor documented\. Import the file before kitPlugin is registered/)
  t.match((await kit.request('POST', '/parse/functions/later', { headers: appHeaders, body: {} })).json, { code: 141, error: /Invalid function/ }, 'not served')
  const document = await kit.request('GET', '/api-docs/json')
  t.notOk(JSON.stringify(document.json).includes('later'), 'not documented')
})

t.test('after the kit closed, declaring is allowed again (the next kit serves it)', async (t) => {
  class Next {
    static hello () { return 'hi' }
  }
  CloudFunction({ methods: ['GET'] })(Next, 'hello', Object.getOwnPropertyDescriptor(Next, 'hello')!)
  const kit = await startKit(t)
  t.equal((await kit.request('GET', '/parse/functions/hello', { headers: appHeaders })).json?.result, 'hi')
})

// ── query-string conversion (was query-conversion.test.ts) ──

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const read = (file: string) => readFileSync(path.join(root, file), 'utf8')

@Route('filters')
class Filters {
  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number }, active: { type: Boolean }, name: { type: String } } } })
  static echo (request: CloudRequest) {
    const { limit, active, name, page } = request.params as Record<string, unknown>
    return { limit: [limit, typeof limit], active: [active, typeof active], name: [name, typeof name], page: [page, typeof page] }
  }
}

t.test('the handler sees declared query fields typed, undeclared ones as strings', async (t) => {
  t.same(declaredFunctions().filter((fn) => fn.owner === Filters).map((fn) => fn.label).sort(), ['Filters.echo'], '@CloudFunction declared Filters')
  const kit = await startKit(t, { docs: { title: 'Filters', version: '1.0.0' } })
  const answer = await kit.request('GET', '/parse/filters/echo?limit=5&active=true&name=7&page=2', { headers: appHeaders })
  t.equal(answer.status, 200, answer.text)
  t.same(answer.json, { limit: [5, 'number'], active: [true, 'boolean'], name: ['7', 'string'], page: ['2', 'string'] })

  const document = (await kit.request('GET', '/api-docs/json')).json
  const parameters = document.paths['/filters/echo'].get.parameters as Array<{ name: string, in: string, schema: { type: string } }>
  t.same(parameters.map((p) => [p.in, p.name, p.schema.type]).sort(), [['query', 'active', 'boolean'], ['query', 'limit', 'number'], ['query', 'name', 'string']],
    'the API document shows the declared query parameters with their types')
})

t.test('the endpoints guide and the generated templates say the same', async (t) => {
  const readme = read('docs/guides/endpoints.md')
  t.match(readme, /a handler reads `\?limit=5&active=true`\s+as\s+the\s+number\s+`5`\s+and\s+the\s+boolean\s+`true`/)
  t.match(readme, /an\s+undeclared\s+`\?page=2`\s+arrives\s+as\s+the\s+string\s+`"2"`/)
  const rules = read('cli/templates/ai/rules.md')
  t.notMatch(rules, /Query-string values arrive as strings/, 'the AI rules no longer say every value is a string')
  t.match(rules, /Fields declared in `validation.fields` arrive validated and converted to their declared type/)
  t.match(rules, /undeclared query-string values arrive as strings/)
  const resource = read('cli/templates/resource/functions.ts')
  t.notMatch(resource, /Query-string values arrive as strings: convert them here/)
  t.match(resource, /Declared query-string fields arrive validated and converted/)
})

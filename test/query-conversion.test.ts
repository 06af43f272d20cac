// Query-string values of declared fields arrive converted to their declared
// type; undeclared ones arrive as strings. The endpoints guide, the generated templates
// and the API document say the same.
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { appHeaders, startKit } from './helpers/kit.js'

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

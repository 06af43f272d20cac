// Declared functions as the kit serves them, one test process for what were
// separate files (each process costs seconds of loading Parse Server):
// - a function declared after the kit booted is refused with what to do, instead
//   of being silently neither served nor documented;
// - query-string values of declared fields arrive converted to their declared
//   type, undeclared ones as strings; the endpoints guide, the generated
//   templates and the API document say the same;
// - requireMaster: a declared function only a master-key caller may run, and
//   the API document saying so.
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseModel, CloudFunction, ParseClass, Route, type CloudRequest } from '../lib/index.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

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

// ── requireMaster (was require-master.test.ts) ──

@ParseClass('Vault')
class Vault extends BaseModel {}

@Route(Vault)
class VaultFunctions {
  @CloudFunction({ requireMaster: true }) static rotateKeys (request: CloudRequest) { return { master: request.master } }
  @CloudFunction({ requiresAuth: true }) static peek () { return 'peeked' }
}

t.test('requireMaster is a @CloudFunction option with a checked value', async (t) => {
  t.throws(() => {
    class Wrong {
      @CloudFunction({ requireMaster: 'yes' as never }) static x () {}
    }
    return Wrong
  }, /option "requireMaster" must be true or false/)
})

t.test('only the master key passes; the document asks for it alone', async (t) => {
  const kit = await startKit(t, { models: [Vault], functions: [VaultFunctions], docs: { title: 'Vault', version: '1' } })
  const { token } = await kit.signUp('vault-user')
  for (const url of ['/parse/vaults/rotateKeys', '/parse/functions/rotateKeys']) {
    const anonymous = await kit.request('POST', url, { headers: appHeaders, body: {} })
    t.equal(anonymous.status, 403, `${url}: no key → 403`)
    t.match(anonymous.json, { code: 119, error: /Master key required/ })
    const user = await kit.request('POST', url, { headers: { ...appHeaders, 'x-parse-session-token': token }, body: {} })
    t.equal(user.status, 403, `${url}: a session is not enough`)
    const wrong = await kit.request('POST', url, { headers: { ...appHeaders, 'x-parse-master-key': 'not-the-key' }, body: {} })
    t.match(wrong, { status: 400, json: { code: 119, error: 'Invalid master key' } }, `${url}: a wrong master key is refused`)
    const master = await kit.request('POST', url, { headers: masterHeaders, body: {} })
    t.equal(master.status, 200, `${url}: the master key passes`)
  }
  t.same((await kit.request('POST', '/parse/vaults/rotateKeys', { headers: masterHeaders, body: {} })).json, { master: true })

  const document = (await kit.request('GET', '/api-docs/json')).json
  t.same(document.paths['/vaults/rotateKeys'].post.security, [{ appId: [], masterKey: [] }], 'master key only')
  t.same(document.paths['/vaults/peek'].post.security, [{ appId: [], sessionToken: [] }, { appId: [], masterKey: [] }], 'session or master key')
})

// requireMaster: a declared function only a master-key caller may run, and the
// API document saying so.
import t from 'tap'
import { BaseModel, CloudFunction, ParseClass, Route, type CloudRequest } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

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

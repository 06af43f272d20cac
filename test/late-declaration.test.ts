// A function declared after the kit booted is refused with what to do, instead
// of being silently neither served nor documented.
import t from 'tap'
import { CloudFunction, Route } from '../lib/index.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { appHeaders, startKit } from './helpers/kit.js'

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

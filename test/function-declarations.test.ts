// Declaration-time rules of @Route and @CloudFunction (no server needed).
import t from 'tap'
import { CloudFunction, Route } from '../lib/index.js'
import { kebabPlural } from '../lib/routing/naming.js'
import { declaredFunctions } from '../lib/routing/registry.js'

t.test('prefixes are the kebab-case plural of the class name', async (t) => {
  const cases: Record<string, string> = {
    Category: 'categories', Person: 'people', OrderLine: 'order-lines', Note: 'notes', Product: 'products',
    Box: 'boxes', _User: 'users', HTTPRequest: 'http-requests', Status: 'statuses'
  }
  for (const [name, prefix] of Object.entries(cases)) t.equal(kebabPlural(name), prefix, `${name} → ${prefix}`)
})

t.test('options are checked when the file is imported', async (t) => {
  const declare = (options: object, name = 'fn') => () => CloudFunction(options as {})(class Owner {}, name, { value: () => {} })
  t.throws(declare({ methods: ['FETCH'] }), /@CloudFunction Owner\.fn: option "methods" has "FETCH"/)
  t.throws(declare({ rateLimit: { windowMs: 0, max: 1 } }), /option "rateLimit\.windowMs" must be a whole number/)
  t.throws(declare({ requireRoles: 'Admin' }), /option "requireRoles" must be a list/)
  t.throws(declare({ roleCacheMs: -1 }), /option "roleCacheMs"/)
  t.throws(declare({ validation: { fields: { a: { type: Symbol } } } }), /validation\.fields\.a\.type/)
  t.throws(declare({ validation: { requireRole: 'x' } }), /validation\.requireRole" is not supported/)
  t.throws(declare({ cache: true }), /"cache" is not a @CloudFunction option/)
  t.throws(() => CloudFunction()(class Owner {}, 'notAMethod', { value: 42 } as never), /decorate a method/)
  t.throws(() => CloudFunction()(class Owner {}, 'send-mail', { value: () => {} }),
    { code: 'FPK_ERR_ROUTE_DECLARATION', message: /^@CloudFunction Owner\.send-mail: the method name becomes the function's name and path segment, so it must be an identifier/ })
  t.throws(() => Route('Bad Name')(class Owner {}), /must be kebab-case/)
  t.throws(() => Route('functions')(class Owner {}), /reserved/)
})

t.test('two functions with the same name fail with both places named', async (t) => {
  @Route('alphas')
  class Alpha {
    @CloudFunction() static sameName () { return 'a' }
  }
  t.ok(declaredFunctions().some((fn) => fn.label === 'Alpha.sameName'))
  @Route('betas')
  class Beta {
    @CloudFunction() static sameName () { return 'b' }
  }
  t.ok(Alpha && Beta)
  t.throws(() => declaredFunctions(), /Two Cloud Functions are named "sameName" \(Alpha\.sameName and Beta\.sameName\)/)
})

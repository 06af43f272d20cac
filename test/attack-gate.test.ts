// Hostile requests against the gate over a real listener: what an application
// opens with allowedRoutes must not open more than it lists.
import t from 'tap'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

t.test('an opened /batch does not open what its inner requests name', async (t) => {
  const kit = await startKit(t, {
    allowedRoutes: [{ path: '/batch', methods: ['POST'] }, { path: '/classes/Comment', methods: ['GET', 'POST'] }]
  })
  // A user another client must not list.
  await kit.signUp('batch-victim')
  const batch = (requests: unknown[]) => kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests } })

  const inner = [
    { method: 'GET', path: '/parse/users' },
    { method: 'GET', path: '/parse/classes/_User' },
    { method: 'GET', path: '/parse/classes/Comment/../_User' },
    { method: 'GET', path: '/parse/classes/Comment/../../users' },
    { method: 'GET', path: '/parse/schemas' },
    { method: 'GET', path: '/parse//roles' },
    { method: 'DELETE', path: '/parse/classes/Comment' },
    { method: 'POST', path: '/parse/classes/Comment/x/../../Other' }
  ]
  for (const request of inner) {
    const result = await batch([request])
    t.equal(result.status, 403, `${request.method} ${request.path} inside /batch → 403 (${result.text.slice(0, 120)})`)
    t.equal(result.json?.code, 119, `${request.method} ${request.path} → code 119`)
    t.notMatch(result.text, /batch-victim/, `${request.path}: no user row leaks`)
  }
  const mixed = await batch([{ method: 'GET', path: '/parse/classes/Comment' }, { method: 'GET', path: '/parse/users' }])
  t.equal(mixed.status, 403, 'one closed inner request refuses the whole batch')

  const allowed = await batch([{ method: 'GET', path: '/parse/classes/Comment' }])
  t.equal(allowed.status, 200, 'inner requests the allow-list opens still run')
  t.ok(Array.isArray(allowed.json), 'Parse answers the batch')

  const master = await kit.request('POST', '/parse/batch', { headers: masterHeaders, body: { requests: [{ method: 'GET', path: '/parse/users' }] } })
  t.equal(master.status, 200, 'the master key still batches anything')
  t.match(master.text, /batch-victim/)
})

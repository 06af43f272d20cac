// Password guessing on the auth routes allowAuthRoutes opens: attempts are
// limited per username (whatever the address) and per address (whatever the
// username), inner /batch requests included, answered 429 with Retry-After;
// and Parse's accountLockout is on by default. Addresses come from
// X-Forwarded-For (Fastify's trustProxy), as behind a load balancer.
import t from 'tap'
import { resolveOptions } from '../lib/options.js'
import { AttemptCounters, ATTEMPT_COUNTERS_CAPACITY } from '../lib/host/attempt-counters.js'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit } from './helpers/kit.js'

const from = (address: string) => ({ ...appHeaders, 'x-forwarded-for': address })

t.test('accountLockout is on by default with allowAuthRoutes, and configurable', async (t) => {
  const base = { appId: APP_ID, masterKey: MASTER_KEY }
  t.same(resolveOptions({ ...base, allowAuthRoutes: true }).parseServerOptions.accountLockout, { threshold: 10, duration: 5 })
  t.same(resolveOptions({ ...base, allowAuthRoutes: true, parseServerOptions: { accountLockout: { threshold: 3 } } }).parseServerOptions.accountLockout, { threshold: 3, duration: 5 })
  t.equal(resolveOptions({ ...base, allowAuthRoutes: true, parseServerOptions: { accountLockout: false } }).parseServerOptions.accountLockout, false, 'false turns it off')
  t.equal(resolveOptions(base).parseServerOptions.accountLockout, undefined, 'routes closed: Parse\'s default')
  t.same(resolveOptions(base).authRateLimit, { max: 10, maxPerAddress: 100, windowMs: 60_000 }, 'rate limit defaults')
  t.equal(resolveOptions({ ...base, authRateLimit: false }).authRateLimit, false)
  t.throws(() => resolveOptions({ ...base, authRateLimit: { max: 0 } }), { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "authRateLimit.max": must be a whole number of attempts per username from 1 to 1000000 (got 0)' })
  t.throws(() => resolveOptions({ ...base, authRateLimit: { mx: 1 } as never }), { code: 'FPK_ERR_OPTION_UNKNOWN', message: /"authRateLimit\.mx": unknown option; did you mean "max"\?/ })
  t.throws(() => resolveOptions({ ...base, authRateLimit: true as never }), /"authRateLimit": must be false or \{ max\?, maxPerAddress\?, windowMs\? \} \(got true\)/)
})

t.test('without Redis, a junk flood of more names than the counters hold leaves a counted account\'s counter', async (t) => {
  const counters = new AttemptCounters()
  const windowMs = 60_000
  for (let i = 0; i < 4; i++) counters.incr('auth|name|victim', windowMs)
  for (let i = 0; i < ATTEMPT_COUNTERS_CAPACITY + 5_200; i++) counters.incr(`auth|name|junk-${i}@example.com`, windowMs)
  t.equal(counters.size, ATTEMPT_COUNTERS_CAPACITY, 'bounded')
  t.equal(counters.incr('auth|name|victim', windowMs).current, 5, 'the victim\'s counter is still there, over a limit of 3')
  // Expired counters go first, whatever their count.
  const later = new AttemptCounters(2)
  later.incr('a', 1_000, 0)
  later.incr('a', 1_000, 0)
  later.incr('b', 5_000, 0)
  later.incr('c', 5_000, 2_000)
  t.equal(later.incr('b', 5_000, 2_000).current, 2, 'the expired repeated counter made room, not a live one')
})

t.test('auth routes under attack', async (t) => {
  const kit = await startKit(t, {
    allowAuthRoutes: true,
    allowedRoutes: [{ path: '/batch', methods: ['POST'] }],
    authRateLimit: { max: 3, maxPerAddress: 6, windowMs: 60_000 },
    parseServerOptions: { accountLockout: { threshold: 2, duration: 1 } }
  }, { trustProxy: true })
  const create = async (username: string) => {
    const answer = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username, password: 'right-password-1' } })
    if (answer.status !== 201) throw new Error(answer.text)
  }
  await create('victim')
  await create('locked')
  const answer = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'TwoNames', email: 'two.names@example.com', password: 'right-password-1' } })
  if (answer.status !== 201) throw new Error(answer.text)
  const login = (address: string, username: string, password: string) =>
    kit.request('POST', '/parse/login', { headers: from(address), body: { username, password } })

  t.test('one username: the attempt after the limit answers 429, from any address', async (t) => {
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await login(`10.0.0.${i + 1}`, 'victim', `wrong-${i}`)).status)
    t.notOk(statuses.includes(429), `the first 3 reach Parse (${statuses.join(', ')})`)
    const refused = await login('10.0.0.9', 'victim', 'right-password-1')
    t.equal(refused.status, 429, 'the 4th, with the right password from a new address, is refused')
    t.equal(refused.json.code, 155)
    t.match(refused.json.error, /Too many sign-in attempts for this account/)
    t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After')
    const viaQuery = await kit.request('GET', '/parse/login?username=VICTIM&password=x', { headers: from('10.0.0.10') })
    t.equal(viaQuery.status, 429, 'GET /login, and the username in another case, count the same')
    const overridden = await kit.request('POST', '/parse/login', { headers: from('10.0.0.11'), body: { _method: 'GET', username: 'victim', password: 'x' } })
    t.equal(overridden.status, 429, 'and a POST overridden to GET with the username in its body')
  })

  t.test('an account named by username, by email, or by email in the username field is one counter', async (t) => {
    // Parse answers each (wrong password; then its accountLockout): none is the kit's 429.
    t.not((await login('10.4.0.1', 'twonames', 'wrong-1')).status, 429)
    t.not((await kit.request('POST', '/parse/login', { headers: from('10.4.0.2'), body: { email: 'Two.Names@example.com', password: 'wrong-2' } })).status, 429)
    t.not((await login('10.4.0.3', 'two.names@example.com', 'wrong-3')).status, 429)
    t.equal((await login('10.4.0.4', 'TwoNames', 'right-password-1')).status, 429, 'the 4th attempt on the account is refused')
    t.equal((await kit.request('POST', '/parse/requestPasswordReset', { headers: from('10.4.0.5'), body: { email: 'two.names@example.com' } })).status, 429, 'and a password reset for its email')
    t.not((await kit.request('POST', '/parse/login', { headers: from('10.4.0.6'), body: { email: 'nobody@example.com', password: 'x' } })).status, 429, 'an email no account has counts as itself')
  })

  t.test('an email stored in mixed case is the account\'s counter too (Parse stores it as given and logs in by it exactly)', async (t) => {
    const created = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'mixedcase', email: 'Mixed.Case@Example.com', password: 'right-password-1' } })
    t.equal(created.status, 201, created.text)
    for (let i = 0; i < 3; i++) t.not((await login(`10.5.0.${i + 1}`, 'mixedcase', `wrong-${i}`)).status, 429)
    const byEmail = await kit.request('POST', '/parse/login', { headers: from('10.5.0.9'), body: { email: 'Mixed.Case@Example.com', password: 'right-password-1' } })
    t.equal(byEmail.status, 429, 'the 4th attempt, by the email as stored, is refused (it was a fresh counter: twice the guesses)')
    t.equal((await login('10.5.0.10', 'Mixed.Case@Example.com', 'x')).status, 429, 'and by that email in the username field')
  })

  t.test('one address: the attempt after the limit answers 429, whatever the username', async (t) => {
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await login('10.1.0.1', `nobody-${i}`, 'x')).status)
    t.same(statuses, [404, 404, 404, 404, 404, 404], 'six unknown users: Parse answers')
    const refused = await login('10.1.0.1', 'nobody-new', 'x')
    t.equal(refused.status, 429)
    t.match(refused.json.error, /from this address/)
    const signUp = await kit.request('POST', '/parse/users', { headers: from('10.1.0.1'), body: { username: 'fresh', password: 'p-1' } })
    t.equal(signUp.status, 429, 'sign-up from that address counts too')
    const reset = await kit.request('POST', '/parse/requestPasswordReset', { headers: from('10.1.0.1'), body: { email: 'a@example.com' } })
    t.equal(reset.status, 429, 'and /requestPasswordReset')
    t.equal((await login('10.1.0.2', 'nobody-new', 'x')).status, 404, 'another address is not limited')
  })

  t.test('inner /batch requests count as the attempts they are', async (t) => {
    const requests = Array.from({ length: 5 }, (_, i) => ({ method: 'POST', path: '/parse/login', body: { username: 'batch-target', password: `guess-${i}` } }))
    const answer = await kit.request('POST', '/parse/batch', { headers: from('10.2.0.1'), body: { requests } })
    t.equal(answer.status, 429, 'five guesses in one batch are over the limit of 3')
  })

  t.test('Parse\'s accountLockout locks an account after failed logins', async (t) => {
    t.equal((await login('10.3.0.1', 'locked', 'wrong-1')).status, 404)
    t.equal((await login('10.3.0.2', 'locked', 'wrong-2')).status, 404)
    const third = await login('10.3.0.3', 'locked', 'right-password-1')
    t.not(third.status, 200, 'the right password no longer logs in')
    t.match(third.json.error, /locked/i)
  })

  t.test('the master key is not limited', async (t) => {
    // victim is over the limit (and locked by Parse after its failed logins): the master key reaches Parse.
    const answer = await kit.request('POST', '/parse/login', { headers: masterHeaders, body: { username: 'victim', password: 'right-password-1' } })
    t.not(answer.status, 429)
    t.match(answer.json.error, /locked/, 'Parse\'s own answer')
  })
})

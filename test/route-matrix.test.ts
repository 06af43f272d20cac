// Route restriction tried as a client would try it: every route Parse Server
// serves (read from Parse's own routers at run time) × every verb × three kinds of
// caller, with allowAuthRoutes off and on, then a list of known ways around a
// gate. A spy on Parse's Express app records each request that reaches Parse;
// only the README's open list may.
import t from 'tap'
import { APP_ID, MASTER_KEY, appHeaders, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { rawRequest } from './helpers/raw-http.js'

const VERBS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']
const CALLERS = ['no app id', 'app id', 'app id + session'] as const
type Caller = typeof CALLERS[number]

/** The README's open list ("Route restriction"), written out here rather than imported. */
// {mount}/health is answered by the kit itself (readiness), so it never reaches Parse.
const ALWAYS_OPEN: Array<[string, RegExp]> = [
  ['GET HEAD POST', /^\/functions\/[^/]+$/]
]
const AUTH_OPEN: Array<[string, RegExp]> = [
  ['GET HEAD POST', /^\/login$/],
  ['POST', /^\/logout$/],
  ['POST', /^\/users$/],
  ['GET HEAD', /^\/users\/me$/],
  ['GET HEAD', /^\/sessions\/me$/]
  // /requestPasswordReset and /verificationEmailRequest open too, but without an
  // email adapter the kit answers them itself (400 naming what is missing).
]

function expectedToReach (verb: string, path: string, caller: Caller, allowAuthRoutes: boolean): boolean {
  const rules = allowAuthRoutes ? [...ALWAYS_OPEN, ...AUTH_OPEN] : ALWAYS_OPEN
  const rule = rules.find(([, pattern]) => pattern.test(path))
  if (!rule) return false
  if (rule[0] === '*') return true
  return caller !== 'no app id' && rule[0].split(' ').includes(verb)
}

interface ExpressLayer { route?: { path: unknown, methods: Record<string, boolean> }, handle?: { stack?: ExpressLayer[] } }

/** Every route path of Parse's running Express app, with its parameters filled in. */
function parseRoutePaths (parseApp: any): string[] {
  const paths = new Set<string>(['/health'])
  const walk = (layers: ExpressLayer[]) => {
    for (const layer of layers) {
      if (layer.route && typeof layer.route.path === 'string') paths.add(concrete(layer.route.path))
      else if (Array.isArray(layer.handle?.stack)) walk(layer.handle.stack)
    }
  }
  walk(parseApp.router.stack)
  return [...paths]
}

function concrete (path: string): string {
  return path.split('/').map((segment) => {
    if (segment === ':className') return 'Note'
    if (segment === ':appId') return APP_ID
    if (segment.startsWith(':')) return 'abc123'
    if (segment.startsWith('*')) return 'a.txt'
    return segment
  }).join('/')
}

interface Spy { reached: Set<string>, next: () => string }

/** Counts requests at the entrance of Parse's Express app (express calls app.handle for each). */
function spyOnParse (kit: Kit): Spy {
  const parseApp = kit.app.kit.parse.app as any
  const original = parseApp.handle
  const reached = new Set<string>()
  parseApp.handle = function (req: any, res: any, next: any) {
    reached.add(String(req.headers['x-probe'] ?? 'untagged'))
    return original.call(this, req, res, next)
  }
  let counter = 0
  return { reached, next: () => `p${++counter}` }
}

async function inBatches<T> (items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run))
}

for (const allowAuthRoutes of [false, true]) {
  t.test(`allowAuthRoutes ${allowAuthRoutes ? 'on' : 'off'}`, async (t) => {
    const kit = await startKit(t, { allowAuthRoutes })
    const { token } = await kit.signUp(`matrix-${allowAuthRoutes}`)
    const spy = spyOnParse(kit)
    const port = Number(new URL(kit.origin).port)

    t.test('the spy sees what reaches Parse', async (t) => {
      const probe = spy.next()
      const result = await kit.request('GET', '/parse/classes/Note', { headers: { ...masterHeaders, 'x-probe': probe } })
      t.equal(result.status, 200, result.text)
      t.ok(spy.reached.has(probe), 'a master-key request is seen entering Parse')
      const basicProbe = spy.next()
      const basic = await kit.request('GET', '/parse/classes/Note', { headers: { authorization: `Basic ${Buffer.from(`${APP_ID}:${MASTER_KEY}`).toString('base64')}`, 'x-probe': basicProbe } })
      t.equal(basic.status, 200, 'the master key over HTTP Basic (Parse\'s httpAuth) is the master key to the gate too')
      t.ok(spy.reached.has(basicProbe))
    })

    t.test('every Parse route × verb × caller: only the open list reaches Parse', async (t) => {
      const paths = parseRoutePaths(kit.app.kit.parse.app)
      t.ok(paths.length > 40, `Parse's routers list ${paths.length} routes`)
      for (const known of ['/classes/Note', '/users', '/batch', '/schemas/Note', '/files/a.txt', '/apps/choose_password']) {
        t.ok(paths.includes(known), `${known} is among them`)
      }
      const headersFor: Record<Caller, Record<string, string>> = {
        'no app id': {},
        'app id': appHeaders,
        'app id + session': { ...appHeaders, 'x-parse-session-token': token }
      }
      const cells = paths.flatMap((path) => VERBS.flatMap((verb) => CALLERS.map((caller) => ({ path, verb, caller }))))
      const wrong: string[] = []
      let reachedCount = 0
      await inBatches(cells, 25, async ({ path, verb, caller }) => {
        const probe = spy.next()
        const withBody = !['GET', 'HEAD'].includes(verb)
        const response = await kit.app.inject({
          method: verb as any,
          url: `/parse${path}`,
          headers: { ...headersFor[caller], 'x-probe': probe, ...(withBody ? { 'content-type': 'application/json' } : {}) },
          payload: withBody ? '{}' : undefined
        })
        const reached = spy.reached.has(probe)
        if (reached) reachedCount++
        const expected = expectedToReach(verb, path, caller, allowAuthRoutes)
        if (reached !== expected) wrong.push(`${verb} ${path} (${caller}): ${reached ? 'reached Parse' : `refused ${response.statusCode}`}, expected ${expected ? 'to reach' : 'refusal'}`)
        // Readiness is the kit's own answer, for any caller.
        const kitAnswers = path === '/health'
        if (!reached && !kitAnswers && response.statusCode < 400) wrong.push(`${verb} ${path} (${caller}): answered ${response.statusCode} without reaching Parse`)
      })
      t.same(wrong, [], `${cells.length} requests; ${reachedCount} reached Parse, all on the open list`)
    })

    t.test('the email routes answer what is missing instead of a 500', { skip: !allowAuthRoutes && 'closed without allowAuthRoutes' }, async (t) => {
      for (const path of ['/requestPasswordReset', '/verificationEmailRequest']) {
        const probe = spy.next()
        const result = await kit.request('POST', `/parse${path}`, { headers: { ...appHeaders, 'x-probe': probe }, body: { email: 'a@example.com' } })
        t.equal(result.status, 400, `${path}: ${result.text}`)
        t.match(result.json?.error, /emailAdapter/, 'names the missing emailAdapter')
        t.match(result.json?.error, /publicServerURL/, 'and publicServerURL')
        t.notOk(spy.reached.has(probe))
      }
    })

    t.test('evasions reach nothing', async (t) => {
      const closed = '/parse/classes/Note'
      const target = allowAuthRoutes ? '/parse/users' : closed
      const json = 'application/json'
      const cases: Array<{ label: string, line: string, headers?: Record<string, string>, body?: string }> = []
      const add = (label: string, line: string, headers: Record<string, string> = appHeaders, body?: string) => cases.push({ label, line, headers, body })

      // Absolute-form targets: Fastify and Express route them by their path.
      for (const scheme of ['http', 'https']) {
        for (const host of ['functions', '127.0.0.1', `127.0.0.1:${port}`, 'localhost', 'evil.example:443', 'a@b']) {
          add(`absolute ${scheme}://${host}`, `GET ${scheme}://${host}${closed} HTTP/1.1`)
          add(`absolute ${scheme}://${host} users`, `GET ${scheme}://${host}/parse/users HTTP/1.1`)
          add(`absolute ${scheme}://${host} POST`, `POST ${scheme}://${host}${closed} HTTP/1.1`, { ...appHeaders, 'content-type': json }, '{"views":999999}')
        }
      }
      add('authority form', `GET 127.0.0.1${closed} HTTP/1.1`)
      // Encoded separators and dot segments.
      for (const path of [
        '/parse/classes%2FNote', '/parse/classes%2fNote', '/parse/functions%2F..%2Fclasses%2FNote', '/parse/functions/x%2F..%2F..%2Fclasses%2FNote',
        '/parse/functions/%2e%2e/classes/Note', '/parse/functions/%2E%2E/users', '/parse/functions/../classes/Note', '/parse/functions/./../users',
        '/parse/functions/x/../../classes/Note', '/parse/functions/%252e%252e/classes/Note', '/parse/cl%61sses/Note', '/parse/functions/x%5c..%5cclasses'
      ]) add(`encoded ${path}`, `GET ${path} HTTP/1.1`)
      // Slashes, case, parameters, backslashes.
      for (const path of [
        '/parse//classes/Note', '/parse/classes//Note', '//parse/classes/Note', '/parse/classes/Note/', '/parse/classes/Note//',
        '/parse/functions//../classes/Note', '/parse/CLASSES/Note', '/parse/Classes/Note', '/PARSE/classes/Note', '/Parse/classes/Note', '/parse/USERS', '/parse/Users/',
        '/parse/classes;x/Note', '/parse/classes/Note;jsessionid=1', '/parse/functions;/../classes/Note', '/parse;/classes/Note',
        '/parse/functions\\..\\classes\\Note', '/parse\\classes\\Note', '/parse/functions/x\\..\\..\\users'
      ]) add(`path ${path}`, `GET ${path} HTTP/1.1`)
      // Method override in every body type Parse parses, against the target (GET is closed on both).
      const override = { _method: 'GET' }
      for (const [type, body] of [
        [json, JSON.stringify(override)], ['text/plain', JSON.stringify(override)], ['application/x-www-form-urlencoded', '_method=GET'],
        ['application/vnd.evil+json', JSON.stringify(override)], [undefined, JSON.stringify(override)], ['text/plain; charset=utf-8', JSON.stringify({ _method: 'get' })],
        ['application/octet-stream', JSON.stringify(override)], ['application/json; charset=utf-16', JSON.stringify(override)]
      ] as Array<[string | undefined, string]>) {
        add(`_method in ${type ?? 'type-less'} body`, `POST ${target} HTTP/1.1`, type ? { ...appHeaders, 'content-type': type } : appHeaders, body)
        add(`_method in ${type ?? 'type-less'} body (delete)`, `POST ${target} HTTP/1.1`, type ? { ...appHeaders, 'content-type': type } : appHeaders, body.replace(/GET|get/, 'DELETE'))
      }
      add('_method with body app id', `POST ${target} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ ...override, _ApplicationId: APP_ID }))
      add('_method in a form with the app id', `POST ${target} HTTP/1.1`, { 'content-type': 'application/x-www-form-urlencoded' }, `_method=GET&_ApplicationId=${APP_ID}`)
      // Override headers (Parse ignores them; a proxy in front might not).
      for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
        add(`${name} header`, `POST ${target} HTTP/1.1`, { ...appHeaders, [name]: 'GET', 'content-type': json }, '{}')
      }
      // Credentials in the body, and wrong keys.
      add('body app id, wrong master key', `POST ${closed} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ _ApplicationId: APP_ID, _MasterKey: 'wrong' }))
      add('body app id and session token', `POST ${closed} HTTP/1.1`, { 'content-type': 'text/plain' }, JSON.stringify({ _ApplicationId: APP_ID, _SessionToken: token, views: 999999 }))
      add('header app id, body master key (Parse ignores it)', `POST ${closed} HTTP/1.1`, { ...appHeaders, 'content-type': 'text/plain' }, JSON.stringify({ _MasterKey: MASTER_KEY, views: 999999 }))
      add('header app id, body master key in JSON', `POST ${closed} HTTP/1.1`, { ...appHeaders, 'content-type': json }, JSON.stringify({ _MasterKey: MASTER_KEY, _method: 'GET' }))
      add('wrong master key header', `GET ${closed} HTTP/1.1`, { ...appHeaders, 'X-Parse-Master-Key': `${MASTER_KEY}x` })
      add('master key prefix', `GET ${closed} HTTP/1.1`, { ...appHeaders, 'X-Parse-Master-Key': MASTER_KEY.slice(0, -1) })
      const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`
      add('HTTP Basic with a wrong master key', `GET ${closed} HTTP/1.1`, { Authorization: basic(`${APP_ID}:wrong`) })
      add('HTTP Basic with a JavaScript key', `GET ${closed} HTTP/1.1`, { Authorization: basic(`${APP_ID}:javascript-key=x`) })
      add('HTTP Basic, header app id, wrong master key', `GET ${closed} HTTP/1.1`, { ...appHeaders, Authorization: basic(`${APP_ID}:wrong`) })
      add('master key without app id', `GET ${closed} HTTP/1.1`, { 'X-Parse-Master-Key': MASTER_KEY })
      add('GET with a body carrying the master key', `GET ${closed} HTTP/1.1`, { 'content-type': json }, JSON.stringify({ _ApplicationId: APP_ID, _MasterKey: MASTER_KEY }))
      // Batches of closed requests.
      const batch = JSON.stringify({ requests: [{ method: 'GET', path: '/parse/classes/Note' }, { method: 'GET', path: '/parse/users' }, { method: 'POST', path: '/parse/classes/Note', body: { views: 999999 } }] })
      add('/batch with closed inner requests', 'POST /parse/batch HTTP/1.1', { ...appHeaders, 'content-type': json }, batch)
      add('/batch with a session', 'POST /parse/batch HTTP/1.1', { ...appHeaders, 'X-Parse-Session-Token': token, 'content-type': json }, batch)
      add('/batch as text/plain with body keys', 'POST /parse/batch HTTP/1.1', { 'content-type': 'text/plain' }, JSON.stringify({ ...JSON.parse(batch), _ApplicationId: APP_ID, _SessionToken: token }))
      add('/batch through an override', 'POST /parse/functions/x HTTP/1.1', { ...appHeaders, 'content-type': json }, JSON.stringify({ _method: 'POST', requests: [] }).replace('"POST"', '"BATCH"'))

      const leaks: string[] = []
      for (const { label, line, headers, body } of cases) {
        const probe = spy.next()
        const result = await rawRequest(port, line, { ...headers, 'x-probe': probe }, body)
        if (spy.reached.has(probe)) leaks.push(`${label}: reached Parse (${result.status} ${result.body.slice(0, 120)})`)
        else if (result.status < 400 || result.status >= 500) leaks.push(`${label}: answered ${result.status} ${result.body.slice(0, 120)}`)
      }
      t.same(leaks, [], `${cases.length} evasions, none reached Parse, each refused with a 4xx`)
      t.notOk(spy.reached.has('untagged'), 'no untagged request reached Parse')
    })

    t.test('the open list still works over the same raw socket', async (t) => {
      const probe = spy.next()
      const health = await rawRequest(port, 'GET /parse/health HTTP/1.1', { 'x-probe': probe })
      t.equal(health.status, 200)
      t.notOk(spy.reached.has(probe), '/health is answered by the kit (readiness), not by Parse')
      if (allowAuthRoutes) {
        const signUpProbe = spy.next()
        const signUp = await rawRequest(port, 'POST /parse/users HTTP/1.1', { ...appHeaders, 'content-type': 'application/x-www-form-urlencoded', 'x-probe': signUpProbe }, 'username=form-user&password=form-password-1')
        t.equal(signUp.status, 201, signUp.body)
        t.ok(spy.reached.has(signUpProbe), 'a form-encoded sign-up reaches Parse with its fields')
      }
    })
  })
}

// Every verb on every spelling of a declared path (entity route and /functions
// twin), from callers with and without the app id / REST key, with method
// overrides, CORS preflights and bodies of every kind. Each answer's status, its
// Allow header, its Parse error code and its CORS headers are checked against the
// rule written out below (expected()), case by case: how the kit registers its
// routes (one route per verb, or fewer) must never change one of these answers.
// The rule was derived from the answers the kit gave when this file pinned them in
// a snapshot (12,084 of them), and reproduces every one.
// Answers Parse's Express mount gives (undeclared functions, misspellings it serves) come
// through inject() without their body and sometimes as 500; over a real socket they are
// Parse's usual {code, error} (400/141, 404/101). They are checked as inject sees them,
// which still shows any change of route.
import t, { type Test } from 'tap'
import type { FastifyServerOptions } from 'fastify'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { APP_ID, MASTER_KEY, startKit } from './helpers/kit.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

const REST_KEY = 'verbs-rest-key'
const ORIGIN = 'https://app.example.com'

@Route('verbs')
class VerbFunctions {
  @CloudFunction({ validation: { fields: { title: { type: String, required: true } } } })
  static onlyPost (request: CloudRequest) { return { fn: 'onlyPost', params: request.params } }

  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number } } } })
  static onlyGet (request: CloudRequest) { return { fn: 'onlyGet', params: request.params } }

  @CloudFunction({ methods: ['POST', 'PUT'] })
  static postPut (request: CloudRequest) { return { fn: 'postPut', params: request.params } }

  @CloudFunction({ methods: ['GET', 'HEAD'] })
  static getHead () { return { fn: 'getHead' } }

  @CloudFunction({ methods: ['PATCH', 'DELETE'], returns: { ok: { type: Boolean } } })
  static patchDelete () { return { ok: true } }

  @CloudFunction({ methods: ['POST'], rateLimit: { max: 1000, windowMs: 60_000 } })
  static limited () { return { fn: 'limited' } }

  @CloudFunction({ methods: ['GET'], requiresAuth: true })
  static signedIn () { return { fn: 'signedIn' } }
}

class BareFunctions {
  @CloudFunction({ methods: ['GET'] })
  static bareGet () { return { fn: 'bareGet' } }
}

/** What each declared function takes, as the rule below reads it. */
interface Declared { methods: string[], validated?: boolean, required?: string, requiresAuth?: boolean, queryFields?: string[] }
const DECLARED: Record<string, Declared> = {
  onlyPost: { methods: ['POST'], validated: true, required: 'title' },
  onlyGet: { methods: ['GET'], validated: true, queryFields: ['limit'] },
  postPut: { methods: ['POST', 'PUT'] },
  getHead: { methods: ['GET', 'HEAD'] },
  patchDelete: { methods: ['PATCH', 'DELETE'] },
  limited: { methods: ['POST'] },
  signedIn: { methods: ['GET'], requiresAuth: true },
  bareGet: { methods: ['GET'] }
}

const VERBS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'SEARCH']
const BODY_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND', 'SEARCH'])

const app = { 'x-parse-application-id': APP_ID }
const rest = { ...app, 'x-parse-rest-api-key': REST_KEY }

interface Probe { name: string, headers?: Record<string, string>, body?: string, contentType?: string, bodyOnly?: boolean }

/** The ways a client reaches a declared path. */
const PROBES: Probe[] = [
  { name: 'no credentials' },
  { name: 'app id, no REST key', headers: app },
  { name: 'app id + REST key', headers: rest },
  { name: 'wrong app id', headers: { ...rest, 'x-parse-application-id': 'other-app' } },
  { name: 'master key', headers: { ...app, 'x-parse-master-key': MASTER_KEY } },
  { name: 'override header', headers: { ...rest, 'x-http-method-override': 'GET' } },
  { name: 'cors preflight', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-parse-application-id' } },
  { name: 'cors simple', headers: { ...rest, origin: ORIGIN } },
  { name: 'json body', headers: rest, body: JSON.stringify({ title: 'x' }), contentType: 'application/json', bodyOnly: true },
  { name: '_method GET in body', headers: rest, body: JSON.stringify({ _method: 'GET', title: 'x' }), contentType: 'application/json', bodyOnly: true },
  { name: '_method PROPFIND in body', headers: rest, body: JSON.stringify({ _method: 'PROPFIND' }), contentType: 'application/json', bodyOnly: true },
  {
    name: 'SDK text/plain body',
    body: JSON.stringify({ _ApplicationId: APP_ID, _RestAPIKey: REST_KEY, title: 'x' }),
    contentType: 'text/plain',
    bodyOnly: true
  },
  { name: 'invalid json', headers: rest, body: '{"title":', contentType: 'application/json', bodyOnly: true },
  { name: 'xml body', headers: rest, body: '<a/>', contentType: 'application/xml', bodyOnly: true },
  { name: 'urlencoded body', headers: rest, body: 'title=x', contentType: 'application/x-www-form-urlencoded', bodyOnly: true }
]

/** Every path of a function, as declared and as a client might misspell it. */
function spellings (path: string): string[] {
  const last = path.lastIndexOf('/')
  const name = path.slice(last + 1)
  return [
    path,
    `${path}/`,
    `${path}?limit=3`,
    path.toUpperCase(),
    `${path.slice(0, last + 1)}${name[0].toUpperCase()}${name.slice(1)}`,
    `${path.slice(0, last + 1)}%${name.charCodeAt(0).toString(16)}${name.slice(1)}`,
    path.replace('/parse/', '/parse//')
  ]
}

t.test('every verb on every declared path answers as pinned', (t) => pinAnswers(t, {}))

// The router matches other spellings here: a refusal must still reach exactly the spellings the path's own routes do.
t.test('and with a router that ignores case and trailing slashes', (t) => pinAnswers(t, { routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } }))

async function pinAnswers (t: Test, server: FastifyServerOptions): Promise<void> {
  const kit = await startKit(t, {
    functions: [VerbFunctions, BareFunctions],
    cors: { origin: [ORIGIN] },
    parseServerOptions: { restAPIKey: REST_KEY },
    docs: { title: 'verbs', version: '1' }
  }, server)
  const ignoresCase = server.routerOptions?.caseSensitive === false
  const functions = ['onlyPost', 'onlyGet', 'postPut', 'getHead', 'patchDelete', 'limited', 'signedIn']
  const paths = [
    ...functions.flatMap((name) => [`/parse/verbs/${name}`, `/parse/functions/${name}`]),
    '/parse/functions/bareGet',
    '/parse/verbs/undeclared',
    '/parse/functions/undeclared'
  ]
  let checked = 0
  for (const declared of paths) {
    // Misspellings on a few paths: they exercise the same code for every function.
    const urls = ['onlyPost', 'onlyGet', 'getHead'].some((name) => declared.endsWith(`/${name}`)) ? spellings(declared) : [declared]
    for (const url of urls) {
      const wrong: string[] = []
      for (const verb of VERBS) {
        for (const probe of PROBES) {
          if (probe.bodyOnly && !BODY_VERBS.has(verb)) continue
          const response = await kit.app.inject({
            method: verb as 'GET',
            url,
            headers: { ...probe.headers, ...(probe.contentType ? { 'content-type': probe.contentType } : {}) },
            ...(probe.body !== undefined ? { payload: probe.body } : {})
          })
          const want = expected(url, verb, probe.name, ignoresCase)
          const origin = probe.headers?.origin !== undefined && corsAnswers(url, verb, ignoresCase) ? ORIGIN : undefined
          const got = answerOf(response, verb)
          const wanted = { ...want, allowOrigin: origin, preflight: want.status === 204 }
          checked++
          if (JSON.stringify(got) !== JSON.stringify(wanted)) wrong.push(`${verb} [${probe.name}]: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(got)} ${response.body.slice(0, 120)}`)
        }
      }
      t.same(wrong, [], `${url}: every verb and caller answers by the rule`)
    }
  }
  t.equal(checked, 6042, 'every case was checked')
  // A refused verb is answered, never documented: the document lists only the verbs each path takes
  // (each operation's own answers are pinned by test/client-contract.test.ts).
  const document = await kit.app.inject({ method: 'GET', url: '/api-docs/json' })
  t.equal(document.statusCode, 200)
  const documented = document.json().paths as Record<string, Record<string, unknown>>
  t.matchSnapshot(Object.fromEntries(Object.entries(documented).map(([route, operations]) => [route, Object.keys(operations).sort()])), 'documented paths and their verbs')

  // HEAD is answered by each GET route itself: the GET's status and headers, the length of
  // the body it would send, and no body, through inject() as on the wire.
  const caller = { 'x-parse-application-id': APP_ID, 'x-parse-rest-api-key': REST_KEY }
  for (const url of ['/parse/verbs/onlyGet?limit=3', '/parse/verbs/getHead', '/parse/functions/onlyGet', '/parse/functions/bareGet',
    '/parse/verbs/onlyGet?limit=many', '/parse/verbs/signedIn']) {
    const get = await kit.app.inject({ method: 'GET', url, headers: caller })
    const head = await kit.app.inject({ method: 'HEAD', url, headers: caller })
    t.equal(head.statusCode, get.statusCode, `HEAD ${url}: the GET's status (${get.statusCode})`)
    t.equal(head.body, '', `HEAD ${url}: no body`)
    t.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)), `HEAD ${url}: the GET body's length`)
    t.equal(head.headers['content-type'], get.headers['content-type'], `HEAD ${url}: the GET's content type`)
    const onTheWire = await kit.request('HEAD', url, { headers: caller })
    t.equal(onTheWire.status, get.statusCode, `HEAD ${url} over HTTP`)
    t.equal(onTheWire.headers.get('content-length'), String(Buffer.byteLength(get.body)), `HEAD ${url} over HTTP: the GET body's length`)
  }
}

interface Answer { status: number, allow?: string, code?: number }

/** What the rule looks at in an answer: status, Allow, the Parse code, and whether CORS answered. */
/** A HEAD answer carries no body on the wire (some inject() versions hand one back anyway): its code is not part of it. */
function answerOf (response: { statusCode: number, headers: Record<string, unknown>, body: string }, verb: string): Answer & { allowOrigin?: string, preflight: boolean } {
  let code: number | undefined
  try { code = verb === 'HEAD' ? undefined : (JSON.parse(response.body) as { code?: number }).code } catch { code = undefined }
  const allow = response.headers.allow as string | undefined
  const allowOrigin = response.headers['access-control-allow-origin'] as string | undefined
  return { status: response.statusCode, ...(allow !== undefined ? { allow } : {}), ...(code !== undefined ? { code } : {}), allowOrigin, preflight: response.headers['access-control-allow-methods'] !== undefined }
}

const SERVED = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
/** Probes without the app id the kit knows (or none at all). */
const NO_APP = new Set(['no credentials', 'wrong app id', 'cors preflight'])
/** Probes that send no body. */
const BODYLESS = new Set(['no credentials', 'app id, no REST key', 'app id + REST key', 'wrong app id', 'master key', 'override header', 'cors preflight', 'cors simple'])
const UNPARSED_BODIES = new Set(['urlencoded body', 'xml body'])

/** A HEAD answer has no body, hence no code. */
const head = (verb: string, answer: Answer): Answer => verb === 'HEAD' ? { status: answer.status, ...(answer.allow ? { allow: answer.allow } : {}) } : answer

/** The verbs a declared path serves, as its Allow header lists them: HEAD beside GET; the /functions twin takes POST, and GET when declared. */
function allowed (name: string, kind: 'verbs' | 'functions'): string[] {
  const declared = DECLARED[name].methods
  const verbs = kind === 'functions' ? ['POST', ...(declared.includes('GET') ? ['GET'] : [])] : [...declared]
  if (verbs.includes('GET') && !verbs.includes('HEAD')) verbs.splice(verbs.indexOf('GET') + 1, 0, 'HEAD')
  return verbs
}

/** OPTIONS answers CORS alone (a bare one is refused in the kit's shape, 400 code 102); a verb nobody serves is refused by the gate, after the app id check when the request could name one in its headers. */
function everyPath (verb: string, probe: string): Answer | undefined {
  if (verb === 'OPTIONS') return probe === 'cors preflight' ? { status: 204 } : { status: 400, code: 102 }
  if (!SERVED.has(verb)) return NO_APP.has(probe) || probe === 'SDK text/plain body' ? { status: 403 } : { status: 400, code: 102 }
  return undefined
}

/** A declared function's own route: the app id and REST key, the verb (405 with Allow), the session, the body, then its validation. */
function declaredAnswer (name: string, kind: 'verbs' | 'functions', verb: string, probe: string, withQuery: boolean): Answer {
  const fn = DECLARED[name]
  const early = everyPath(verb, probe)
  if (early) return early
  if (NO_APP.has(probe) || probe === 'app id, no REST key') return { status: 403 }
  const verbs = allowed(name, kind)
  if (!verbs.includes(verb)) {
    if (probe === 'invalid json') return { status: 400, code: 107 }
    if (UNPARSED_BODIES.has(probe)) return { status: 415, code: 102 }
    return head(verb, { status: 405, allow: verbs.join(', '), code: 119 })
  }
  // requiresAuth is judged before the body is read; the master key passes it.
  if (fn.requiresAuth && probe !== 'master key') return head(verb, { status: 400, code: 101 })
  if (probe === 'invalid json') return { status: 400, code: 107 }
  if (UNPARSED_BODIES.has(probe)) return { status: 415, code: 102 }
  if (BODY_VERBS.has(verb) && fn.validated) {
    // `_method` is not honoured on a declared route: it is dropped from the params.
    if (fn.required && probe === '_method PROPFIND in body') return { status: 400, code: 142 }
    // A declared query field sent in the query string of a POST is refused: it belongs in the body.
    if (kind === 'functions' && withQuery && fn.queryFields?.includes('limit')) return { status: 400, code: 142 }
    // No body means no parameters: refused only when a field is required.
    if (BODYLESS.has(probe) && fn.required) return { status: 400, code: 142 }
  }
  return { status: 200 }
}

/** The gate's own refusals for a path that is no declared route (before Parse or the kit's 404 sees it). */
function gateRefusal (verb: string, probe: string): Answer | undefined {
  const early = everyPath(verb, probe)
  if (early) return early
  if (NO_APP.has(probe)) return { status: 403 }
  if (probe === 'override header') return head(verb, { status: 400, code: 102 })
  if (probe === 'invalid json' || probe === 'xml body') return { status: 400, code: 107 }
  if (probe === '_method PROPFIND in body' && verb === 'POST') return { status: 400, code: 102 }
  return undefined
}

/** Under /functions, a name no route serves goes to Parse: route restriction first (GET and POST open), then Parse's own answer as inject() sees it. */
function parseAnswer (verb: string, probe: string): Answer {
  const refused = gateRefusal(verb, probe)
  if (refused) return refused
  if (!['GET', 'HEAD', 'POST'].includes(verb)) return probe === 'master key' ? { status: 404 } : { status: 403, code: 119 }
  if (probe === 'app id, no REST key') return { status: 403 }
  if (verb !== 'POST') return { status: 404 }
  return { status: BODYLESS.has(probe) ? 400 : 500 }
}

/**
 * The CORS policy rides on the routes under the mount: it answers whatever the router hands
 * to one of them (with a router that ignores case, /PARSE/… too), and nothing for a verb
 * the router does not know (no page can send one: its preflight lists only the policy's verbs).
 */
function corsAnswers (url: string, verb: string, ignoresCase: boolean): boolean {
  return !UNROUTED.has(verb) && (!url.startsWith('/PARSE') || ignoresCase)
}
const UNROUTED = new Set(['PROPFIND', 'SEARCH'])

function expected (url: string, verb: string, probe: string, ignoresCase: boolean): Answer {
  // A target outside the mount, or with an empty segment, is refused for every verb and caller.
  if (url.startsWith('/PARSE') || url.includes('//')) {
    if (verb === 'HEAD') return { status: 400 }
    if (verb === 'OPTIONS' && corsAnswers(url, verb, ignoresCase)) return probe === 'cors preflight' ? { status: 204 } : { status: 400, code: 102 }
    return { status: 400, code: 102 }
  }
  const [, kind, spelled, tail] = /^\/parse\/(verbs|functions)\/([^/?]*)(\/|\?limit=3)?$/.exec(url)! as unknown as [string, 'verbs' | 'functions', string, string | undefined]
  const decoded = decodeURIComponent(spelled)
  const name = Object.keys(DECLARED).find((declared) => declared.toLowerCase() === decoded.toLowerCase())
  // Percent-encoded letters are the name; another case or a trailing slash is, only when the router ignores them.
  if (name && (decoded === name || ignoresCase) && (tail !== '/' || ignoresCase)) return declaredAnswer(name, kind, verb, probe, tail === '?limit=3')
  if (kind === 'functions') return parseAnswer(verb, probe)
  // Under a route prefix, a misspelling of a declared name still meets that function's 405 for the verbs it does not take; the rest is the kit's 404.
  if (name && SERVED.has(verb) && !allowed(name, 'verbs').includes(verb)) return gateRefusal(verb, probe) ?? head(verb, { status: 405, allow: allowed(name, 'verbs').join(', '), code: 119 })
  return gateRefusal(verb, probe) ?? head(verb, { status: 404, code: 101 })
}

// Every verb on every spelling of a declared path (entity route and /functions
// twin), from callers with and without the app id / REST key, with method
// overrides, CORS preflights and bodies of every kind: the status, the Allow and
// CORS headers and the body are pinned in a snapshot. How the kit registers its
// routes (one route per verb, or fewer) must never change one of these answers.
// Answers Parse's Express mount gives (undeclared functions, misspellings it serves) come through
// inject() without their body and sometimes as 500; over a real socket they are Parse's
// usual {code, error} (400/141, 404/101). They are pinned as inject sees them, which still
// shows any change of route.
// Regenerate only when an answer is meant to change: `npx tap --snapshot test/declared-verbs.test.ts`.
import t, { type Test } from 'tap'
import type { FastifyServerOptions } from 'fastify'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { APP_ID, MASTER_KEY, startKit } from './helpers/kit.js'

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
  const functions = ['onlyPost', 'onlyGet', 'postPut', 'getHead', 'patchDelete', 'limited', 'signedIn']
  const paths = [
    ...functions.flatMap((name) => [`/parse/verbs/${name}`, `/parse/functions/${name}`]),
    '/parse/functions/bareGet',
    '/parse/verbs/undeclared',
    '/parse/functions/undeclared'
  ]
  const answers: Record<string, string> = {}
  for (const declared of paths) {
    // Misspellings on a few paths: they exercise the same code for every function.
    const urls = ['onlyPost', 'onlyGet', 'getHead'].some((name) => declared.endsWith(`/${name}`)) ? spellings(declared) : [declared]
    for (const url of urls) {
      for (const verb of VERBS) {
        for (const probe of PROBES) {
          if (probe.bodyOnly && !BODY_VERBS.has(verb)) continue
          const response = await kit.app.inject({
            method: verb as 'GET',
            url,
            headers: { ...probe.headers, ...(probe.contentType ? { 'content-type': probe.contentType } : {}) },
            ...(probe.body !== undefined ? { payload: probe.body } : {})
          })
          const headers = ['allow', 'access-control-allow-origin', 'access-control-allow-methods', 'content-type']
            .filter((name) => response.headers[name] !== undefined)
            .map((name) => `${name}=${String(response.headers[name])}`)
          answers[`${verb} ${url} [${probe.name}]`] = `${response.statusCode} ${headers.join(' ')} ${response.body}`
        }
      }
    }
  }
  t.matchSnapshot(answers, 'answers')
  // Refusals are answered, never documented: the document lists only the verbs each path takes.
  const document = await kit.app.inject({ method: 'GET', url: '/api-docs/json' })
  t.equal(document.statusCode, 200)
  t.matchSnapshot(document.json().paths, 'documented paths')
}

// Cross-origin access: one @fastify/cors policy for the declared endpoints and
// Parse's own routes, preflights answered before the app id check; checked
// over HTTP and from web pages on other origins in headless Chromium.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { BaseModel, CloudFunction, ParseClass, Route, type CloudRequest } from '../lib/index.js'
import { resolveOptions } from '../lib/options.js'
import { APP_ID, appHeaders, startKit } from './helpers/kit.js'
import { launchChromium, noChromium, serveStatic } from './helpers/browser.js'

@ParseClass('Memo')
class Memo extends BaseModel {}

@Route(Memo)
class MemoFunctions {
  @CloudFunction({ methods: ['POST'], validation: { fields: { text: { type: String, required: true } } } })
  static echoMemo (request: CloudRequest) { return { echoed: request.params.text } }

  @CloudFunction({ methods: ['GET'] })
  static readMemo () { return { read: true } }
}

const PAGE = '<!doctype html><html><head><script src="/parse.min.js"></script></head><body>client</body></html>'
const parseBrowserBuild = readFileSync(createRequire(import.meta.url).resolve('parse/dist/parse.min.js'))

t.test('the cors option is checked at registration', async (t) => {
  t.same(resolveOptions({ appId: 'a', masterKey: 'm' }).cors, { origin: ['*'], allowedHeaders: [], maxAge: 600 }, 'default: any origin, as Parse Server')
  t.equal(resolveOptions({ appId: 'a', masterKey: 'm', cors: false }).cors, false)
  for (const [cors, message] of [
    [{ origin: 'https://app.example.com/' }, /kitPlugin option "cors\.origin": "https:\/\/app.example.com\/" is not an origin; write scheme:\/\/host\[:port\]/],
    [{ origin: [] }, /"cors\.origin": lists no origin: list at least one/],
    [{ origins: ['https://a.example'] }, /"cors\.origins": unknown option; did you mean "origin"\?/],
    ['yes', /must be false, true, or/],
    [{ maxAge: -1 }, /maxAge/]
  ] as const) {
    t.throws(() => resolveOptions({ appId: 'a', masterKey: 'm', cors: cors as never }), message)
  }
  t.throws(() => resolveOptions({ appId: 'a', masterKey: 'm', parseServerOptions: { allowOrigin: 'https://a.example' } }),
    /kitPlugin option "parseServerOptions.allowOrigin": has no effect: the kit answers CORS for Parse's routes too\. Use the cors option/)
})

t.test('an allow-list: declared endpoints and Parse routes share it', async (t) => {
  const allowedPage = await serveStatic(t, { '/': { type: 'text/html', body: PAGE }, '/parse.min.js': { type: 'text/javascript', body: parseBrowserBuild } })
  const refusedPage = await serveStatic(t, { '/': { type: 'text/html', body: PAGE }, '/parse.min.js': { type: 'text/javascript', body: parseBrowserBuild } })
  const kit = await startKit(t, { models: [Memo], functions: [MemoFunctions], cors: { origin: [allowedPage] } })

  t.test('preflight before the app id check', async (t) => {
    const preflight = (origin: string, url: string) => kit.request('OPTIONS', url, {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-parse-application-id,content-type' }
    })
    for (const url of ['/parse/memos/echoMemo', '/parse/functions/echoMemo', '/parse/classes/Memo']) {
      const allowed = await preflight(allowedPage, url)
      t.equal(allowed.status, 204, `${url}: preflight answered (no app id in a preflight)`)
      t.equal(allowed.headers.get('access-control-allow-origin'), allowedPage)
      t.match(allowed.headers.get('access-control-allow-headers'), /X-Parse-Application-Id.*X-Parse-Session-Token.*X-Parse-REST-API-Key.*X-Parse-Master-Key.*X-Parse-Installation-Id.*Content-Type/)
      t.match(allowed.headers.get('access-control-allow-methods'), /POST/)
      const refused = await preflight(refusedPage, url)
      t.equal(refused.headers.get('access-control-allow-origin'), null, `${url}: no allow-origin for a refused origin`)
    }
  })

  t.test('actual requests: the kit\'s headers, never Parse\'s', async (t) => {
    const declared = await kit.request('POST', '/parse/memos/echoMemo', { headers: { ...appHeaders, origin: allowedPage }, body: { text: 'a' } })
    t.equal(declared.status, 200)
    t.equal(declared.headers.get('access-control-allow-origin'), allowedPage, 'declared endpoint')
    for (const origin of [allowedPage, refusedPage]) {
      // Served by Parse's Express app, whose allowCrossDomain would answer "*".
      const parseRoute = await kit.request('GET', '/parse/health', { headers: { ...appHeaders, origin } })
      t.equal(parseRoute.status, 200)
      t.equal(parseRoute.headers.get('access-control-allow-origin'), origin === allowedPage ? allowedPage : null, `Parse route, ${origin === allowedPage ? 'allowed' : 'refused'} origin`)
      t.equal(parseRoute.headers.get('access-control-allow-methods'), null, 'no preflight headers of Parse\'s on an actual request')
    }
    const badAppId = await kit.request('POST', '/parse/memos/echoMemo', { headers: { 'x-parse-application-id': 'nope', origin: allowedPage }, body: { text: 'a' } })
    t.equal(badAppId.status, 403)
    t.equal(badAppId.headers.get('access-control-allow-origin'), allowedPage, 'a refusal is readable by the allowed page')
  })

  t.test('from web pages in headless Chromium', { skip: noChromium() }, async (t) => {
    const context = await launchChromium(t)
    const callFrom = async (pageOrigin: string) => {
      const page = await context.newPage()
      await page.goto(pageOrigin + '/')
      return page.evaluate(async ({ kitOrigin, appId }) => {
        const out: Record<string, unknown> = { pageOrigin: location.origin }
        try {
          const response = await fetch(`${kitOrigin}/parse/memos/echoMemo`, {
            method: 'POST',
            headers: { 'X-Parse-Application-Id': appId, 'Content-Type': 'application/json' },
            body: JSON.stringify({ text: 'from fetch' })
          })
          out.fetch = { status: response.status, body: await response.json() }
        } catch (error) {
          out.fetch = { failed: String(error) }
        }
        const Parse = (window as any).Parse
        Parse.initialize(appId)
        Parse.serverURL = `${kitOrigin}/parse`
        try {
          out.cloud = { result: await Parse.Cloud.run('echoMemo', { text: 'from the SDK' }) }
        } catch (error: any) {
          out.cloud = { failed: `${error.code} ${error.message}` }
        }
        return out
      }, { kitOrigin: kit.origin, appId: APP_ID })
    }
    const allowed = await callFrom(allowedPage)
    t.same(allowed.fetch, { status: 200, body: { echoed: 'from fetch' } }, 'allowed origin: fetch of a declared endpoint')
    t.same(allowed.cloud, { result: { echoed: 'from the SDK' } }, 'allowed origin: Parse.Cloud.run')
    const refused = await callFrom(refusedPage)
    t.match(refused.fetch, { failed: /Failed to fetch/ }, 'refused origin: the browser blocks fetch')
    t.match(refused.cloud, { failed: /Failed to fetch|XMLHttpRequest failed/ }, 'refused origin: the browser blocks Parse.Cloud.run')
  })
})

t.test('every route under the mount carries the policy; the application\'s own routes are left alone', async (t) => {
  const page = 'https://app.example'
  const kit = await startKit(t, { models: [Memo], functions: [MemoFunctions], cors: { origin: [page] } }, {}, (app) => {
    app.get('/own', async () => ({ own: true }))
  }, (app) => {
    // The application's routes under the mount, added after the kit.
    app.get('/parse/app/plain', async () => ({ plain: true }))
    app.get('/parse/app/unset', { config: { cors: undefined } }, async () => ({ unset: true }))
    app.get('/parse/app/opted-out', { config: { cors: false } }, async () => ({ optedOut: true }))
  })
  const headers = { ...appHeaders, origin: page }
  for (const url of ['/parse/app/plain', '/parse/app/unset']) {
    const answer = await kit.request('GET', url, { headers })
    t.equal(answer.status, 200, `${url}: ${answer.text}`)
    t.equal(answer.headers.get('access-control-allow-origin'), page, `${url}: an application's route under the mount carries the policy`)
  }
  const optedOut = await kit.request('GET', '/parse/app/opted-out', { headers })
  t.equal(optedOut.status, 200)
  t.equal(optedOut.headers.get('access-control-allow-origin'), null, 'a route\'s own cors: false is kept')
  for (const [method, url, status] of [
    ['GET', '/parse/memos/readMemo', 200],
    ['HEAD', '/parse/memos/readMemo', 200], // Fastify's own HEAD route for a GET one
    ['POST', '/parse/functions/readMemo', 200], // the /functions twin
    ['GET', '/parse/memos/echoMemo', 405], // a verb the path does not take
    ['GET', '/parse/no/such/route', 404], // Parse's mount
    ['GET', '/parse', 404]
  ] as const) {
    const answer = await kit.request(method, url, { headers })
    t.equal(answer.status, status, `${method} ${url}: ${answer.text}`)
    t.equal(answer.headers.get('access-control-allow-origin'), page, `${method} ${url}: allowed origin`)
    t.match(answer.headers.get('vary'), /\bOrigin\b/i, `${method} ${url}: Vary: Origin`)
  }
  const own = await kit.request('GET', '/own', { headers })
  t.equal(own.status, 200)
  t.equal(own.headers.get('access-control-allow-origin'), null, 'the application\'s route: no grant from the kit')
  t.equal(own.headers.get('vary'), null, 'the application\'s route: not even Vary')
  const ownPreflight = await kit.request('OPTIONS', '/own', { headers: { origin: page, 'access-control-request-method': 'GET' } })
  t.equal(ownPreflight.status, 404, 'the application\'s route: no preflight answer from the kit')
  t.equal(ownPreflight.headers.get('access-control-allow-origin'), null)
})

t.test('mounted at the root, every route is under the mount, the application\'s too', async (t) => {
  const page = 'https://app.example'
  const kit = await startKit(t, { models: [Memo], functions: [MemoFunctions], mountPath: '/', cors: { origin: [page] }, metrics: { defaultMetrics: false } }, {}, (app) => {
    app.get('/own', async () => ({ own: true }))
  })
  for (const [method, url] of [['POST', '/memos/echoMemo'], ['GET', '/health'], ['GET', '/own'], ['PROPFIND', '/memos/echoMemo']] as const) {
    const answer = await kit.request(method, url, { headers: { ...appHeaders, origin: page }, ...(method === 'POST' ? { body: { text: 'a' } } : {}) })
    t.equal(answer.headers.get('access-control-allow-origin'), page, `${method} ${url}: ${answer.status}`)
    const plain = await kit.request(method, url, { headers: appHeaders, ...(method === 'POST' ? { body: { text: 'a' } } : {}) })
    t.equal(plain.headers.get('access-control-allow-origin'), null, `${method} ${url} without Origin: no grant`)
    t.match(plain.headers.get('vary'), /\bOrigin\b/i, `${method} ${url} without Origin: Vary: Origin`)
  }
  const preflight = await kit.request('OPTIONS', '/own', { headers: { origin: page, 'access-control-request-method': 'GET' } })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), page)
  // The metrics endpoint is for the scraper: no page reads it, even with everything under the mount.
  const metrics = await kit.request('GET', '/metrics', { headers: { origin: page } })
  t.equal(metrics.status, 200)
  t.equal(metrics.headers.get('access-control-allow-origin'), null, 'metrics: no CORS grant')
})

t.test('cors: false sends no CORS grant, not even Parse\'s (only the expose list Parse always sends)', async (t) => {
  const kit = await startKit(t, { models: [Memo], functions: [MemoFunctions], cors: false })
  const parseRoute = await kit.request('GET', '/parse/health', { headers: { ...appHeaders, origin: 'https://elsewhere.example' } })
  t.equal(parseRoute.status, 200)
  t.equal(parseRoute.headers.get('access-control-allow-origin'), null)
  const declared = await kit.request('POST', '/parse/memos/echoMemo', { headers: { ...appHeaders, origin: 'https://elsewhere.example' }, body: { text: 'a' } })
  t.equal(declared.headers.get('access-control-allow-origin'), null)
  // Parse's expose list is no cross-origin grant: SDK clients need it, with or without Origin.
  for (const answer of [parseRoute, declared]) t.match(answer.headers.get('access-control-expose-headers'), /X-Parse-Job-Status-Id.*X-Parse-Push-Status-Id/)
})

t.test('by default any origin may call, as with Parse Server alone', async (t) => {
  const kit = await startKit(t, { models: [Memo], functions: [MemoFunctions] })
  const preflight = await kit.request('OPTIONS', '/parse/memos/echoMemo', { headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'POST' } })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), '*')
  const declared = await kit.request('POST', '/parse/memos/echoMemo', { headers: { ...appHeaders, origin: 'https://anywhere.example' }, body: { text: 'a' } })
  t.equal(declared.headers.get('access-control-allow-origin'), '*')
  const outside = await kit.request('OPTIONS', '/elsewhere', { headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'GET' } })
  t.equal(outside.headers.get('access-control-allow-origin'), null, 'routes outside the mount path are the application\'s business')

  // No Origin header, no CORS request: no Access-Control-* headers, but Vary: Origin so a cache never hands this answer to a page.
  for (const [method, url] of [['POST', '/parse/memos/echoMemo'], ['GET', '/parse/health']]) {
    const plain = await kit.request(method, url, { headers: appHeaders, ...(method === 'POST' ? { body: { text: 'a' } } : {}) })
    t.equal(plain.status, 200, `${url}: ${plain.text}`)
    t.equal(plain.headers.get('access-control-allow-origin'), null, `${url}: no allow-origin without Origin`)
    // Parse sends its expose list on every answer: an SDK client reads X-Parse-Job-Status-Id only when it is named.
    t.match(plain.headers.get('access-control-expose-headers'), /X-Parse-Job-Status-Id.*X-Parse-Push-Status-Id/, `${url}: Parse's expose-headers without Origin too`)
    t.match(plain.headers.get('vary'), /\bOrigin\b/i, `${url}: Vary: Origin`)
    const fromPage = await kit.request(method, url, { headers: { ...appHeaders, origin: 'https://anywhere.example' }, ...(method === 'POST' ? { body: { text: 'a' } } : {}) })
    t.equal(fromPage.headers.get('access-control-allow-origin'), '*', `${url}: with Origin, the policy answers`)
    t.match(fromPage.headers.get('access-control-expose-headers'), /X-Parse-Job-Status-Id/)
    t.match(fromPage.headers.get('vary'), /\bOrigin\b/i)
  }
  const strict = await kit.request('OPTIONS', '/parse/memos/echoMemo', { headers: { 'access-control-request-method': 'POST' } })
  t.equal(strict.status, 400, 'a preflight without Origin is still refused by the policy')
  // An OPTIONS that is no preflight is refused in Parse's shape, not as @fastify/cors's text.
  for (const [label, headers] of [['without Origin', { 'access-control-request-method': 'POST' }], ['bare', {}], ['without a method', { origin: 'https://anywhere.example' }]] as const) {
    for (const url of ['/parse/memos/echoMemo', '/parse/classes/Memo', '/parse']) {
      const answer = await kit.request('OPTIONS', url, { headers })
      t.same([answer.status, answer.headers.get('content-type'), answer.json?.code], [400, 'application/json; charset=utf-8', 102], `OPTIONS ${url} ${label}`)
      t.match(answer.json?.error, /^Request refused: OPTIONS is answered as a CORS preflight only, with Origin and Access-Control-Request-Method headers\.$/)
    }
  }
})

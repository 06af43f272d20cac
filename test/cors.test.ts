// What clients in other places get, one test process for what were separate
// files (each process costs seconds of loading Parse Server):
// - cross-origin access: one @fastify/cors policy for the declared endpoints and
//   Parse's own routes, preflights answered before the app id check; checked
//   over HTTP and from web pages on other origins in headless Chromium;
// - test/browser-sdk.test.ts: the browser page of docs/guides/browser-clients.md runs as written;
// - test/parse-sdk-clients.test.ts: what Parse JavaScript SDK clients get through the kit.
// Each part boots its own kit(s) with its own options; the classes of all parts
// are declared in the one process, under distinct names.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { BaseModel, CloudFunction, ParseClass, Route, type CloudRequest, ParseField, Type } from '../lib/index.js'
import { resolveOptions } from '../lib/options.js'
import { APP_ID, appHeaders, startKit, masterHeaders, MASTER_KEY, lane, tempDir, type Kit } from './helpers/kit.js'
import { scaled } from './helpers/time-scale.js'
import { CHROMIUM, noChromium, serveStatic } from './helpers/browser.js'
import type { Browser, BrowserContext } from 'playwright-core'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseMarkdown } from './helpers/markdown.js'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import Parse from 'parse/node'
import { mongoReplicaSet } from './helpers/mongo.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

let chromium: Promise<Browser> | undefined
/**
 * A fresh browser context (profile) on the one headless Chromium the file's browser tests share
 * (a launch costs CPU of its own); the context, and with it its connections to the kit, is closed
 * when the test ends, the browser when the file does.
 */
async function chromiumContext (test: Test): Promise<BrowserContext> {
  chromium ??= (async () => {
    const { chromium: launcher } = await import('playwright-core')
    const browser = await launcher.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
    })
    t.teardown(() => browser.close())
    return browser
  })()
  const context = await (await chromium).newContext({ viewport: { width: 1280, height: 900 } })
  test.teardown(() => context.close())
  return context
}

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
    const context = await chromiumContext(t)
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

// ── from test/browser-sdk.test.ts ──
// The browser page of docs/guides/browser-clients.md, as written there: the
// Parse JS SDK's browser build in headless Chromium, on an origin of its own,
// against the example application. Each `console.log` of the block must print
// what its trailing comment says, so the page cannot drift from the server.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const GUIDE = 'docs/guides/browser-clients.md'
const SNIPPET_PAGE = '<!doctype html><html><head><script src="/parse.min.js"></script></head><body>page</body></html>'

/** The guide's one ```ts browser block. */
function browserBlock (): string {
  const blocks = parseMarkdown(GUIDE, readFileSync(path.join(root, GUIDE), 'utf8')).blocks.filter((block) => block.info.includes('browser'))
  if (blocks.length !== 1) throw new Error(`${GUIDE} should hold exactly one \`\`\`ts browser block, found ${blocks.length}`)
  return blocks[0].code
}

t.test('the browser snippet runs as written against the example app', { skip: noChromium() }, async (t) => {
  const code = browserBlock()
  const expected = code.split('\n').filter((line) => /^console\.log\(/.test(line)).map((line) => line.split('//')[1]?.trim())
  t.ok(expected.length >= 2 && expected.every(Boolean), 'every console.log of the block says what it prints')

  const kit = await startKit(t, {
    models: path.join(root, 'fixtures', 'models'),
    functions: path.join(root, 'fixtures', 'functions'),
    allowAuthRoutes: true
  })
  const demo = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'demo', password: 'demo-password' } })
  t.equal(demo.status, 201, 'the demo user of the snippet exists')

  // The block with the page's own values: the app id and the address the server listens on.
  t.match(code, "Parse.initialize('my-app', '')")
  t.match(code, "'http://localhost:1337/parse'")
  const body = code
    .replace(/^import Parse from 'parse'$/m, '')
    .replace("Parse.initialize('my-app', '')", `Parse.initialize(${JSON.stringify(APP_ID)}, '')`)
    .replace("'http://localhost:1337/parse'", JSON.stringify(`${kit.origin}/parse`))

  const parseBrowserBuild = readFileSync(createRequire(import.meta.url).resolve('parse/dist/parse.min.js'))
  const pageOrigin = await serveStatic(t, { '/': { type: 'text/html', body: SNIPPET_PAGE }, '/parse.min.js': { type: 'text/javascript', body: parseBrowserBuild } })
  const browser = await chromiumContext(t)
  const page = await browser.newPage()
  await page.goto(pageOrigin)
  const printed = await page.evaluate(`(async () => {
    const printed = []
    const console = { log: (...values) => printed.push(values.join(' ')) }
    ${body}
    return printed
  })()`)
  t.same(printed, expected, 'the page printed what the guide says it prints')
})

// ── from test/parse-sdk-clients.test.ts ──
// What Parse JavaScript SDK clients get through the kit, with every route opened
// as an SDK application would (allowAuthRoutes, allowedRoutes /*): the SDK runs in
// a child process and speaks real HTTP, so directAccess never routes it in process.
const here = path.dirname(fileURLToPath(import.meta.url))

@ParseClass('SdkMemo')
class SdkMemo extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
  @ParseField({ type: 'Date' }) declare due: Date
}

const SdkMemoJSON = Type.Object({ objectId: Type.String(), text: Type.String(), createdAt: Type.String({ format: 'date-time' }) })

class SdkFunctions {
  @CloudFunction({ returns: SdkMemoJSON, validation: { fields: { text: { type: String, required: true } } } })
  static async makeSdkMemo (request: CloudRequest) {
    return new SdkMemo({ text: request.params.text }).save(null, { useMasterKey: true })
  }
}

// Dates in params: `when` declared, `also` and `nested` not. The answer says what the handler got, and hands `when` back.
@Route('sdk-dates')
class DateFunctions {
  @CloudFunction({ validation: { fields: { when: { type: Date, required: true } } } })
  static async sdkDates (request: CloudRequest<{ when: Date, also?: unknown, nested?: { at: unknown, list: unknown[] } }>) {
    const { when, also, nested } = request.params
    const isDate = (value: unknown) => value instanceof Date
    return { whenIsDate: isDate(when), when: when.toISOString(), alsoIsDate: isDate(also), nestedIsDate: isDate(nested?.at) && isDate(nested?.list[0]), echo: when }
  }

  // `returns` gives `due` as ISO text: the saved object's toJSON() has it in Parse's encoding.
  @CloudFunction({ returns: Type.Object({ objectId: Type.String(), due: Type.String({ format: 'date-time' }) }), validation: { fields: { when: { type: Date, required: true } } } })
  static async sdkDatedMemo (request: CloudRequest<{ when: Date }>) {
    return new SdkMemo({ text: 'dated', due: request.params.when }).save(null, { useMasterKey: true })
  }
}

/** The answers of SDK scenarios run in order in one child process (each child pays for Node and the SDK), by name. */
async function sdk (kit: Kit, scenarios: string[], sessionToken = ''): Promise<Record<string, any>> {
  const args = [path.join(here, 'helpers', 'sdk-scenario.mjs'), `${kit.origin}/parse`, APP_ID, MASTER_KEY, scenarios.join(','), sessionToken]
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: scaled(120_000) })
  return JSON.parse(stdout)
}

t.test('Parse SDK clients', async (t) => {
  // A database named here, so that the last subtest can restart the server on it (and a files directory beside it).
  const dataDir = path.join(tempDir(), 'postgres')
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  const options = {
    dataDir,
    ...(mongo ? { databaseURI: mongo.uri } : await sharedPostgres(t)),
    models: [SdkMemo],
    functions: [SdkFunctions, DateFunctions],
    allowAuthRoutes: true,
    allowedRoutes: [{ path: '/*' }],
    parseServerOptions: {
      cloud: (parse: typeof Parse) => {
        parse.Cloud.job('tally', async () => 'counted')
      }
    }
  }
  let kit = await startKit(t, options)
  const user = await kit.signUp('sdk-client')
  // A class created at run time, not declared (Parse refuses class creation to clients by default: allowClientClassCreation).
  const note = await kit.request('POST', '/parse/classes/SdkNote', { headers: masterHeaders, body: { first: 1 } })
  t.equal(note.status, 201, note.text)
  // The first boot's SDK scenarios, in the order of the subtests below, from one child; each
  // subtest checks its own. newFields signs a user up in the SDK, so it is last (before the restart).
  const sdkAnswers = await sdk(kit, ['startJob', 'uploads', 'copyFile', 'cloudRunObject', 'cloudRunDates', 'newFields'], user.token)

  t.test('Parse.Cloud.startJob answers the job status id, and the status can be read', async (t) => {
    const answer = sdkAnswers.startJob
    t.ok(answer.ok, JSON.stringify(answer))
    t.type(answer.id, 'string', 'the id came through X-Parse-Job-Status-Id')
    t.equal(answer.status, 'succeeded')
    // The header the SDK needs is exposed without Origin too (a Node client sends none).
    const raw = await kit.request('POST', '/parse/jobs/tally', { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY }, body: {} })
    t.ok(raw.headers.get('x-parse-job-status-id'))
    t.match(raw.headers.get('access-control-expose-headers'), /X-Parse-Job-Status-Id/)
  })

  t.test('byte-array and base64 uploads with credentials in the body are admitted as Parse admits them', async (t) => {
    const answer = sdkAnswers.uploads
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer.bytes, /\/parse\/files\/test-app\/.*bytes\.txt$/)
    t.equal(answer.content, 'hello', 'the base64 upload stored its bytes')
    const upload = (body: unknown) => kit.request('POST', '/parse/files/raw.txt', { body, contentType: 'text/plain' })
    const base64 = Buffer.from('raw').toString('base64')
    const withMaster = await upload({ base64, _ApplicationId: APP_ID, _MasterKey: MASTER_KEY })
    t.equal(withMaster.status, 201, withMaster.text)
    const withSession = await upload({ base64, _ApplicationId: APP_ID, _SessionToken: user.token })
    t.equal(withSession.status, 201, withSession.text)
    const anonymous = await upload({ base64 })
    t.equal(anonymous.status, 403, 'no application id: refused')
    // As with Parse alone: a wrong master key is no master key, and public uploads are off by default.
    for (const body of [{ base64, _ApplicationId: APP_ID, _MasterKey: 'wrong' }, { base64, _ApplicationId: APP_ID }]) {
      const refused = await upload(body)
      t.match({ status: refused.status, ...refused.json }, { status: 400, code: Parse.Error.FILE_SAVE_ERROR, error: /public is disabled/ }, JSON.stringify(body))
    }
    const oversized = await upload({ base64: 'A'.repeat(1024 * 1024 + 16), _ApplicationId: APP_ID, _MasterKey: MASTER_KEY })
    t.equal(oversized.status, 413, 'bounded by the body limit')
  })

  t.test('a streaming upload with header credentials stays a stream', async (t) => {
    const response = await fetch(`${kit.origin}/parse/files/streamed.bin`, {
      method: 'POST',
      headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY, 'x-parse-upload-mode': 'stream', 'content-type': 'application/octet-stream' },
      body: Buffer.from([0, 1, 2, 3])
    })
    t.equal(response.status, 201, await response.clone().text())
    const { url } = await response.json() as { url: string }
    const read = await fetch(url.replace(/^https?:\/\/[^/]+/, kit.origin))
    t.same([...Buffer.from(await read.arrayBuffer())], [0, 1, 2, 3])
  })

  t.test('a copied Parse.File saves: the server\'s own host is an allowed file URL domain', async (t) => {
    const answer = sdkAnswers.copyFile
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer.url, /^http:\/\/127\.0\.0\.1:\d+\/parse\/files\//)
    const elsewhere = await kit.request('POST', '/parse/classes/Holder', {
      headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY },
      body: { doc: { __type: 'File', name: 'x.txt', url: 'http://elsewhere.example/x.txt' } }
    })
    t.equal(elsewhere.status, 400, 'another host stays refused')
    t.equal(elsewhere.json?.code, Parse.Error.FILE_SAVE_ERROR)
  })

  t.test('Parse.Cloud.run of a function with returns gives a Parse.Object', async (t) => {
    const answer = sdkAnswers.cloudRunObject
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer, { isParseObject: true, className: 'SdkMemo', text: 'from the SDK', createdAt: true })
    t.type(answer.id, 'string')
  })

  t.test('Parse.Cloud.run with JS Dates: a declared Date param and undeclared ones reach the handler as Dates', async (t) => {
    const answer = sdkAnswers.cloudRunDates
    t.match(answer, { ok: true, whenIsDate: true, when: '2026-12-24T10:00:00.000Z', alsoIsDate: true, nestedIsDate: true }, JSON.stringify(answer))
    t.equal(answer.echoIsDate, true, 'a returned Date comes back to Parse.Cloud.run as a Date ({__type: "Date", iso} on /functions, as Parse answers)')
    const iso = '2026-12-24T10:00:00.000Z'
    const twin = await kit.request('POST', '/parse/functions/sdkDates', { headers: appHeaders, body: { when: iso, also: { __type: 'Date', iso } } })
    t.match(twin.json, { result: { whenIsDate: true, when: iso, alsoIsDate: true, echo: { __type: 'Date', iso } } }, 'REST: ISO text for the declared field is a Date too')
    const entity = await kit.request('POST', '/parse/sdk-dates/sdkDates', { headers: appHeaders, body: { when: { __type: 'Date', iso } } })
    t.match(entity.json, { whenIsDate: true, when: iso, echo: iso }, 'the entity route (plain JSON) answers a Date as ISO text')
    for (const url of ['/parse/sdk-dates/sdkDatedMemo', '/parse/functions/sdkDatedMemo']) {
      const dated = await kit.request('POST', url, { headers: appHeaders, body: { when: iso } })
      t.equal(dated.status, 200, dated.text)
      t.equal((dated.json.result ?? dated.json).due, iso, `${url}: a Date field \`returns\` gives as ISO text is ISO text, not a 500`)
    }
    for (const when of ['not a date', { __type: 'Date', iso: 'not a date' }, 12]) {
      const refused = await kit.request('POST', '/parse/functions/sdkDates', { headers: appHeaders, body: { when } })
      t.match({ status: refused.status, ...refused.json }, { status: 400, code: Parse.Error.VALIDATION_ERROR, error: /when/ }, JSON.stringify(when))
    }
    // Params nested as deep as the body limit allows are walked without recursion: never a 500 (it was a stack overflow).
    const deep = `${'['.repeat(200_000)}{"__type":"Date","iso":"${iso}"}${']'.repeat(200_000)}`
    for (const url of ['/parse/functions/sdkDates', '/parse/sdk-dates/sdkDates']) {
      const nested = await kit.request('POST', url, { headers: appHeaders, body: `{"when":"${iso}","also":${deep}}` })
      t.equal(nested.status, 200, `${url}: ${nested.text.slice(0, 200)}`)
    }
  })

  // Last: the server restarts on the same database (its second Defined Schemas migration).
  t.test('after a restart, clients still add fields where Parse alone lets them; declared classes stay closed', async (t) => {
    const before = sdkAnswers.newFields
    t.match(before, { ok: true, signUp: 'saved', note: 'saved', memo: Parse.Error.OPERATION_FORBIDDEN }, 'first boot')
    await kit.app.close()
    kit = await startKit(t, options)
    const { newFields: after } = await sdk(kit, ['newFields'])
    t.match(after, { ok: true, signUp: 'saved', phone: '555-0100', note: 'saved' }, 'a sign-up with a new field and a new field on an undeclared class: 201, as on Parse alone')
    t.equal(after.memo, Parse.Error.OPERATION_FORBIDDEN, 'a declared class keeps addField closed')
    const addField = async (className: string) => (await kit.request('GET', `/parse/schemas/${className}`, { headers: masterHeaders })).json?.classLevelPermissions?.addField
    for (const className of ['_User', '_Session', '_Role', 'SdkNote']) t.same(await addField(className), { '*': true }, `${className}: addField as Parse gives it`)
    t.same(await addField('SdkMemo'), {}, 'SdkMemo (declared): addField closed')
  })
})

// Parse Dashboard in the example app: mounted only behind DASHBOARD_USER and
// DASHBOARD_PASS, served with its assets and content types, the master key
// readable only after logging in; logged into through the real page in
// headless Chromium, where the app's classes are listed.
// parse-dashboard is not one of the kit's dependencies: this test uses the copy
// test/dashboard/ installs (npm ci --prefix test/dashboard; .ci/run does it), and
// skips what needs the package when that copy is absent.
import t from 'tap'
import Fastify from 'fastify'
import { createRequire, register } from 'node:module'
import { existsSync, rmSync } from 'node:fs'
import path from 'node:path'
import { buildExampleApp } from '../fixtures/app.js'
import { dashboardDecision, mountDashboard } from '../fixtures/dashboard.js'
import { isNotFound } from '../lib/host/dashboard.js'
import { resetKitConfig } from '../lib/config.js'
import { freePort } from '../lib/storage/free-port.js'
import { tempDir } from './helpers/kit.js'
import { launchChromium, noChromium } from './helpers/browser.js'
import { scaled } from './helpers/time-scale.js'
import { clusterFromTemplate } from './helpers/pg-template.js'

const MASTER_KEY = 'dashboard-test-master-key-5Zr8'
const USER = 'dash-admin'
const PASS = 'dash-password-4Kq1'
const APP_NAME = 'fastify-parse-kit example'

const here = path.dirname(new URL(import.meta.url).pathname)
const installed = existsSync(path.join(here, 'dashboard', 'node_modules', 'parse-dashboard', 'package.json'))
if (installed) register('./helpers/dashboard-resolve.mjs', import.meta.url)
const notInstalled = installed ? false : 'parse-dashboard is installed for this test only: run npm ci --prefix test/dashboard'

t.test('mounting rules: never without a login', async (t) => {
  t.match(dashboardDecision(false, {}), { mount: false, reason: /not installed/ })
  t.same(dashboardDecision(true, { DASHBOARD_USER: 'u', DASHBOARD_PASS: 'p', NODE_ENV: 'production' }), { mount: true, user: 'u', pass: 'p' })
  t.match(dashboardDecision(true, { NODE_ENV: 'production' }), { mount: false, reason: /set DASHBOARD_USER and DASHBOARD_PASS/ })
  t.match(dashboardDecision(true, { DASHBOARD_USER: 'u' }), { mount: false })
  t.match(dashboardDecision(true, {}), { mount: false, reason: /never served without a login/ }, 'not in development either: its configuration carries the master key')
  // Through off-thread module hooks the resolution error may arrive without its code.
  t.ok(isNotFound(new Error("Cannot find package 'parse-dashboard' imported from /app/lib/host/dashboard.ts")), 'a missing package, by its message')
  t.ok(isNotFound(Object.assign(new Error('x'), { code: 'ERR_MODULE_NOT_FOUND' })), 'by its code')
  t.notOk(isNotFound(new Error("Cannot find package 'express' imported from /app/node_modules/parse-dashboard/index.js")), 'a broken install is no missing package')
})

t.test('installed without a login: not mounted, not even loaded', { skip: notInstalled }, async (t) => {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(() => app.close())
  const mounted = await mountDashboard(app, { appId: 'a', masterKey: MASTER_KEY, serverURL: 'http://127.0.0.1:1/parse', appName: 'x', env: {} })
  t.equal(mounted, false)
  t.equal((await app.inject('/dashboard/parse-dashboard-config.json')).statusCode, 404, 'nothing served')
  t.match(lines.join(''), /\/dashboard not mounted: set DASHBOARD_USER and DASHBOARD_PASS/)
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes(`${path.sep}parse-dashboard${path.sep}`))
  t.same(loaded, [], 'installed but not mounted: the package is never loaded (it weighs some 25 MB)')
})

t.test('the example app with parse-dashboard installed and a login configured', { skip: notInstalled }, async (t) => {
  resetKitConfig()
  const saved = { user: process.env.DASHBOARD_USER, pass: process.env.DASHBOARD_PASS }
  process.env.DASHBOARD_USER = USER
  process.env.DASHBOARD_PASS = PASS
  t.teardown(() => {
    for (const [name, value] of [['DASHBOARD_USER', saved.user], ['DASHBOARD_PASS', saved.pass]] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  const dir = tempDir('fpk-dashboard-')
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  await clusterFromTemplate(path.join(dir, 'postgres'))
  const app = await buildExampleApp({
    kit: { dataDir: path.join(dir, 'postgres'), ephemeralDatabase: true, masterKey: MASTER_KEY, serverURL: `${origin}/parse` },
    // Parse's first boot on a busy machine can outlast Fastify's 10 s default.
    fastify: { logger: { level: process.env.TEST_LOG_LEVEL ?? 'error' }, pluginTimeout: 120_000 }
  })
  await app.listen({ port, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })

  t.test('pages, assets and content types over HTTP', async (t) => {
    const root = await fetch(`${origin}/dashboard/`, { redirect: 'manual' })
    t.equal(root.status, 302, 'a visitor is sent to the login page')
    t.match(root.headers.get('location'), /\/dashboard\/login/)
    const login = await fetch(`${origin}/dashboard/login`)
    t.equal(login.status, 200)
    t.match(login.headers.get('content-type'), /^text\/html/, 'the login page is HTML')
    const page = await login.text()
    t.match(page, /login\.bundle\.js/)
    const bundle = await fetch(`${origin}/dashboard/bundles/login.bundle.js`)
    t.equal(bundle.status, 200)
    t.match(bundle.headers.get('content-type'), /javascript/, 'scripts are served as JavaScript')
    await bundle.arrayBuffer()
    const config = await fetch(`${origin}/dashboard/parse-dashboard-config.json`)
    const body = await config.text()
    t.equal(config.status, 401, 'the configuration needs a login')
    t.notOk(body.includes(MASTER_KEY), 'the master key is not readable without logging in')
    t.notOk(page.includes(MASTER_KEY))
    t.equal((await fetch(`${origin}/dashboard/no-such-thing.js`)).status < 500, true, 'unknown paths do not fail')
  })

  t.test('log in through the real page in headless Chromium and see the classes', { skip: noChromium() }, async (t) => {
    const context = await launchChromium(t)
    const page = await context.newPage()
    await page.goto(`${origin}/dashboard/`)
    await page.waitForSelector('input[name=username]', { timeout: scaled(30_000) })
    await page.fill('input[name=username]', USER)
    await page.fill('input[name=password]', 'wrong-password')
    await Promise.all([page.waitForNavigation(), page.click('[type=submit]')])
    t.match(page.url(), /\/dashboard\/login/, 'a wrong password stays on the login page')
    await page.fill('input[name=username]', USER)
    await page.fill('input[name=password]', PASS)
    await Promise.all([page.waitForNavigation(), page.click('[type=submit]')])
    t.notMatch(page.url(), /\/login/, 'logged in')
    await page.goto(`${origin}/dashboard/apps/${encodeURIComponent(APP_NAME)}/browser/Note`)
    await page.waitForFunction(() => /Product/.test(document.body.innerText) && /Order/.test(document.body.innerText), undefined, { timeout: scaled(60_000) })
    const text = await page.evaluate(() => document.body.innerText)
    for (const className of ['_Role', '_User', 'Coupon', 'Note', 'Order', 'OrderLine', 'Product']) t.match(text, className, `the class list shows ${className}`)
    await page.screenshot({ path: path.join(dir, 'dashboard.png') })
  })
})

// Parse Server requires subsystems the kit never mounts (the GraphQL server,
// the MongoDB driver on PostgreSQL, the Redis client, LDAP and Game Center
// code), and libraries the kit uses load modules it rarely needs (YAML for
// @fastify/swagger, cron-parser for pg-boss), and the Parse SDK its WebSocket
// client and user encryption; the kit loads them at their first use
// (lib/parse/lazy-subsystems.ts), and its own LiveQuery sockets (ws) only with the liveQuery option (plugin.ts).
// Checked in a fresh process (a clean module cache): none is loaded by
// importing the kit, booting it or answering a request; asked for, each
// works (Parse's GraphQL with mountGraphQL answers a query, the MongoDB
// adapter builds and Parse's instanceof test sees it). prom-client, the kit's
// own, loads only with the metrics option (test/live-query.test.ts, which holds the former metrics tests, uses it).
// The child runs with --enable-source-maps: Parse's files are compiled without their inline maps
// (lib/parse/no-parse-inline-maps.ts), other packages keep theirs.
import t from 'tap'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFERRED_PACKAGES, DEFERRED_REPORT_MARK } from './helpers/deferred-subsystems-report.js'
import { scaled } from './helpers/time-scale.js'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

interface Loaded { modules: Record<string, boolean>, packageFiles: Record<string, number> }
interface Report {
  afterImport: Loaded
  afterBoot: Loaded
  sourceMaps: { parseLoaded: boolean, parseMap: boolean, otherMap: boolean }
  afterRequest: Loaded
  requestStatus: number
  afterAsking: Loaded
  graphql: { status: number, body: unknown }
  mongo: { before: { loaded: boolean, plainObjectIsInstance: boolean }, loaded: boolean, instanceOfParseView: boolean, instanceOfReal: boolean }
  esModule: Record<string, { listed: boolean, real: boolean }>
  jwks: { calledStandIn: string, loaded: boolean }
  yaml: { startsWithOpenapi: boolean, loaded: boolean }
  cron: { minutesOfNext: number, loaded: boolean }
  rateLimit: { loaded: boolean, status: number }
  security: { status: number, hasState: boolean, loaded: boolean }
  logins: { mfaCodeDigits: boolean, page: string, bcryptjs: boolean, loaded: boolean }
  sdk: { decrypted: string, webSocketOpened: boolean, loaded: boolean }
  sdkClass: { error: string, realError: string, instanceOfStandIn: boolean, instanceOfReal: boolean, prototype: string, keys: string }
}

function runChild (): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--enable-source-maps', '--import', import.meta.resolve('tsx/esm'), path.join(root, 'test', 'helpers', 'deferred-subsystems-node.ts')],
      { cwd: root, timeout: scaled(180_000), maxBuffer: 16 * 2 ** 20, env: { ...process.env, LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((candidate) => candidate.startsWith(DEFERRED_REPORT_MARK))
        if (!line) return reject(new Error(`the child printed no report${error ? ` (${error.message})` : ''}:\n${stdout}\n${stderr}`))
        resolve(JSON.parse(line.slice(DEFERRED_REPORT_MARK.length)) as Report)
      })
  })
}

const nothingLoaded = (loaded: Loaded) => ({
  modules: Object.fromEntries(Object.keys(loaded.modules).map((request) => [request, false])),
  packageFiles: Object.fromEntries(DEFERRED_PACKAGES.map((folder) => [folder, 0]))
})

t.test('the kit loads none of the subsystems it defers, and each works when asked for', async (t) => {
  const report = await runChild()
  t.same(report.afterImport, nothingLoaded(report.afterImport), 'importing the kit loads none')
  t.same(report.afterBoot, nothingLoaded(report.afterBoot), 'booting it on PostgreSQL loads none')
  t.same(report.sourceMaps, { parseLoaded: true, parseMap: false, otherMap: true },
    'with --enable-source-maps, Parse\'s files are compiled without their inline source maps and another package keeps its map')
  t.equal(report.requestStatus, 200, 'a request is answered')
  t.same(report.afterRequest, nothingLoaded(report.afterRequest), 'answering a request loads none')

  t.same(report.graphql, { status: 200, body: { data: { health: true } } }, 'Parse\'s GraphQL with mountGraphQL answers a query')
  t.same(report.mongo, { before: { loaded: false, plainObjectIsInstance: false }, loaded: true, instanceOfParseView: true, instanceOfReal: true },
    'the MongoDB adapter builds; Parse\'s instanceof test is false before it loads and true for what it builds')
  t.same(report.jwks, { calledStandIn: 'function', loaded: true }, 'jwks-rsa\'s stand-in, called as Parse\'s JWT logins call it, builds a client')
  t.same(report.yaml, { startsWithOpenapi: true, loaded: true }, 'the API document as YAML loads the YAML library and is written')
  t.same(report.cron, { minutesOfNext: 0, loaded: true }, 'a cron expression parsed through the module pg-boss required loads cron-parser')
  t.same(report.rateLimit, { loaded: true, status: 200 }, 'Parse\'s rateLimit option builds its limiter through the stand-in (express-rate-limit loads), and a limited route answers')
  t.same(report.security, { status: 200, hasState: true, loaded: true }, 'Parse\'s /security route constructs its CheckRunner through the stand-in and reports')
  t.same(report.logins, { mfaCodeDigits: true, page: 'Hello kit', bcryptjs: true, loaded: true }, 'otpauth, mustache and bcryptjs load at their first use and work')
  t.same(report.sdk, { decrypted: '{"a":1}', webSocketOpened: true, loaded: true }, 'the Parse SDK\'s user encryption and WebSocket client (constructed) load at their first use and work')
  t.equal(report.sdkClass.error, report.sdkClass.realError, 'an error the deferred class\'s constructor throws surfaces as the real one\'s')
  t.match(report.sdkClass, { error: /^SyntaxError: /, instanceOfStandIn: true, instanceOfReal: true, prototype: 'returned true', keys: 'returned true' },
    'the constructed stand-in answers instanceof, its prototype and its keys as the real class')
  for (const [request, mark] of Object.entries(report.esModule)) t.equal(mark.listed, mark.real, `${request}: the stand-in's __esModule is the real module's`)
  t.ok(Object.values(report.afterAsking.modules).every(Boolean), 'asked for, every deferred module is the real one')
  t.ok(report.afterAsking.packageFiles['/node_modules/@apollo/server/'] > 0, 'Apollo Server loaded with the GraphQL server')
  t.ok(report.afterAsking.packageFiles['/node_modules/mongodb/'] > 0, 'the MongoDB driver loaded with the adapter')
  t.ok(report.afterAsking.packageFiles['/node_modules/luxon/'] > 0, 'luxon loaded with cron-parser')
})

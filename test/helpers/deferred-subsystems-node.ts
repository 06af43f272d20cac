// A fresh process for test/deferred-subsystems.test.ts (a clean module cache):
// loads the kit the way an application does, boots it on a PostgreSQL of its
// own and answers one request, noting which of Parse's deferred subsystems
// are loaded after each step; then asks for them: Parse's own server with
// mountGraphQL (ParseServer.startApp) answers a GraphQL query on the same
// database (with Parse's rate limit and security checks), the MongoDB adapter
// is built, and each other deferred module is used as Parse or its SDK uses
// it. Prints one JSON line (the mark below) and exits.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire, findSourceMap } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import { kitPlugin } from '../../plugin.js'
import { kitServerOptions } from '../../lib/index.js'
import { DEFERRED_SUBSYSTEMS, MONGO_STORAGE_ADAPTER, PARSE_CHECK_RUNNER, deferredModuleFile, isModuleLoaded, loadModule } from '../../lib/parse/lazy-subsystems.js'
import { parseServerPackage } from '../../lib/parse/parse-main.js'
import { mongoStorageAdapterClass } from '../../lib/parse/internals.js'
import { startEmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { freePort } from '../../lib/storage/free-port.js'
import { copyTemplateCluster } from './pg-template.js'
import { DEFERRED_PACKAGES, DEFERRED_REPORT_MARK } from './deferred-subsystems-report.js'

const requireHere = createRequire(import.meta.url)
const standInFiles = new Set(DEFERRED_SUBSYSTEMS.flatMap((subsystem) => subsystem.modules.map((entry) => deferredModuleFile(entry.request, entry.from))))

/** Which deferred modules are loaded, and how many files of each deferred package are in require.cache (stand-ins not counted). */
function loaded (): { modules: Record<string, boolean>, packageFiles: Record<string, number> } {
  const loadedFiles = new Set(DEFERRED_SUBSYSTEMS.flatMap((subsystem) => subsystem.modules.filter((entry) => isModuleLoaded(entry.request, entry.from)).map((entry) => deferredModuleFile(entry.request, entry.from))))
  const files = Object.keys(requireHere.cache).filter((file) => !standInFiles.has(file) || loadedFiles.has(file))
  return {
    modules: Object.fromEntries(DEFERRED_SUBSYSTEMS.flatMap((subsystem) => subsystem.modules.map((entry) => [entry.request, isModuleLoaded(entry.request, entry.from)]))),
    packageFiles: Object.fromEntries(DEFERRED_PACKAGES.map((folder) => [folder, files.filter((file) => file.includes(folder)).length]))
  }
}

const report: Record<string, unknown> = { afterImport: loaded() }
// Not test/helpers/kit.ts's tempDir: that module loads the MongoDB driver (its MongoDB lane).
const dir = mkdtempSync(path.join(tmpdir(), 'fpk-deferred-'))
chmodSync(dir, 0o755) // PostgreSQL runs as user postgres when the tests run as root
const dataDir = path.join(dir, 'postgres')
await copyTemplateCluster(dataDir)
const database = await startEmbeddedPostgres({ dataDir, ephemeral: true })
try {
  const app = Fastify(kitServerOptions({ level: 'warn' }))
  await app.register(kitPlugin, { appId: 'deferred', masterKey: 'deferred-master-key', databaseURI: database.uri, mountPath: '/parse' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  report.afterBoot = loaded()
  // This process runs with --enable-source-maps: Parse's files compiled without their inline maps, any other keeps its own.
  const parseFile = requireHere.resolve('parse-server/lib/RestWrite.js')
  report.sourceMaps = {
    parseLoaded: requireHere.cache[parseFile] !== undefined,
    parseMap: findSourceMap(parseFile) !== undefined,
    otherMap: findSourceMap(requireHere.resolve('ajv')) !== undefined
  }
  const address = app.server.address() as { port: number }
  const health = await fetch(`http://127.0.0.1:${address.port}/parse/classes/_User?limit=1`, { headers: { 'x-parse-application-id': 'deferred', 'x-parse-master-key': 'deferred-master-key' } })
  report.requestStatus = health.status
  report.afterRequest = loaded()
  // Asked for: the API document as YAML, through @fastify/swagger (the kit registers it on every boot).
  const yamlDocument = (app as unknown as { swagger (options: { yaml: true }): string }).swagger({ yaml: true })
  report.yaml = { startsWithOpenapi: yamlDocument.startsWith('openapi:'), loaded: isModuleLoaded('yaml', '@fastify/swagger') }
  await app.close()

  // Asked for: Parse's GraphQL, as Parse mounts it (mountGraphQL), on the same database.
  const port = await freePort()
  const { ParseServer } = parseServerPackage()
  const parse = await ParseServer.startApp({
    appId: 'deferred-graphql',
    masterKey: 'deferred-graphql-master-key',
    databaseURI: database.uri,
    port,
    serverURL: `http://127.0.0.1:${port}/parse`,
    mountPath: '/parse',
    mountGraphQL: true,
    graphQLPath: '/graphql',
    // Asked for too: Parse's own rate limit (express-rate-limit) and its security checks (CheckRunner, on /security).
    rateLimit: [{ requestPath: '/classes/Limited', requestTimeWindow: 60_000, requestCount: 1, includeMasterKey: true }],
    security: { enableCheck: true }
  } as Parameters<typeof ParseServer.startApp>[0])
  const answer = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-parse-application-id': 'deferred-graphql', 'x-parse-master-key': 'deferred-graphql-master-key' },
    body: JSON.stringify({ query: '{ health }' })
  })
  report.graphql = { status: answer.status, body: await answer.json() }
  const limited = async () => (await fetch(`http://127.0.0.1:${port}/parse/classes/Limited`, { headers: { 'x-parse-application-id': 'deferred-graphql', 'x-parse-master-key': 'deferred-graphql-master-key' } })).status
  // Parse built its limiter through the stand-in (its call loads the module) and runs it on a matching request.
  report.rateLimit = { loaded: isModuleLoaded('express-rate-limit'), status: await limited() }
  const security = await fetch(`http://127.0.0.1:${port}/parse/security`, { headers: { 'x-parse-application-id': 'deferred-graphql', 'x-parse-master-key': 'deferred-graphql-master-key' } })
  const securityReport = await security.json() as { report?: { state?: unknown } }
  report.security = { status: security.status, hasState: typeof securityReport.report?.state === 'string', loaded: isModuleLoaded(PARSE_CHECK_RUNNER) }
  await (parse as unknown as { handleShutdown (): Promise<void> }).handleShutdown()
  ;(parse as unknown as { server: { close (): void, closeAllConnections (): void } }).server.closeAllConnections()
  ;(parse as unknown as { server: { close (): void } }).server.close()

  // Asked for: the MongoDB adapter. Before it loads, nothing is an instance of Parse's class; after, what it builds is.
  const parseView = requireHere(deferredModuleFile(MONGO_STORAGE_ADAPTER)) as { default: abstract new (...args: never[]) => unknown }
  const beforeMongo = { loaded: isModuleLoaded(MONGO_STORAGE_ADAPTER), plainObjectIsInstance: ({}) instanceof parseView.default }
  const adapter = new (mongoStorageAdapterClass())({ uri: 'mongodb://127.0.0.1:9/deferred', collectionPrefix: '', mongoOptions: {} })
  report.mongo = { before: beforeMongo, loaded: isModuleLoaded(MONGO_STORAGE_ADAPTER), instanceOfParseView: adapter instanceof parseView.default, instanceOfReal: adapter instanceof (loadModule(MONGO_STORAGE_ADAPTER).default as new () => unknown) }

  // Asked for: jwks-rsa, whose exports is a function Parse's Apple, Google, Facebook and Keycloak logins call.
  const jwksClient = requireHere(deferredModuleFile('jwks-rsa')) as (options: { jwksUri: string }) => { getSigningKey?: unknown }
  report.jwks = { calledStandIn: typeof jwksClient({ jwksUri: 'https://example.invalid/.well-known/jwks.json' }).getSigningKey, loaded: isModuleLoaded('jwks-rsa') }

  // Asked for: a cron expression, as pg-boss's schedules parse one (through the module pg-boss required).
  const cronParser = requireHere(deferredModuleFile('cron-parser', 'pg-boss')) as { parseExpression (cron: string): { next (): { getMinutes (): number } } }
  report.cron = { minutesOfNext: cronParser.parseExpression('*/5 * * * *').next().getMinutes() % 5, loaded: isModuleLoaded('cron-parser', 'pg-boss') }

  // Asked for: a multi-factor code (otpauth, as Parse's MFA adapter builds one), a page (mustache, as Parse's pages render
  // one), a password hash in JavaScript (bcryptjs, Parse's fallback).
  const otpauth = requireHere(deferredModuleFile('otpauth')) as { TOTP: new (options: { secret: unknown }) => { generate (): string }, Secret: { fromBase32 (secret: string): unknown } }
  const code = new otpauth.TOTP({ secret: otpauth.Secret.fromBase32('JBSWY3DPEHPK3PXP') }).generate()
  const mustache = requireHere(deferredModuleFile('mustache')) as { render (template: string, view: Record<string, string>): string }
  const bcryptjs = requireHere(deferredModuleFile('bcryptjs')) as { hash (password: string, rounds: number): Promise<string>, compare (password: string, hash: string): Promise<boolean> }
  report.logins = {
    mfaCodeDigits: /^\d{6}$/.test(code),
    page: mustache.render('Hello {{name}}', { name: 'kit' }),
    bcryptjs: await bcryptjs.compare('secret', await bcryptjs.hash('secret', 4)),
    loaded: ['otpauth', 'mustache', 'bcryptjs'].every((request) => isModuleLoaded(request))
  }

  // Asked for, through the Parse SDK's own controllers: its user encryption (crypto-js) and its WebSocket client (ws),
  // which it constructs, here against a WebSocket server of the kit's own ws.
  const sdk = (requireHere('parse/node') as { CoreManager: { getCryptoController (): { encrypt (value: unknown, key: string): string, decrypt (text: string, key: string): string }, getWebSocketController (): new (url: string) => { once (event: string, listener: () => void): void, close (): void } } }).CoreManager
  const crypto = sdk.getCryptoController()
  const decrypted = crypto.decrypt(crypto.encrypt({ a: 1 }, 'deferred-secret'), 'deferred-secret')
  const { WebSocketServer } = await import('ws')
  const sockets = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((resolve) => sockets.once('listening', resolve))
  const SdkWebSocket = sdk.getWebSocketController()
  const client = new SdkWebSocket(`ws://127.0.0.1:${(sockets.address() as { port: number }).port}`)
  const opened = await new Promise<boolean>((resolve) => { client.once('open', () => resolve(true)); client.once('error', () => resolve(false)) })
  client.close()
  await new Promise((resolve) => sockets.close(resolve))
  // The constructed stand-in is the class to its users: an error its constructor throws surfaces unchanged, instanceof
  // sees the SDK's socket, and its prototype (a descriptor a proxy may only report if its target has none) is the real one's.
  const RealWebSocket = loadModule('ws', 'parse') as unknown as new (url: string) => unknown
  const outcome = (run: () => unknown) => { try { return `returned ${String(run())}` } catch (error) { return `${(error as Error).name}: ${(error as Error).message}` } }
  report.sdkClass = {
    error: outcome(() => new SdkWebSocket('not a url')),
    realError: outcome(() => new RealWebSocket('not a url')),
    instanceOfStandIn: client instanceof SdkWebSocket,
    instanceOfReal: client instanceof RealWebSocket,
    prototype: outcome(() => Object.getOwnPropertyDescriptor(SdkWebSocket, 'prototype')?.value === RealWebSocket.prototype),
    keys: outcome(() => Object.keys(SdkWebSocket).join() === Object.keys(RealWebSocket).join())
  }
  report.sdk = { decrypted, webSocketOpened: opened, loaded: isModuleLoaded('crypto-js/aes', 'parse') && isModuleLoaded('ws', 'parse') }

  // The __esModule mark each stand-in answered is the real module's.
  report.esModule = Object.fromEntries(DEFERRED_SUBSYSTEMS.flatMap((subsystem) => subsystem.modules.map((entry) =>
    [entry.request, { listed: entry.esModule, real: loadModule(entry.request, entry.from).__esModule === true }])))
  report.afterAsking = loaded()
} finally {
  await database.stop()
  rmSync(dir, { recursive: true, force: true })
}
process.stdout.write(`\n${DEFERRED_REPORT_MARK}${JSON.stringify(report)}\n`)
process.exit(0)

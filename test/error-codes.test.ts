// Every mistake a user can make at boot or import is refused with a stable
// FPK_ERR_* code (an @fastify/error class listed in kitErrorCodes), never a bare
// Error: one row per mistake, each run the way the kit meets it.
import t from 'tap'
import { assertPortFree, BaseModel, BeforeSave, CloudFunction, configureRoleCache, kitErrorCodes, ParseClass, ParseField, Route, seedOnBoot, validateOrThrow, withTransaction } from '../lib/index.js'
import { resolveOptions } from '../lib/options.js'
import { checkoutScratchDir } from './helpers/checkout-scratch.js'
import { loadDeclarations } from '../lib/loader.js'
import { checkDefinitions } from '../lib/model/schema-boot.js'
import { databaseKind } from '../lib/storage/database.js'
import { claimProcess } from '../lib/kit-state.js'
import { AlreadyRegisteredError } from '../lib/errors.js'
import { createServer, type AddressInfo } from 'node:net'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { bootFailureText } from '../lib/host/startup.js'
import { renderTemplate } from '../cli/templates.js'

const base = { appId: 'codes-app', masterKey: 'codes-master-key' }
class Target extends BaseModel {}
const method = () => ({ value: () => 'x', writable: true, enumerable: false, configurable: true }) as PropertyDescriptor

const MISTAKES: Array<[mistake: string, code: keyof typeof kitErrorCodes, run: () => unknown]> = [
  ['a misspelt kitPlugin option', 'FPK_ERR_OPTION_UNKNOWN', () => resolveOptions({ ...base, allowAuthRoute: true } as never)],
  ['no master key', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ appId: 'codes-app', masterKey: '' })],
  ['a master key equal to the app id', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ appId: 'same', masterKey: 'same' })],
  ['a databaseURI of an unknown scheme', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, databaseURI: 'mysql://db/app' })],
  ['parseServerOptions.trustProxy', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, parseServerOptions: { trustProxy: true } })],
  ['parseServerOptions.cloud of the wrong type', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, parseServerOptions: { cloud: 42 } as never })],
  ['a misspelt docs option', 'FPK_ERR_DOCS_OPTION_UNKNOWN', () => resolveOptions({ ...base, docs: { titel: 'API' } as never })],
  ['a metrics path under the mount path', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, metrics: { path: '/parse/metrics' } })],
  ['a misspelt metrics option', 'FPK_ERR_OPTION_UNKNOWN', () => resolveOptions({ ...base, metrics: { paht: '/m' } as never })],
  ['a short metrics token', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, metrics: { token: 'short' } })],
  ['a tracing flag that is no flag', 'FPK_ERR_OPTION_INVALID', () => resolveOptions({ ...base, tracing: 'yes' as never })],
  ['a models directory that does not exist', 'FPK_ERR_OPTION_INVALID', () => loadDeclarations('/nonexistent/models')],
  ['schema.definitions with a bad class name', 'FPK_ERR_OPTION_INVALID', () => checkDefinitions([{ className: '1st' } as never])],
  ['schema.definitions naming a class twice', 'FPK_ERR_OPTION_INVALID', () => checkDefinitions([{ className: 'A' }, { className: 'A' }] as never)],
  ['a database URI the kit cannot open', 'FPK_ERR_OPTION_INVALID', () => databaseKind('mysql://db/app')],
  ['configureRoleCache with a negative ttl', 'FPK_ERR_OPTION_INVALID', () => configureRoleCache({ ttlMs: -1 })],
  ['SEED_ON_BOOT that is no switch', 'FPK_ERR_ENV_INVALID', () => seedOnBoot({ SEED_ON_BOOT: 'maybe' })],
  ['a misspelt @ParseField option', 'FPK_ERR_FIELD_OPTION_UNKNOWN', () => ParseField({ type: 'String', requird: true } as never)(Target.prototype, 'title')],
  ['a pattern with a lookahead, which PostgreSQL\'s CHECK cannot express', 'FPK_ERR_FIELD_PATTERN_UNSUPPORTED', () => ParseField({ type: 'String', pattern: /(?=x)x/ })(Target.prototype, 'code')],
  ['a misspelt @ParseClass option', 'FPK_ERR_CLASS_OPTION_UNKNOWN', () => ParseClass('CodesThing', { indexs: [] } as never)(class CodesThing extends BaseModel {})],
  ['a misspelt @CloudFunction option', 'FPK_ERR_ROUTE_OPTION_UNKNOWN', () => CloudFunction({ methodz: ['GET'] } as never)(class Handlers {}, 'run', method())],
  ['@CloudFunction on something that is no method', 'FPK_ERR_ROUTE_DECLARATION', () => CloudFunction()(class Handlers {}, 'run', { value: 42 } as never)],
  ['@Route with the reserved prefix', 'FPK_ERR_ROUTE_DECLARATION', () => Route('functions')(class Handlers {})],
  ['a decorator compiled as a standard (TC39) one', 'FPK_ERR_DECORATORS_CONFIG', () => ParseField({ type: 'String' })(undefined as never, { kind: 'field', name: 'title' })],
  ['@CloudFunction on a method whose name is no identifier', 'FPK_ERR_ROUTE_DECLARATION', () => CloudFunction()(class Handlers {}, 'send-mail', method())],
  ['one trigger kind twice on a class', 'FPK_ERR_MODEL_DECLARATION', () => {
    class Twice extends BaseModel {}
    BeforeSave()(Twice, 'first', method())
    BeforeSave()(Twice, 'second', method())
  }],
  ['two model classes for one Parse class', 'FPK_ERR_MODEL_DECLARATION', () => {
    ParseClass('CodesTwice')(class First extends BaseModel {})
    ParseClass('CodesTwice')(class Second extends BaseModel {})
  }],
  ['new on a model class without @ParseClass', 'FPK_ERR_MODEL_DECLARATION', () => new Target()],
  ['fromParams on a class without @ParseClass', 'FPK_ERR_MODEL_DECLARATION', () => Target.fromParams({ title: 'x' })],
  ['validateOrThrow on an undeclared class', 'FPK_ERR_MODEL_DECLARATION', () => validateOrThrow(new BaseModel('CodesUndeclared'))],
  ['withTransaction before kitPlugin booted', 'FPK_ERR_KIT_NOT_RUNNING', () => withTransaction(async () => 1)],
  ['a port another server listens on', 'FPK_ERR_PORT_UNAVAILABLE', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    try { await assertPortFree({ port: (blocker.address() as AddressInfo).port, host: '127.0.0.1' }) } finally { blocker.close() }
  }],
  ['a second kit in one process', 'FPK_ERR_ALREADY_REGISTERED', () => {
    const first = claimProcess('first-app', (message) => new AlreadyRegisteredError(message))
    try { claimProcess('second-app', (message) => new AlreadyRegisteredError(message)) } finally { first.release() }
  }]
]

t.test('each mistake carries its FPK_ERR_* code', async (t) => {
  for (const [mistake, code, run] of MISTAKES) {
    let error: unknown
    try { await run() } catch (caught) { error = caught }
    t.ok(error, `${mistake}: refused`)
    t.equal((error as { code?: unknown })?.code, code, `${mistake}: ${code} (${(error as Error)?.message})`)
    t.ok(error instanceof kitErrorCodes[code], `${mistake}: an instance of kitErrorCodes.${code}`)
    t.equal((error as { name?: unknown })?.name, 'FastifyError', `${mistake}: made with @fastify/error`)
  }
})

t.test('every code is listed once, with a documented reference entry', async (t) => {
  const { readFileSync } = await import('node:fs')
  const page = readFileSync(new URL('../docs/reference/error-codes.md', import.meta.url), 'utf8')
  for (const code of Object.keys(kitErrorCodes)) {
    t.equal(new kitErrorCodes[code as keyof typeof kitErrorCodes]('x').code, code)
    t.match(page, new RegExp(`^## ${code}$`, 'm'), `${code} has a section in docs/reference/error-codes.md`)
  }
})

t.test('a model file compiled without experimentalDecorators, imported by the entry itself, is one coded line', async (t) => {
  // What esbuild (under tsx) throws for `@ParseField(...) declare title: string` without experimentalDecorators.
  const transform = Object.assign(new Error('Transform failed with 1 error:\n/app/src/models/Note.ts:12:2: ERROR: Decorators are not valid here'), { name: 'TransformError' })
  t.equal(bootFailureText(transform, {}),
    'Cannot start: /app/src/models/Note.ts could not be compiled: the kit\'s decorators need "experimentalDecorators": true (and "useDefineForClassFields": false) in tsconfig.json compilerOptions. (FPK_ERR_DECORATORS_CONFIG)\n')
})

t.test('a generated project\'s settings: a bad DATABASE_URI is described in words, its password hidden', async (t) => {
  const dir = checkoutScratchDir('rendered-env-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const kit = path.relative(dir, path.join(import.meta.dirname, '..', 'lib', 'index.js')).split(path.sep).join('/')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(path.join(dir, 'env.ts'), (await renderTemplate('project/src/env.ts', {})).replaceAll("from 'fastify-parse-kit'", `from '${kit}'`))
  const { loadEnv } = await import(path.join(dir, 'env.ts')) as { loadEnv: (source: NodeJS.ProcessEnv) => unknown }
  t.throws(() => loadEnv({ DATABASE_URI: 'mysql://app:s3cret@db:3306/app', REDIS_URL: 'localhost:6379' }), {
    code: 'FPK_ERR_ENV_INVALID',
    message: 'Invalid environment (.env or the process environment; .env.example lists every variable): ' +
      'DATABASE_URI must start with postgres://, postgresql://, mongodb:// or mongodb+srv:// (got "mysql://app:***@db:3306/app"); ' +
      'REDIS_URL must start with redis:// or rediss:// (got "localhost:6379")'
  })
})

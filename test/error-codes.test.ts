// Every mistake a user can make at boot or import is refused with a stable
// FPK_ERR_* code (an @fastify/error class listed in kitErrorCodes), never a bare
// Error: one row per mistake, each run the way the kit meets it.
import t from 'tap'
import { BaseModel, CloudFunction, configureRoleCache, kitErrorCodes, ParseClass, ParseField, Route, seedOnBoot } from '../lib/index.js'
import { resolveOptions } from '../lib/options.js'
import { loadDeclarations } from '../lib/loader.js'
import { checkDefinitions } from '../lib/model/schema-boot.js'
import { databaseKind } from '../lib/storage/database.js'
import { claimProcess } from '../lib/kit-state.js'
import { AlreadyRegisteredError } from '../lib/errors.js'

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

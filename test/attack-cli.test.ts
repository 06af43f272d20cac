// The CLI and the kit's options as a user and an operator get them wrong: every
// mistake is one line naming what to change (fpk: … for the CLI, an FPK_ERR_*
// code for the kit), no stack trace, and a refused `fpk g` writes nothing.
// In-process: the CLI's main() with a captured terminal, resolveOptions() with
// the environment set per case; no project is installed or booted here.
import t, { type Test } from 'tap'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { main } from '../cli/fpk.js'
import { resolveOptions } from '../lib/options.js'
import { configureKit, getKitConfig, resetKitConfig } from '../lib/config.js'
import { Route } from '../lib/index.js'
import { loadDeclarations } from '../lib/loader.js'
import { bootFailureText } from '../lib/host/startup.js'

interface Run { code: number, out: string, err: string }

async function fpk (cwd: string, ...args: string[]): Promise<Run> {
  let out = ''
  let err = ''
  const code = await main(['node', 'fpk', ...args], {
    cwd,
    env: {},
    out: (text) => { out += text },
    err: (text) => { err += text },
    interactive: false,
    fancyProgress: false,
    ask: async () => ''
  })
  return { code, out, err }
}

/** Refused: exit 1, one `fpk: …` line matching `message`, no stack frame. */
function refused (t: Test, run: Run, message: RegExp, what: string): void {
  t.equal(run.code, 1, `${what}: exit 1`)
  t.match(run.err, message, `${what}: says what to change`)
  t.equal(run.err.trimEnd().split('\n').length, 1, `${what}: one line (got ${JSON.stringify(run.err)})`)
  t.notMatch(run.err, /\n\s+at |unexpected error/, `${what}: no stack trace`)
}

/** A folder with a package.json: what `fpk g` takes for a project. */
function project (t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'fpk-attack-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'package.json'), '{"name":"p"}')
  return dir
}

t.test('fpk new: a name that is a file, or one npm refuses, is one line and writes nothing', async (t) => {
  const dir = project(t)
  writeFileSync(path.join(dir, 'notes'), 'a file of the user\'s')
  refused(t, await fpk(dir, 'new', 'notes', '-y', '--no-install', '--ai=0'), /^fpk: notes exists and is a file, not a folder/, 'a file of that name')
  t.equal(readFileSync(path.join(dir, 'notes'), 'utf8'), 'a file of the user\'s')
  for (const name of ['node_modules', 'favicon.ico']) {
    refused(t, await fpk(dir, 'new', name, '-y', '--no-install', '--ai=0', '--kit', path.join(dir, 'missing.tgz')), /npm refuses it as a package name/, name)
    t.notOk(existsSync(path.join(dir, name)), `${name}: no folder`)
  }
  // Held before: names that are no npm package name never reach the file system.
  for (const name of ['../x', 'a/b', '/abs', '', 'My Api', 'Ünïcode', '.hidden', 'x'.repeat(215)]) {
    refused(t, await fpk(dir, 'new', name, '-y', '--no-install', '--ai=0'), /is not a usable project name/, JSON.stringify(name.slice(0, 20)))
  }
  t.same(readdirSync(dir).sort(), ['notes', 'package.json'], 'nothing written beside')
})

t.test('fpk g: a file where a folder must be, a folder where a file must be, a file name too long: one line, nothing written', async (t) => {
  const dir = project(t)
  writeFileSync(path.join(dir, 'functions'), 'not a folder')
  refused(t, await fpk(dir, 'g', 'resource', 'Product'), /^fpk: functions is a file, not a folder: nothing was written\.$/m, 'functions/ is a file')
  t.notOk(existsSync(path.join(dir, 'models')), 'the model was not written either')

  rmSync(path.join(dir, 'functions'))
  mkdirSync(path.join(dir, 'models', 'Tag.ts'), { recursive: true })
  refused(t, await fpk(dir, 'g', 'model', 'Tag', '-f'), /^fpk: models\/Tag\.ts is a folder: nothing was written\.$/m, 'the model file is a folder (-f)')

  // A 180-character job name makes a 276-character file name ("ab-ab-…-job.ts"): over 255.
  const long = 'Ab'.repeat(90)
  refused(t, await fpk(dir, 'g', 'job', long), /the file name is longer than 255 characters: nothing was written/, 'a 180-character job name')
  t.notOk(existsSync(path.join(dir, 'functions')), 'no functions folder for it')
  // Two classes alike in their first 63 characters shared one PostgreSQL table (checked on a real kit: a save of
  // one wrote into the other's columns); the generator stops at 63.
  refused(t, await fpk(dir, 'g', 'resource', 'A'.repeat(64)), /has 64 characters: PostgreSQL keeps the first 63 of a table's name/, 'a 64-character class name')
  t.equal((await fpk(dir, 'g', 'model', 'B'.repeat(63))).code, 0, '63 characters')

  const readOnly = path.join(dir, 'locked')
  mkdirSync(readOnly)
  writeFileSync(path.join(readOnly, 'package.json'), '{"name":"locked"}')
  chmodSync(readOnly, 0o555)
  t.teardown(() => chmodSync(readOnly, 0o755))
  // root writes anywhere: the check is the operating system's, so only another user can see it refuse.
  if (process.getuid?.() !== 0) {
    refused(t, await fpk(readOnly, 'g', 'model', 'Tag'), /^fpk: locked is not writable: nothing was written\.$|^fpk: \. is not writable/m, 'a read-only project')
  }
})

t.test('a link to nothing at a generated file\'s path is refused in one line (it was written through, making its target)', async (t) => {
  const dir = project(t)
  const outside = mkdtempSync(path.join(tmpdir(), 'fpk-attack-cli-outside-'))
  t.teardown(() => rmSync(outside, { recursive: true, force: true }))
  mkdirSync(path.join(dir, 'models'))
  const target = path.join(outside, 'Tag.ts')
  symlinkSync(target, path.join(dir, 'models', 'Tag.ts'))
  for (const force of [[], ['-f']]) {
    refused(t, await fpk(dir, 'g', 'model', 'Tag', ...force), new RegExp(`^fpk: models/Tag\\.ts is a link to ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, which does not exist \\(writing would create it there\\); remove the link: nothing was written\\.$`, 'm'), `fpk g model ${force.join(' ')}`)
  }
  mkdirSync(path.join(dir, 'src'))
  symlinkSync(path.join(outside, 'client.ts'), path.join(dir, 'src', 'api-client.ts'))
  const document = path.join(dir, 'openapi.json')
  writeFileSync(document, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {} }))
  for (const force of [[], ['-f']]) {
    refused(t, await fpk(dir, 'client', '--from', document, ...force), /^fpk: src\/api-client\.ts is a link to .*client\.ts, which does not exist .*: nothing was written\.$/m, `fpk client ${force.join(' ')}`)
  }
  t.same(readdirSync(outside), [], 'nothing made where the links point')
})

t.test('a route prefix that is one of Parse\'s own paths is refused at import; fpk g resource refuses it, fpk g model does not', async (t) => {
  for (const prefix of ['users', 'sessions', 'classes', 'jobs', 'health', 'batch', 'users/extra']) {
    t.throws(() => Route(prefix)(class Handlers {}), {
      code: 'FPK_ERR_ROUTE_DECLARATION',
      message: new RegExp(`^@Route on Handlers: route prefix "${prefix}" is Parse Server's own path \\{mount\\}/${prefix.split('/')[0]}/…`)
    }, `@Route('${prefix}')`)
  }
  for (const prefix of ['user-profiles', 'my-users', 'notes', 'health-checks']) t.doesNotThrow(() => Route(prefix)(class Handlers {}), `@Route('${prefix}')`)
  const dir = project(t)
  for (const name of ['Class', 'Job', 'Hook', 'App']) {
    refused(t, await fpk(dir, 'g', 'resource', name), /cannot be a resource: .* is Parse Server's own path .*\(fpk g model \w+ makes the model alone\)$/m, `g resource ${name}`)
  }
  t.same(readdirSync(dir), ['package.json'], 'nothing written')
  t.equal((await fpk(dir, 'g', 'model', 'Job')).code, 0, 'g model Job: a model has no route')
  refused(t, await fpk(dir, 'g', 'functions', 'Job'), /"Job" cannot be a resource/, 'g functions Job')
})

t.test('a declarations file that throws at import: one FPK_ERR_DECLARATION_IMPORT line naming the file', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fpk-attack-cli-models-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}') // as in a project: its .ts files are ES modules
  const cases: Array<[file: string, source: string, what: RegExp]> = [
    ['Broken.ts', "throw new Error('the configuration file is missing')\n", /Error: the configuration file is missing$/],
    ['Typo.ts', 'export const x = (\n', /SyntaxError|TransformError|Error: /],
    ['Missing.ts', "import './not-there.js'\n", /Cannot find module|ERR_MODULE_NOT_FOUND|not-there/],
    ['Odd.ts', "throw 'a string'\n", /a string \(a string\)$/]
  ]
  for (const [file, source, what] of cases) {
    const folder = path.join(dir, file.replace(/\.ts$/, ''))
    mkdirSync(folder)
    writeFileSync(path.join(folder, file), source)
    const error = await loadDeclarations(folder).then(() => undefined, (error: Error & { code?: string }) => error)
    t.equal(error?.code, 'FPK_ERR_DECLARATION_IMPORT', file)
    t.match(error?.message, new RegExp(`${file.replace('.', '\\.')} threw while it was imported: `), `${file}: names the file`)
    t.match(error?.message, what, `${file}: says what it threw`)
    t.match(bootFailureText(error, {}), /^Cannot start: .* \(FPK_ERR_DECLARATION_IMPORT\)\n$/, `${file}: one boot line`)
  }
  // The kit's own checks keep their codes (held).
  const declared = path.join(dir, 'declared')
  mkdirSync(declared)
  writeFileSync(path.join(declared, 'Twice.ts'), [
    `import { Route } from ${JSON.stringify(path.resolve('lib/index.js'))}`,
    "Route('users')(class Members {})", ''
  ].join('\n'))
  await t.rejects(loadDeclarations(declared), { code: 'FPK_ERR_ROUTE_DECLARATION' }, 'a declaration check keeps its code')
  await t.rejects(loadDeclarations(path.join(dir, 'nowhere')), { code: 'FPK_ERR_OPTION_INVALID', message: /Cannot read declarations directory/ }, 'a folder that does not exist (held)')
})

t.test('fpk g resource refuses every PascalCase name the templates import or declare (Type, Static, Deleted did not compile)', async (t) => {
  const templates = path.resolve('cli/templates/resource')
  const used = new Set<string>()
  for (const file of readdirSync(templates)) {
    const source = readFileSync(path.join(templates, file), 'utf8')
    for (const [, list] of source.matchAll(/^import (?:type )?\{([^}]*)\}/gm)) {
      for (const item of list.split(',')) {
        const name = item.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim()
        if (/^[A-Z]/.test(name)) used.add(name)
      }
    }
    for (const [, name] of source.matchAll(/^(?:export )?(?:const|let|class|interface|type|function) ([A-Z][A-Za-z0-9]*)\b/gm)) used.add(name)
    for (const [, name] of source.matchAll(/^import ([A-Z][A-Za-z0-9]*) from/gm)) used.add(name)
  }
  t.ok(used.has('Type') && used.has('Deleted'), 'the scan finds the imports and declarations')
  const dir = project(t)
  for (const name of used) {
    const run = await fpk(dir, 'g', 'resource', name)
    t.equal(run.code, 1, `g resource ${name} is refused`)
  }
  t.same(readdirSync(dir), ['package.json'], 'nothing written')
})

t.test('fpk client: a user\'s file at --out is kept unless -f; a document that is no OpenAPI is one line', async (t) => {
  const dir = project(t)
  mkdirSync(path.join(dir, 'src'))
  writeFileSync(path.join(dir, 'src', 'app.ts'), 'export const mine = 1\n')
  const document = path.join(dir, 'openapi.json')
  writeFileSync(document, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/x': { get: { responses: { 200: { description: 'ok' } } } } } }))
  refused(t, await fpk(dir, 'client', '--from', document, '--out', 'src/app.ts'), /^fpk: src\/app\.ts exists and was not written by fpk client: nothing was written\. Choose another --out, or -f to replace it\.$/m, 'a user\'s file')
  t.equal(readFileSync(path.join(dir, 'src', 'app.ts'), 'utf8'), 'export const mine = 1\n', 'kept')
  refused(t, await fpk(dir, 'client', '--from', document, '--out', 'src'), /^fpk: src is a folder: pass --out <file>$/m, 'a folder')
  t.equal((await fpk(dir, 'client', '--from', document, '--out', 'src/api-client.ts')).code, 0, 'a new file')
  t.equal((await fpk(dir, 'client', '--from', document, '--out', 'src/api-client.ts')).code, 0, 'its own file again')
  t.equal((await fpk(dir, 'client', '--from', document, '--out', 'src/app.ts', '-f')).code, 0, '-f replaces')
  t.match(readFileSync(path.join(dir, 'src', 'app.ts'), 'utf8'), /^\/\/ Generated by `fpk client`/)
  refused(t, await fpk(dir, 'client', '--from', path.join(dir, 'package.json'), '--out', 'src/other.ts'), /^fpk: .*package\.json is not an API document openapi-typescript can read: /m, 'JSON that is no OpenAPI document')
  t.notOk(existsSync(path.join(dir, 'src', 'other.ts')))
})

t.test('configureKit refuses what it cannot use, with the key named: a misspelt key was ignored, allowAuthRoutes: \'false\' opened the auth routes', async (t) => {
  t.teardown(resetKitConfig)
  const refusals: Array<[object, string, string]> = [
    [{ allowAuthRoutes: 'false' }, 'FPK_ERR_OPTION_INVALID', 'configureKit option "allowAuthRoutes": must be true or false (got "false")'],
    [{ mountpath: '/api' }, 'FPK_ERR_OPTION_UNKNOWN', 'configureKit option "mountpath": unknown option; did you mean "mountPath"? (known: mountPath, masterKey, adminRole, allowAuthRoutes, excludedPointerClasses)'],
    [{ adminRole: '' }, 'FPK_ERR_OPTION_INVALID', 'configureKit option "adminRole": must be a non-empty string (got "")'],
    [{ excludedPointerClasses: 'IMG' }, 'FPK_ERR_OPTION_INVALID', 'configureKit option "excludedPointerClasses": must be a list of class names (got "IMG")'],
    [{ masterKey: 42 }, 'FPK_ERR_OPTION_INVALID', 'configureKit option "masterKey": must be a non-empty string']
  ]
  for (const [options, code, message] of refusals) {
    resetKitConfig()
    t.throws(() => configureKit(options as never), { code, message }, JSON.stringify(options))
    t.equal(getKitConfig().allowAuthRoutes, false, 'nothing was taken')
  }
  resetKitConfig()
  t.same(configureKit({ mountPath: '/v1', allowAuthRoutes: true, adminRole: 'Admins', masterKey: undefined }).mountPath, '/v1', 'good values, and undefined ones, pass')
})

t.test('fpk g job -f says which files it overwrote', async (t) => {
  const dir = project(t)
  t.equal((await fpk(dir, 'g', 'job', 'Cleanup')).code, 0)
  const job = path.join(dir, 'functions', 'cleanup-job.ts')
  writeFileSync(job, '// the user\'s own work\n')
  refused(t, await fpk(dir, 'g', 'job', 'Cleanup'), /already exists: nothing was written\. Use -f to overwrite\./, 'without -f')
  const again = await fpk(dir, 'g', 'job', 'Cleanup', '-f')
  t.equal(again.code, 0)
  t.match(again.out, /^ {2}overwritten functions\/cleanup-job\.ts$/m, 'the replaced file is listed as overwritten')
  t.notMatch(again.out, /created functions\/cleanup-job\.ts/)
})

t.test('held: odd class names, help, unknown flags and missing arguments', async (t) => {
  const dir = project(t)
  const names: Array<[string, RegExp]> = [
    ['../x', /is not a PascalCase name/], ['a/b', /is not a PascalCase name/], ['/abs', /is not a PascalCase name/],
    ['', /is not a PascalCase name/], ['My Note', /Did you mean MyNote\?/], ['order-line', /Did you mean OrderLine\?/],
    ['1Product', /is not a PascalCase name/], ['__proto__', /is reserved: class names starting with "_"/],
    ['User', /built-in _User class/], ['Object', /shadow the JavaScript global Object/], ['Parse', /would clash with Parse/],
    ['Function', /shadow the JavaScript global Function/]
  ]
  for (const [name, message] of names) refused(t, await fpk(dir, 'g', 'resource', name), message, `g resource ${JSON.stringify(name)}`)
  t.same(readdirSync(dir), ['package.json'], 'none of them wrote a file')

  t.equal((await fpk(dir, 'g', 'model', 'Note')).code, 0)
  refused(t, await fpk(dir, 'g', 'model', 'Note'), /models\/Note\.ts already exists: nothing was written/, 'Note twice')
  t.equal((await fpk(dir, 'g', 'resource', 'Constructor')).code, 0, '"Constructor": an ordinary name')
  t.equal((await fpk(dir, 'g', 'model', 'Class')).code, 0, '"Class": a keyword as the camel name')

  for (const command of [[], ['new'], ['g'], ['g', 'resource'], ['g', 'job'], ['ai'], ['schema', 'plan'], ['client']]) {
    const help = await fpk(dir, ...command, '--help')
    t.equal(help.code, 0, `fpk ${command.join(' ')} --help: exit 0`)
    t.match(help.out, /^Usage: fpk/, 'usage on stdout')
  }
  for (const [args, message] of [
    [['ai', '--bogus'], /unknown option '--bogus'/], [['g', 'resource'], /missing required argument 'Name'/],
    [['new'], /missing required argument 'name'/], [['frob'], /unknown command 'frob'/], [['ai', '7'], /unknown assistant "7"/]
  ] as Array<[string[], RegExp]>) {
    const run = await fpk(dir, ...args)
    t.equal(run.code, 1, `fpk ${args.join(' ')}: exit 1`)
    t.match(run.err, message)
    t.notMatch(run.err, /\n\s+at /, 'no stack trace')
  }
})

t.test('the environment and options an operator sets: one FPK_ERR_* line before anything starts', async (t) => {
  const names = ['PORT', 'MOUNT_PATH', 'mountPath', 'DATABASE_URI'] as const
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]))
  t.teardown(() => { for (const name of names) { if (saved[name] === undefined) delete process.env[name]; else process.env[name] = saved[name] } })
  for (const name of names) delete process.env[name]
  const base = { appId: 'a', masterKey: 'm', databaseURI: 'postgres://u:p@127.0.0.1/db' }

  for (const port of ['abc', '99999', '-1', '80x']) {
    process.env.PORT = port
    t.throws(() => resolveOptions(base), { code: 'FPK_ERR_ENV_INVALID', message: `PORT must be a port number from 0 to 65535 (got "${port}"); the default serverURL is built from it` }, `PORT=${port}`)
  }
  t.equal(resolveOptions({ ...base, serverURL: 'https://api.example.com/parse' }).serverURL, 'https://api.example.com/parse', 'a serverURL of its own does not read PORT')
  process.env.PORT = '8080'
  t.equal(resolveOptions(base).serverURL, 'http://127.0.0.1:8080/parse')
  delete process.env.PORT

  for (const serverURL of ['http://127.0.0.1:99999/parse', 'http://', 'https:///parse']) {
    t.throws(() => resolveOptions({ ...base, serverURL }), { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "serverURL": must be an http\(s\) URL with a host and a port/ }, serverURL)
  }

  for (const mountPath of ['/parse?x=1', '/a b', '/p#x', '/api/:version', '/files/*', '/caf%C3%A9']) {
    t.throws(() => resolveOptions({ ...base, mountPath }), { code: 'FPK_ERR_OPTION_INVALID', message: /^kitPlugin option "mountPath": must be a path of letters, digits/ }, `mountPath ${mountPath}`)
  }
  process.env.MOUNT_PATH = '/parse?x'
  t.throws(() => resolveOptions(base), { code: 'FPK_ERR_OPTION_INVALID', message: /"mountPath".*MOUNT_PATH; got "\/parse\?x"/ }, 'MOUNT_PATH')
  delete process.env.MOUNT_PATH
  for (const mountPath of ['/', '/v1', '/api/parse', 'parse/', '/my_app.v2~x']) t.ok(resolveOptions({ ...base, mountPath }), `mountPath ${mountPath}`)

  const refusedURIs: Array<[string, RegExp]> = [
    ['postgres://u:pw@127.0.0.1:99999/db', /port "99999" is not a number from 1 to 65535 \(from the option or DATABASE_URI\)$/],
    ['postgres://127.0.0.1:abc/db', /port "abc"/],
    ['postgres://u:pw@127.0.0.1:0/db', /port "0"/],
    ['postgres://u:p@ss@127.0.0.1/db', /the user or password holds an "@": write it as %40/],
    ['postgres://u:100%@127.0.0.1/db', /holds a "%" that starts no %XX escape: write it as %25/],
    ['postgres://u:pa/ss@127.0.0.1:5432/db', /port "pa" .*a "\/", "\?" or "#" in the password must be written %2F, %3F, %23/],
    ['postgres://u:p@[::1/db', /host "\[::1" is not a host name/],
    ['mongodb://127.0.0.1:99999/x', /port "99999"/],
    ['mongodb://u:p@ss@127.0.0.1/x', /holds an "@"/],
    ['mongodb://h1:27017,h2:nope/x', /port "nope"/]
  ]
  for (const [databaseURI, message] of refusedURIs) {
    const error = (() => { try { resolveOptions({ ...base, databaseURI }) } catch (error) { return error as Error & { code?: string } } })()
    t.equal(error?.code, 'FPK_ERR_OPTION_INVALID', databaseURI)
    t.match(error?.message, /^kitPlugin option "databaseURI": /)
    t.match(error?.message, message)
    t.notMatch(error?.message, /pw|ss@/, 'the password is not in the message')
  }
  const docs = { title: 'API', version: '1' }
  t.throws(() => resolveOptions({ ...base, docs: { ...docs, path: '/m' }, metrics: { path: '/m' } }), { code: 'FPK_ERR_OPTION_INVALID', message: 'kitPlugin option "metrics.path": "/m" is served by the API documentation (docs.path "/m"): choose another, e.g. \'/metrics\'' }, 'metrics at the docs path (was a boot that timed out in fastifySwagger)')
  t.throws(() => resolveOptions({ ...base, docs, metrics: { path: '/api-docs/json' } }), { message: /"metrics\.path": "\/api-docs\/json" is served by the API documentation/ }, 'metrics under the docs path')
  t.throws(() => resolveOptions({ ...base, metrics: { path: '/me trics' } }), { code: 'FPK_ERR_OPTION_INVALID', message: /"metrics\.path": must be a path of letters/ }, 'a metrics path no request reaches')
  t.equal((resolveOptions({ ...base, docs, metrics: { path: '/api-docs-metrics' } }).metrics as { path: string }).path, '/api-docs-metrics', 'a path that only starts like the docs path')
  t.throws(() => resolveOptions({ ...base, docs: { ...docs, path: '/parse' } }), { code: 'FPK_ERR_DOCS_OPTION_INVALID', message: /^kitPlugin option "docs\.path": "\/parse" is the mount path/ }, 'docs at the mount path (was a boot that timed out in fastifySwagger)')
  t.throws(() => resolveOptions({ ...base, mountPath: '/api', docs: { ...docs, path: '/api/' } }), { code: 'FPK_ERR_DOCS_OPTION_INVALID' }, 'the same after normalising')
  t.equal(resolveOptions({ ...base, docs: { ...docs, path: '/parse/docs' } }).docs?.path, '/parse/docs', 'under the mount: served (checked on a real kit)')
  const unknownParse: Array<[object, string, RegExp]> = [
    [{ sessionLenght: 3600 }, 'sessionLenght', /did you mean "sessionLength"\?/],
    [{ accountLockout: { treshold: 3, duration: 5 } }, 'accountLockout.treshold', /did you mean "threshold"\?/],
    [{ passwordPolicy: { maxPasswordAge: 30, resetTokenValidityDuraton: 60 } }, 'passwordPolicy.resetTokenValidityDuraton', /did you mean "resetTokenValidityDuration"\?/],
    [{ rateLimit: [{ requestPath: '/x', requestTimeWindow: 1000, requestCount: 1, reqestMethods: ['GET'] }] }, 'rateLimit[0].reqestMethods', /did you mean "requestMethods"\?/],
    [{ fileUpload: { enableForPublik: true } }, 'fileUpload.enableForPublik', /did you mean "enableForPublic"\?/]
  ]
  for (const [parseServerOptions, where, hint] of unknownParse) {
    t.throws(() => resolveOptions({ ...base, parseServerOptions } as never), { code: 'FPK_ERR_OPTION_UNKNOWN', message: new RegExp(`^kitPlugin option "parseServerOptions\\.${where.replace(/[.[\]]/g, '\\$&')}": is not a Parse Server option`) }, where)
    t.throws(() => resolveOptions({ ...base, parseServerOptions } as never), { message: hint })
  }
  t.ok(resolveOptions({
    ...base,
    parseServerOptions: {
      sessionLength: 3600, directAccess: true, maxLimit: 100, accountLockout: { threshold: 3, duration: 5 }, passwordPolicy: { maxPasswordAge: 30 },
      fileUpload: { enableForPublic: true }, rateLimit: [{ requestPath: '/x', requestTimeWindow: 1000, requestCount: 1 }],
      databaseOptions: { maxPoolSize: 5, anyDriverOption: 1 }, schema: { lockSchemas: true }
    }
  } as never), 'Parse\'s own keys pass; databaseOptions go to the driver and schema has its own check')
  process.env.DATABASE_URI = 'postgres://u:p@ss@127.0.0.1/db'
  t.throws(() => resolveOptions({ appId: 'a', masterKey: 'm' }), { code: 'FPK_ERR_OPTION_INVALID', message: /holds an "@"/ }, 'from DATABASE_URI too')
  delete process.env.DATABASE_URI
  for (const databaseURI of [
    'postgres://u:p%40ss%25@127.0.0.1:5432/db?sslmode=require', 'postgresql://127.0.0.1/db', 'postgres://u@%2Fvar%2Frun%2Fpostgresql/db',
    'postgres:///db?host=/tmp', 'postgres://u:p@[::1]:5432/db', 'mongodb://u:p@h1:27017,h2:27018/x?replicaSet=rs', 'mongodb+srv://u:p%40s@cluster0.example.net/db'
  ]) t.equal(resolveOptions({ ...base, databaseURI }).databaseURI, databaseURI, `accepted: ${databaseURI}`)
})

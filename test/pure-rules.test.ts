// The kit's pure rules, without Parse or a database: list limits, the gate's
// decisions (request targets, route restriction), credentials from headers and
// bodies, route naming and the relocated data directory's key. Each runs in
// milliseconds; the full-stack files show the same rules wired into a server.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { clampLimit, MAX_QUERY_LIMIT, Type } from '../lib/index.js'
import { AUTH_ROUTES, isRouteAllowed, normalisePath } from '../lib/access/restriction.js'
import { mapRequestTarget, targetRefusal, targetsMount } from '../lib/access/request-target.js'
import { readCredentials } from '../lib/access/credentials.js'
import { checkPrefix, kebabPlural } from '../lib/routing/naming.js'
import { inputSchema, outputSchema } from '../lib/routing/schema.js'
import { needsSession } from '../lib/routing/options.js'
import { relocatedDataDir } from '../lib/storage/postgres/relocation.js'
import { projectMountPath } from '../cli/commands/generate.js'
import { closeOpened } from '../lib/host/teardown.js'
import { watchLostRuns } from '../lib/jobs/lost-runs.js'
import { dueUnleased, type UnleasedSightings } from '../lib/jobs/unleased-sightings.js'
import type { JobLeases } from '../lib/storage/job-lease.js'
import type { JobLogger, QueuedRun } from '../lib/jobs/request.js'

t.test('clampLimit: a whole number from 0 to MAX_QUERY_LIMIT, the fallback for anything that is not a number', async (t) => {
  const cases: Array<[unknown, number]> = [
    [undefined, 100], [null, 100], ['', 100], ['  ', 100], ['abc', 100], [Number.NaN, 100], [{}, 100], [Infinity, 100],
    [0, 0], ['0', 0], [-5, 0], ['-5', 0], [7, 7], ['7', 7], [7.9, 7], ['12.5', 12],
    [MAX_QUERY_LIMIT, MAX_QUERY_LIMIT], [MAX_QUERY_LIMIT + 1, MAX_QUERY_LIMIT], ['1e9', MAX_QUERY_LIMIT]
  ]
  for (const [requested, expected] of cases) t.equal(clampLimit(requested), expected, `clampLimit(${JSON.stringify(requested) ?? String(requested)})`)
  t.equal(clampLimit('abc', 20), 20, 'the fallback given')
  t.equal(clampLimit(undefined, 5000), MAX_QUERY_LIMIT, 'a fallback is clamped too')
  t.equal(clampLimit(undefined, Number.NaN), 100, 'a fallback that is no number gives the default')
})

t.test('route restriction: closed by default, health and functions open, auth routes method by method', async (t) => {
  const closed = { allowAuthRoutes: false, allowedRoutes: [] }
  const auth = { allowAuthRoutes: true, allowedRoutes: [] }
  t.ok(isRouteAllowed('GET', '/health', closed))
  t.ok(isRouteAllowed('HEAD', '/health', closed), 'HEAD counts as GET')
  t.ok(isRouteAllowed('POST', '/functions/hello', closed))
  t.ok(isRouteAllowed('GET', '/functions/hello/', closed), 'a trailing slash is routed as without')
  t.notOk(isRouteAllowed('DELETE', '/functions/hello', closed), 'functions take GET and POST only')
  t.notOk(isRouteAllowed('POST', '/functions', closed), '/functions/* needs a name')
  for (const [verb, path] of [['GET', '/classes/Note'], ['POST', '/classes/Note'], ['POST', '/batch'], ['GET', '/schemas'], ['POST', '/login']]) {
    t.notOk(isRouteAllowed(verb, path, closed), `${verb} ${path} is closed`)
  }
  for (const route of AUTH_ROUTES) {
    for (const verb of route.methods!) {
      t.notOk(isRouteAllowed(verb, route.path, closed), `${verb} ${route.path}: closed without allowAuthRoutes`)
      t.ok(isRouteAllowed(verb, route.path, auth), `${verb} ${route.path}: open with allowAuthRoutes`)
    }
  }
  t.notOk(isRouteAllowed('DELETE', '/users/me', auth), 'only the verbs of the table')
  t.notOk(isRouteAllowed('GET', '/users', auth), 'listing users stays closed')
  t.ok(isRouteAllowed('GET', '/LOGIN', auth), 'matched case-insensitively, as Express routes')
  const files = { allowAuthRoutes: false, allowedRoutes: [{ path: '/files/*', methods: ['POST'] }, { path: '/config' }] }
  t.ok(isRouteAllowed('POST', '/files/pic.png', files))
  t.notOk(isRouteAllowed('GET', '/files/pic.png', files), 'the allow-list opens its verbs only')
  t.ok(isRouteAllowed('PUT', '/config', files), 'no methods: every verb')
  t.notOk(isRouteAllowed('GET', '/functions/../classes/Note', closed), 'a dot segment is refused, not reinterpreted')
  t.equal(normalisePath('/classes/Note/'), '/classes/Note')
  t.equal(normalisePath('/'), '/')
  t.equal(normalisePath('/a%2fb'), undefined)
})

t.test('request targets: the path Express will route, or a refusal', async (t) => {
  t.same(mapRequestTarget('/parse/classes/Note?limit=1', '/parse'), { path: '/classes/Note' })
  t.same(mapRequestTarget('/parse', '/parse'), { path: '/' })
  t.same(mapRequestTarget('/parse/caf%C3%A9', '/parse'), { path: '/café' }, 'decoded as Express decodes')
  t.same(mapRequestTarget('/x/y', '/'), { path: '/x/y' })
  const refusals: Array<[string, RegExp]> = [
    ['http://host/parse/classes/X', /absolute-form/],
    ['/parse\\classes', /backslashes/],
    ['/parse/classes;x=1', /path parameters/],
    ['/parse/%2e%2e/x', /encoded dots/],
    ['/parse//classes', /empty path segments/],
    ['/parse/%E0%A4%A', /not valid percent-encoding/],
    ['/parse/%2541', /double-encoded/],
    ['/parse/a/../b', /dot segments/],
    ['/parsec/x', /outside \/parse/],
    ['/other', /outside \/parse/]
  ]
  for (const [target, reason] of refusals) {
    const mapped = mapRequestTarget(target, '/parse')
    t.match(mapped, { refusal: reason }, `${target} refused`)
    t.equal(targetRefusal(target, '/parse'), (mapped as { refusal: string }).refusal, `${target}: targetRefusal says the same`)
  }
  t.equal(targetRefusal('/parse/classes/Note', '/parse'), undefined)
  t.ok(targetsMount('/parse/x', '/parse'))
  t.ok(targetsMount('/PARSE/x', '/parse'), 'another case of the mount is still the mount (refused later, not passed by)')
  t.ok(targetsMount('http://h/parse?x', '/parse'))
  t.notOk(targetsMount('/parsec', '/parse'))
  t.ok(targetsMount('//parse/x', '/parse'), 'doubled leading slashes still name the mount (the gate refuses them)')
  t.ok(targetsMount('///parse', '/parse'))
  t.notOk(targetsMount('//parsec', '/parse'))
  t.equal(targetRefusal('//parse/x', '/parse'), 'empty path segments (//) are refused')
  t.ok(targetsMount('/anything', '/'))
})

t.test("credentials: headers speak unless the body brings the app id, as Parse's middleware reads them", async (t) => {
  const headers = { 'x-parse-application-id': 'app', 'x-parse-session-token': 'r:h', 'x-parse-master-key': 'mk' }
  const fromHeaders = readCredentials(headers, { _ApplicationId: 'other', _SessionToken: 'r:b' })
  t.match(fromHeaders, { appId: 'app', sessionToken: 'r:h', masterKey: 'mk' }, 'with the app id header the body is ignored')
  const fromBody = readCredentials({}, { _ApplicationId: 'app', _JavaScriptKey: 'js', _SessionToken: 'r:b', _InstallationId: 'i' })
  t.match(fromBody, { appId: 'app', javascriptKey: 'js', sessionToken: 'r:b', installationId: 'i' })
  t.match(readCredentials({ 'x-parse-session-token': 'r:h' }, { _ApplicationId: 'app' }), { appId: 'app', sessionToken: 'r:h' }, 'a body without a token keeps the header one')
  t.match(readCredentials({}, { _ApplicationId: '' }), { appId: undefined }, 'an empty string is absent')
  t.match(readCredentials({}, ['_ApplicationId']), { appId: undefined }, 'an array body carries nothing')
  t.match(readCredentials({}, null), { appId: undefined })
})

t.test('route naming: the kebab-case plural of the class; prefixes checked', async (t) => {
  const names: Array<[string, string]> = [['Note', 'notes'], ['OrderLine', 'order-lines'], ['Category', 'categories'], ['Person', 'people'], ['HTTPRequest', 'http-requests'], ['_User', 'users'], ['order_line', 'order-lines']]
  for (const [className, prefix] of names) t.equal(kebabPlural(className), prefix, `${className} → ${prefix}`)
  t.throws(() => kebabPlural('___'), /Cannot derive a route prefix/)
  t.equal(checkPrefix('order-lines/v2', 'x'), 'order-lines/v2')
  t.throws(() => checkPrefix('OrderLines', '@Route(X)'), /@Route\(X\): route prefix "OrderLines" must be kebab-case/)
  t.throws(() => checkPrefix('functions', '@Route(X)'), /reserved for \{mount\}\/functions/)
})

t.test('the relocated data directory: one per whole path, the same path always the same', async (t) => {
  const tail = '/projects/a-long-name-that-both-paths-share-at-their-end/.data/postgres'
  const first = relocatedDataDir(`/root/one${tail}`)
  const second = relocatedDataDir(`/root/two${tail}`)
  t.not(first, second, 'paths that end alike get different copies')
  t.equal(relocatedDataDir(`/root/one${tail}`), first, 'stable')
  t.equal(relocatedDataDir(`/root/one${tail}/`), first, 'the same directory however it is written')
  t.match(first, /^\/var\/tmp\/fastify-parse-kit\/data\/postgres-[0-9a-f]{32}$/, 'named after the directory, keyed on a hash of its whole path')
})

t.test('fpk g prints endpoints under the project\'s mount path: MOUNT_PATH from the environment or .env, /parse by default', async (t) => {
  const saved = { MOUNT_PATH: process.env.MOUNT_PATH, mountPath: process.env.mountPath }
  delete process.env.MOUNT_PATH
  delete process.env.mountPath
  t.teardown(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  const root = t.testdir({})
  t.equal(await projectMountPath(root), '/parse', 'no setting: /parse')
  writeFileSync(path.join(root, '.env'), '# settings\nMOUNT_PATH="/api/"\n')
  t.equal(await projectMountPath(root), '/api', 'from .env, without the trailing slash')
  writeFileSync(path.join(root, '.env'), 'MOUNT_PATH=/\n')
  t.equal(await projectMountPath(root), '', 'the root mount: paths start at /')
  process.env.MOUNT_PATH = 'v1'
  t.equal(await projectMountPath(root), '/v1', 'the environment wins, as in the kit')
})

t.test('route building: the input and answer schemas of a declared function, and who needs a session', async (t) => {
  t.equal(inputSchema({}), undefined, 'no validation: no body or query schema')
  t.equal(inputSchema({ validation: { fields: {} } }), undefined, 'no fields: none either')
  const input = inputSchema({
    validation: {
      fields: {
        title: { type: String, required: true, description: 'Headline' },
        limit: { type: Number, default: 10 },
        status: { type: String, options: ['draft', 'published'] },
        at: { type: Date },
        tags: { type: Array },
        meta: { type: Object },
        flag: { type: Boolean },
        anything: {}
      }
    }
  })!
  t.same(input.required, ['title'], 'only the required field is required')
  t.equal(input.additionalProperties, true, 'undeclared params pass through to the handler')
  t.match(input.properties, {
    title: { type: 'string', description: 'Headline' },
    limit: { type: 'number', default: 10 },
    status: { enum: ['draft', 'published'] },
    at: { type: 'string', format: 'date-time' },
    tags: { type: 'array' },
    meta: { type: 'object', additionalProperties: true },
    flag: { type: 'boolean' }
  })
  t.notOk('type' in input.properties.anything, 'an untyped field takes any value')
  // The same JSON, key order included, as TypeBox builds it (what the validators and the OpenAPI document saw before).
  const typeboxBuilt = Type.Object({
    title: Type.String({ description: 'Headline' }),
    limit: Type.Optional(Type.Number({ default: 10 })),
    status: Type.Optional(Type.Unsafe({ enum: ['draft', 'published'] })),
    at: Type.Optional(Type.String({ format: 'date-time' })),
    tags: Type.Optional(Type.Array(Type.Any())),
    meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
    flag: Type.Optional(Type.Boolean()),
    anything: Type.Optional(Type.Any())
  }, { additionalProperties: true })
  t.equal(JSON.stringify(input), JSON.stringify(typeboxBuilt), 'byte for byte the schema TypeBox builds')
  const bounded = inputSchema({ validation: { fields: { code: { type: String, maxLength: 8, minLength: 2, pattern: '^[a-z]+$', description: 'A code' }, n: { type: Number, integer: true, min: 1, max: 9 }, ids: { type: Array, items: 'Number' } } } })!
  const boundedTypebox = Type.Object({
    code: Type.Optional(Type.String({ maxLength: 8, minLength: 2, pattern: '^[a-z]+$', description: 'A code' })),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 9 })),
    ids: Type.Optional(Type.Array(Type.Number()))
  }, { additionalProperties: true })
  t.equal(JSON.stringify(bounded), JSON.stringify(boundedTypebox), 'bounds, integers and typed arrays too')
  const defaults = { tags: ['a'] }
  const withDefault = inputSchema({ validation: { fields: { tags: { type: Array, default: defaults.tags } } } })!
  t.not(withDefault.properties.tags.default, defaults.tags, 'an object default is copied, never shared with the declaration')
  t.equal(outputSchema({}), undefined)
  const output = outputSchema({ returns: { ok: { type: Boolean, required: true }, note: { type: String } } })!
  t.same([output.type, output.required, Object.keys(output.properties)], ['object', ['ok'], ['ok', 'note']], 'returns in the shorthand')
  t.notOk('additionalProperties' in output && output.additionalProperties === true, 'an answer sends its declared fields only')
  const declared = Type.Object({ id: Type.String() })
  t.equal(outputSchema({ returns: declared }), declared, 'a TypeBox schema is taken as it is')
  t.equal(needsSession({}), false)
  t.equal(needsSession({ requiresAuth: true }), true)
  t.equal(needsSession({ validation: { requireUser: true } }), true)
  t.equal(needsSession({ requireRoles: ['Admin'] }), true, 'roles need a user')
  t.equal(needsSession({ requireRoles: [] }), false, 'an empty role list does not')
})

t.test('closeOpened: the reverse of opening, every step run when one fails, the first failure thrown', async (t) => {
  const done: string[] = []
  const step = (name: string, fails = false) => async () => { done.push(name); if (fails) throw new Error(`${name} failed`) }
  await t.rejects(closeOpened({
    database: { close: step('database') },
    cluster: { close: step('redis', true) },
    parse: { shutdown: step('parse', true) },
    metrics: { close: () => { done.push('metrics') } },
    liveQuery: { shutdown: step('liveQuery') },
    stopJobs: step('jobs')
  }), { message: 'parse failed' }, 'the first failure')
  t.same(done, ['jobs', 'metrics', 'liveQuery', 'parse', 'redis', 'database'], 'a Parse that fails to shut down still leaves the database closed')
  done.length = 0
  await closeOpened({ database: { close: step('database') } })
  t.same(done, ['database'], 'a boot that opened only the database closes only it')
})

t.test('the look for lost runs: a look that keeps failing is logged once, its end once, whichever of its two steps fails', async (t) => {
  const lines: string[] = []
  const log = { error: (line: string) => lines.push(`error ${line}`), warn: (line: string) => lines.push(`warn ${line}`), info: (line: string) => lines.push(`info ${line}`) }
  let failing: 'lost' | 'unleased' | undefined = 'unleased'
  // The storage layer's two reads, one of them failing on demand (a table gone, a statement refused).
  const leases = {
    takeLostRuns: async () => { if (failing === 'lost') throw new Error('lost-run read refused'); return [] },
    findUnleasedRuns: async () => { if (failing === 'unleased') throw new Error('unleased read refused'); return [] }
  } as unknown as JobLeases
  const watcher = watchLostRuns(leases, { log: log as unknown as JobLogger, leaseMs: 60_000, retriesOf: () => 0, jobNames: ['job'], failQueued: async () => {} })
  t.teardown(() => watcher.stop())
  for (let look = 0; look < 3; look++) await watcher.look()
  failing = 'lost'
  await watcher.look()
  failing = undefined
  await watcher.look()
  await watcher.look()
  t.same(lines.map((line) => line.replace(/:.*/, '')), [
    'error [jobs] could not look for running runs that never took a lease',
    'info [jobs] looking for lost runs works again (4 look(s) failed over 0 s)'
  ], 'one line when the trouble starts and one when it ends, over four failed looks')
})

t.test('the look for lost runs: a queued run that never took its lease goes back to its queue, named by its row\'s source', async (t) => {
  const lines: string[] = []
  const log = { error: (line: string) => lines.push(`error ${line}`), warn: (line: string) => lines.push(`warn ${line}`), info: (line: string) => lines.push(`info ${line}`) }
  const handedBack: QueuedRun[] = []
  const leases = {
    takeLostRuns: async () => [],
    findUnleasedRuns: async () => lines.length > 0 ? [] : ['row1'],
    // The row as takeUnleasedRuns returns it, already failed: its params lack the queue's marker, its source names the run.
    takeUnleasedRuns: async () => [{ jobId: 'row1', jobName: 'confirm', params: { orderId: 'o1' }, source: 'queue 7f3e (attempt 2 of 3)' }]
  } as unknown as JobLeases
  let clock = 0
  const watcher = watchLostRuns(leases, { log: log as unknown as JobLogger, leaseMs: 60_000, retriesOf: () => 0, jobNames: ['confirm'], failQueued: async (run) => { handedBack.push(run) }, now: () => clock })
  t.teardown(() => watcher.stop())
  // Seen without a lease at two looks three lease periods apart (this instance's clock).
  await watcher.look()
  clock += 180_000
  await watcher.look()
  t.same(handedBack, [{ queue: 'confirm', id: '7f3e', attempt: 2, attempts: 3 }], 'handed back to the queue that ran it, with its attempt')
  t.match(lines, [/^warn \[jobs\] run row1 of confirm was lost with its instance before it took its lease .* during attempt 2 of 3; marked failed "instance lost" and handed back to its queue$/], 'and says so once')
})

t.test('the look for lost runs: a running row without a lease is due once this instance has seen it so over the window, whatever its createdAt says', async (t) => {
  const sightings: UnleasedSightings = new Map()
  t.same(dueUnleased(sightings, ['a', 'b'], 1_000, 60_000), [], 'rows seen for the first time are not due (an old createdAt may be a slow clock\'s)')
  t.same(dueUnleased(sightings, ['a', 'b'], 60_999, 60_000), [], 'nor before the window has passed on this clock')
  t.same(dueUnleased(sightings, ['a'], 30_000 + 1_000, 60_000), [], 'a row missing from a look (it took its lease, it ended) is forgotten')
  t.same(dueUnleased(sightings, ['a', 'b', 'c'], 61_000, 60_000), ['a'], 'the row seen leaseless at every look over the window is due')
  t.same([...sightings.keys()], ['a', 'b', 'c'], 'a row seen again after it was missing starts over')
  dueUnleased(sightings, ['c'], 62_000, 60_000)
  t.same([...sightings.keys()], ['c'], 'only the rows of the last look are remembered (bounded by one look\'s limit)')
  t.same(dueUnleased(sightings, ['c'], 121_000, 60_000), ['c'], 'and each is due after the window from its first sighting')
})

t.test('the look for lost runs: a row not yet due is not taken, and a failed take is tried again at the next look', async (t) => {
  const lines: string[] = []
  const log = { error: (line: string) => lines.push(`error ${line}`), warn: (line: string) => lines.push(`warn ${line}`), info: (line: string) => lines.push(`info ${line}`) }
  const asked: string[][] = []
  let refuse = true
  const leases = {
    takeLostRuns: async () => [],
    findUnleasedRuns: async () => ['row1'],
    takeUnleasedRuns: async (ids: string[]) => {
      asked.push(ids)
      if (refuse) throw new Error('take refused')
      return [{ jobId: 'row1', jobName: 'job', params: { __attempt: 1 }, source: 'api' }]
    }
  } as unknown as JobLeases
  let clock = 0
  const watcher = watchLostRuns(leases, { log: log as unknown as JobLogger, leaseMs: 1_000, retriesOf: () => 0, jobNames: ['job'], failQueued: async () => {}, now: () => clock })
  t.teardown(() => watcher.stop())
  await watcher.look()
  clock += 59_999
  await watcher.look()
  t.same(asked, [], 'nothing is taken before the minute a short lease still waits')
  clock += 1
  await watcher.look()
  refuse = false
  await watcher.look()
  t.same(asked, [['row1'], ['row1']], 'the due row is taken, and again after the take failed')
  t.match(lines, [/^error \[jobs\] could not look for running runs that never took a lease: take refused/, /^info /, /^error \[jobs\] run row1 of job was lost with its instance before it took its lease \(seen "running" without one for 60 s\) during attempt 1 of 1/])
})

// Queries Parse Server takes from a client (or the master key) and used to
// answer with a 500: an aggregate pipeline it cannot read, a limit or skip out
// of any range, and on PostgreSQL the values and paths it turns into SQL that
// PostgreSQL refuses. Each is the client's mistake: 400 {code, error}. Runs on
// either database lane.
import t from 'tap'
import { BaseModel, ParseClass, ParseField } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit, lane } from './helpers/kit.js'
import { resolveOptions } from '../lib/options.js'
import { createRequire } from 'node:module'

// Parse's own WebSocket library (Node 20 has no global WebSocket).
interface Socket { on (event: string, listener: (data?: unknown) => void): void, send (text: string): void, close (): void }
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string) => Socket

@ParseClass('QueryEdge', { clp: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: {}, addField: {} } })
class QueryEdge extends BaseModel {
  @ParseField({ type: 'String' }) declare label: string
  @ParseField({ type: 'Number' }) declare n: number
  @ParseField({ type: 'Pointer', targetClass: '_User' }) declare owner: unknown
}

const json = (value: unknown) => encodeURIComponent(JSON.stringify(value))

t.test('queries a client gets wrong', async (t) => {
  // /classes/* leaves out names starting with `_`: __proto__ is named so that its 400 (103) is what a client meets.
  const opened = [{ path: '/classes/*' }, { path: '/classes/__proto__' }, { path: '/classes/__proto__/*' }, { path: '/batch', methods: ['POST'] }]
  const kit = await startKit(t, { models: [QueryEdge], allowedRoutes: opened, liveQuery: { classNames: ['QueryEdge'] } })
  const made = await kit.request('POST', '/parse/classes/QueryEdge', { headers: appHeaders, body: { label: 'a', n: 1 } })
  t.equal(made.status, 201, made.text)

  t.test('an aggregate pipeline with a stage that is not an object, or a $group that is not one, is refused 400', async (t) => {
    const refusals: Array<[string, RegExp]> = [
      [`pipeline=${json([null])}`, /pipeline stage 0 must be an object with one key/],
      [`pipeline=${json([{ $match: {} }, null])}`, /pipeline stage 1 must be an object with one key/],
      [`pipeline=${json([{ $group: null }])}`, /\$group must be an object with an _id/],
      [`pipeline=${json({ $group: null })}`, /\$group must be an object with an _id/],
      [`$group=${json(null)}`, /\$group must be an object with an _id/]
    ]
    for (const [query, error] of refusals) {
      const answer = await kit.request('GET', `/parse/aggregate/QueryEdge?${query}`, { headers: masterHeaders })
      t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error }, `?${decodeURIComponent(query)} (${answer.text.slice(0, 120)})`)
    }
    const overridden = await kit.request('POST', '/parse/aggregate/QueryEdge', { headers: masterHeaders, body: { _method: 'GET', pipeline: [null] } })
    t.match({ status: overridden.status, ...overridden.json }, { status: 400, code: 102, error: /pipeline stage 0/ }, `a POST overridden to GET (${overridden.text.slice(0, 120)})`)
    // What Parse already refuses itself stays its answer.
    for (const pipeline of [[{}], [{ $group: { n: 1 } }], 'abc']) {
      const answer = await kit.request('GET', `/parse/aggregate/QueryEdge?pipeline=${json(pipeline)}`, { headers: masterHeaders })
      t.equal(answer.status, 400, `${JSON.stringify(pipeline)}: Parse's own 400 (${answer.text.slice(0, 120)})`)
    }
    const fine = await kit.request('GET', `/parse/aggregate/QueryEdge?pipeline=${json([{ $group: { _id: null, total: { $sum: '$n' } } }])}`, { headers: masterHeaders })
    t.match({ status: fine.status, ...fine.json }, { status: 200, results: [{ total: 1 }] }, `a well-formed pipeline runs (${fine.text.slice(0, 120)})`)
  })

  t.test('a limit or skip that is negative or past 2147483647 is refused 400', async (t) => {
    for (const query of ['limit=-5', 'skip=-5', 'limit=99999999999999999999', 'skip=1e300', 'limit=2147483648']) {
      for (const headers of [appHeaders, masterHeaders]) {
        const answer = await kit.request('GET', `/parse/classes/QueryEdge?${query}`, { headers })
        t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error: /(limit|skip) must be a whole number from 0 to 2147483647/ }, `?${query}${headers === masterHeaders ? ' (master key)' : ''} (${answer.text.slice(0, 120)})`)
      }
    }
    for (const [headers, query] of [[masterHeaders, 'limit=2147483647'], [appHeaders, 'skip=1000000'], [appHeaders, 'limit=0&count=1'], [appHeaders, 'limit=1e3']] as const) {
      const answer = await kit.request('GET', `/parse/classes/QueryEdge?${query}`, { headers })
      t.equal(answer.status, 200, `?${query} runs (${answer.text.slice(0, 120)})`)
    }
  })

  t.test('an include, keys or excludeKeys path of more than 64 segments is refused 400, before Parse spends time squared on it', async (t) => {
    const deep = (segments: number) => Array.from({ length: segments }, () => 'owner').join('.')
    for (const name of ['include', 'keys', 'excludeKeys']) {
      for (const headers of [appHeaders, masterHeaders]) {
        const who = headers === masterHeaders ? ' (master key)' : ''
        const answer = await kit.request('POST', '/parse/classes/QueryEdge', { headers, body: { _method: 'GET', [name]: `label,${deep(3000)}` } })
        t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error: new RegExp(`${name} paths have at most 64 segments`) }, `${name} 3000 deep${who} (${answer.text.slice(0, 120)})`)
        const batched = await kit.request('POST', '/parse/batch', { headers, body: { requests: [{ method: 'GET', path: '/parse/classes/QueryEdge', body: { [name]: deep(65) } }] } })
        t.match({ status: batched.status, ...batched.json }, { status: 400, code: 102, error: new RegExp(`${name} paths have at most 64 segments`) }, `${name} 65 deep inside a /batch${who} (${batched.text.slice(0, 120)})`)
      }
    }
    const fine = await kit.request('GET', '/parse/classes/QueryEdge?include=owner&keys=label,owner.username', { headers: masterHeaders })
    t.equal(fine.status, 200, `short paths run (${fine.text.slice(0, 100)})`)
  })

  t.test('a client asks at most maxClientLimit rows (1000 by default); the master key is not bounded', async (t) => {
    const refused = { status: 400, code: 102, error: /limit 1001 is more than a client may ask \(maxClientLimit: 1000\)/ }
    const over = await kit.request('GET', '/parse/classes/QueryEdge?limit=1001', { headers: appHeaders })
    t.match({ status: over.status, ...over.json }, refused, `limit=1001 (${over.text.slice(0, 140)})`)
    const batched = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [{ method: 'GET', path: '/parse/classes/QueryEdge', body: { limit: 1001 } }] } })
    t.match({ status: batched.status, ...batched.json }, refused, `inside a /batch (${batched.text.slice(0, 140)})`)
    const overridden = await kit.request('POST', '/parse/classes/QueryEdge', { headers: appHeaders, body: { _method: 'GET', limit: 1001 } })
    t.match({ status: overridden.status, ...overridden.json }, refused, `a POST overridden to GET (${overridden.text.slice(0, 140)})`)
    for (const [headers, query] of [[appHeaders, 'limit=1000'], [appHeaders, 'count=1&limit=0'], [masterHeaders, 'limit=5000']] as const) {
      const answer = await kit.request('GET', `/parse/classes/QueryEdge?${query}`, { headers })
      t.equal(answer.status, 200, `${query}${headers === masterHeaders ? ' (master key)' : ''} runs (${answer.text.slice(0, 100)})`)
    }
    const base = { appId: 'a', masterKey: 'm' }
    t.equal(resolveOptions(base).maxClientLimit, 1000, 'the default')
    t.equal(resolveOptions({ ...base, maxClientLimit: false }).maxClientLimit, false, 'false lifts it')
    t.throws(() => resolveOptions({ ...base, maxClientLimit: 0 }), { code: 'FPK_ERR_OPTION_INVALID', message: /option "maxClientLimit": must be a whole number of rows from 1 to 2147483647, or false/ })
  })

  t.test('inside a /batch, the same finds and pipelines are refused 400 before any inner request runs', async (t) => {
    const inner = (path: string, body: unknown) => ({ requests: [{ method: 'POST', path: '/parse/classes/QueryEdge', body: { label: 'batched' } }, { method: 'GET', path, body }] })
    const refusals: Array<[Record<string, string>, string, unknown, RegExp]> = [
      [appHeaders, '/parse/classes/QueryEdge', { where: null }, /where must be a JSON object \(got null\)/],
      [appHeaders, '/parse/classes/QueryEdge', { where: { $or: [null] } }, /\$or must be a list of conditions/],
      [appHeaders, '/parse/classes/QueryEdge', { limit: -5 }, /limit must be a whole number from 0 to 2147483647/],
      [appHeaders, '/parse/classes/QueryEdge', { limit: 'abc' }, /limit must be a whole number/],
      [masterHeaders, '/parse/aggregate/QueryEdge', { pipeline: [null] }, /pipeline stage 0 must be an object/]
    ]
    for (const [headers, path, body, error] of refusals) {
      for (const transaction of [false, true]) {
        const answer = await kit.request('POST', '/parse/batch', { headers, body: { ...inner(path, body), transaction } })
        t.match({ status: answer.status, ...answer.json }, { status: 400, code: 102, error }, `${JSON.stringify(body)}${transaction ? ' (transaction)' : ''} (${answer.text.slice(0, 120)})`)
      }
    }
    const stored = await kit.request('GET', `/parse/classes/QueryEdge?where=${json({ label: 'batched' })}&count=1&limit=0`, { headers: masterHeaders })
    t.equal(stored.json.count, 0, 'no inner request ran')
    const fine = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: inner('/parse/classes/QueryEdge', { where: { label: 'a' }, limit: 5 }) })
    t.match({ status: fine.status, results: fine.json }, { status: 200, results: [{ success: {} }, { success: { results: [{ label: 'a' }] } }] }, `a well-formed batch runs (${fine.text.slice(0, 120)})`)
  })

  t.test('a save whose __op Parse cannot read, or whose body is no object, is refused 400 (107), directly or in a /batch', async (t) => {
    const edge = await kit.request('POST', '/parse/classes/QueryEdge', { headers: appHeaders, body: { label: 'ops' } })
    const path = `/parse/classes/QueryEdge/${edge.json.objectId as string}`
    const refusals: Array<[unknown, RegExp]> = [
      [{ n: { __op: 'Bogus' } }, /unknown __op "Bogus" on n/],
      [{ n: { __op: 'SetOnInsert', amount: 1 } }, /unknown __op "SetOnInsert" on n/],
      [{ n: { __op: 'Increment', amount: 'x' } }, /Increment on n needs a number amount/],
      [{ owner: { __op: 'AddRelation', objects: [null] } }, /AddRelation on owner needs objects: a list of pointers/],
      [{ n: { __op: 'Batch', ops: null } }, /Batch on n needs ops: a list of operations/],
      [{ n: { __op: 'Batch', ops: [null] } }, /Batch on n needs ops: a list of operations/],
      [5, /the body of a save must be a JSON object/]
    ]
    for (const [body, error] of refusals) {
      const direct = await kit.request('PUT', path, { headers: appHeaders, body: JSON.stringify(body) })
      t.match({ status: direct.status, ...direct.json }, { status: 400, code: 107, error }, `PUT ${JSON.stringify(body)} (${direct.text.slice(0, 120)})`)
      const batched = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { transaction: true, requests: [{ method: 'PUT', path, body }] } })
      t.match({ status: batched.status, ...batched.json }, { status: 400, code: 107, error }, `in a transactional /batch (${batched.text.slice(0, 120)})`)
    }
    const fine = await kit.request('PUT', path, { headers: appHeaders, body: { n: { __op: 'Increment', amount: 2 }, label: { __op: 'Delete' } } })
    t.equal(fine.status, 200, `well-formed operations are saved (${fine.text.slice(0, 120)})`)
  })

  t.test('a class named like a member of every JavaScript object (constructor, toString, __proto__) is refused 400 (103), not a 500', async (t) => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      for (const headers of [appHeaders, masterHeaders]) {
        const who = headers === masterHeaders ? ' (master key)' : ''
        const made = await kit.request('POST', `/parse/classes/${name}`, { headers, body: { label: 'x' } })
        t.match({ status: made.status, ...made.json }, { status: 400, code: 103, error: new RegExp(`${name} is not a class name Parse can serve`) }, `POST /classes/${name}${who} (${made.text.slice(0, 120)})`)
      }
      const updated = await kit.request('PUT', `/parse/classes/${name}/abc`, { headers: appHeaders, body: { label: 'x' } })
      t.match({ status: updated.status, ...updated.json }, { status: 400, code: 103 }, `PUT /classes/${name}/abc (${updated.text.slice(0, 120)})`)
      const batched = await kit.request('POST', '/parse/batch', { headers: appHeaders, body: { requests: [{ method: 'POST', path: `/parse/classes/${name}`, body: {} }] } })
      t.match({ status: batched.status, ...batched.json }, { status: 400, code: 103 }, `inside a /batch (${batched.text.slice(0, 120)})`)
    }
    const fine = await kit.request('POST', '/parse/classes/QueryEdge', { headers: appHeaders, body: { label: 'named' } })
    t.equal(fine.status, 201, 'other classes are served')
  })

  t.test('a LiveQuery subscription whose where Parse\'s matcher cannot evaluate is refused, not left to fail on every event', async (t) => {
    const subscribe = (where: unknown) => new Promise<any>((resolve, reject) => {
      const socket = new WebSocket(kit.origin.replace(/^http/, 'ws') + '/parse')
      socket.on('open', () => socket.send(JSON.stringify({ op: 'connect', applicationId: 'test-app' })))
      socket.on('message', (data) => {
        const message = JSON.parse(String(data))
        if (message.op === 'connected') socket.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'QueryEdge', where } }))
        else { resolve(message); socket.close() }
      })
      socket.on('error', reject)
    })
    const refusals: Array<[unknown, RegExp]> = [
      [{ n: { $in: null } }, /n: \$in takes a list/],
      [{ n: { $nin: 5 } }, /n: \$nin takes a list/],
      [{ n: { $all: null } }, /n: \$all takes a list/],
      [{ n: { $nearSphere: null } }, /n: \$nearSphere takes an object/],
      [{ n: { $within: { $box: null } } }, /n: \$within takes \{"\$box": \[two GeoPoints\]\}/],
      [{ n: { $geoWithin: null } }, /n: \$geoWithin takes an object/],
      [{ label: { $select: null } }, /label: \$select takes an object/],
      [{ $or: [{ n: { $in: null } }] }, /n: \$in takes a list/],
      // A pattern runs against every event of the class on the event loop: off unless liveQuery.allowRegex.
      [{ label: { $regex: '(a+)+b$' } }, /label: \$regex is not accepted in a subscription: .*liveQuery\.allowRegex: true/],
      [{ $or: [{ n: 1 }, { label: { $regex: '^x', $options: 'i' } }] }, /label: \$regex is not accepted/]
    ]
    for (const [where, error] of refusals) {
      const answer = await subscribe(where)
      t.match(answer, { op: 'error', code: 102, error }, `${JSON.stringify(where)} (${JSON.stringify(answer).slice(0, 140)})`)
    }
    const fine = await subscribe({ n: { $in: [1, 2], $ne: null }, label: { $exists: true, $eq: null } })
    t.equal(fine.op, 'subscribed', `a well-formed where subscribes (${JSON.stringify(fine).slice(0, 100)})`)
  })

  t.test('values and paths the database cannot compare answer 4xx, never a 500', async (t) => {
    const select = (operator: string) => ({ label: { [operator]: { query: { className: 'QueryEdge', where: {} }, key: 'nothere' } } })
    const wheres: unknown[] = [
      select('$select'),
      select('$dontSelect'),
      { n: { $in: [null, 1] } },
      { label: { $nin: [null] } },
      { n: { $ne: 'x' } },
      { n: 'abc' },
      { n: { $gt: 'abc' } },
      { n: { $gt: { $bogus: 1 } } },
      { 'label.sub': 1 },
      { createdAt: 'garbage' },
      { createdAt: { $lt: { __type: 'Date', iso: 'garbage' } } },
      { n: { __type: 'Date', iso: 'x' } }
    ]
    for (const where of wheres) {
      const answer = await kit.request('GET', `/parse/classes/QueryEdge?where=${json(where)}`, { headers: appHeaders })
      t.ok(answer.status < 500, `${JSON.stringify(where)}: ${answer.status} (${answer.text.slice(0, 140)})`)
      if (lane.kind === 'postgres' && answer.status !== 200) t.match(answer.json, { code: 102, error: /PostgreSQL cannot run this query/ }, 'says why, in the kit\'s words')
    }
    // What MongoDB refuses as a bad value: an index hint it cannot use, $exists that is no boolean
    // (the stand-in; a real MongoDB takes any value). PostgreSQL ignores hints.
    for (const query of [`hint=${json({})}`, 'hint=nothere', `where=${json({ n: { $exists: 'x' } })}`]) {
      const answer = await kit.request('GET', `/parse/classes/QueryEdge?${query}`, { headers: appHeaders })
      t.ok(answer.status < 500, `${decodeURIComponent(query)}: ${answer.status} (${answer.text.slice(0, 140)})`)
      if (answer.status !== 200) t.match(answer.json, { code: 102, error: /MongoDB cannot run this query/ }, 'says why, in the kit\'s words')
    }
    // Operators whose value is not the shape Parse's query translation reads (a TypeError inside it).
    const shapes: unknown[] = [
      { n: { $nearSphere: null } },
      { n: { $geoWithin: null } },
      { n: { $geoIntersects: null } },
      { n: { $within: null } },
      { label: { $text: null } },
      { label: { $text: { $search: null } } },
      { owner: { __type: 'Pointer', className: null, objectId: null } },
      { n: { $eq: { __type: 'Bytes' } } },
      { n: { $select: { query: { className: 'QueryEdge', where: null }, key: 'n' } } }
    ]
    for (const where of shapes) {
      const answer = await kit.request('GET', `/parse/classes/QueryEdge?where=${json(where)}`, { headers: appHeaders })
      t.ok(answer.status < 500, `${JSON.stringify(where)}: ${answer.status} (${answer.text.slice(0, 140)})`)
      t.not(answer.json?.code, 1, 'an answer with a code other than internal error')
    }
    const ordered = await kit.request('GET', '/parse/classes/QueryEdge?order=label.sub', { headers: appHeaders })
    t.ok(ordered.status < 500, `order=label.sub: ${ordered.status} (${ordered.text.slice(0, 140)})`)
  })
})

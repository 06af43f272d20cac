// Cloud functions called with a Date that is no date, in Parse's encoding
// ({"__type": "Date", "iso": "nope"}): a declared function, its /functions
// twin, and a function of the application's own cloud code that Parse's
// functions router serves. Before: the twin answered 500 (the Invalid Date
// failed its answer), and Parse's router, encoding the echoed Invalid Date
// outside any catch, never answered and ended the process (so it did with a
// Pointer without objectId or a File without url).
import t from 'tap'
import Parse from 'parse/node'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { appHeaders, startKit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'
import { scaled } from './helpers/time-scale.js'

@Route('dates')
class DateFunctions {
  @CloudFunction({ methods: ['POST'] })
  static echo (request: CloudRequest) { return { at: request.params.at, isDate: request.params.at instanceof Date } }
}
void DateFunctions

t.test('a Date whose iso is no date is a 400 on every function route, and the server keeps answering', async (t) => {
  const cloud = (parse: typeof Parse) => { parse.Cloud.define('rawEcho', (request: { params: unknown }) => request.params) }
  const kit = await startKit(t, { ...await sharedPostgres(t), parseServerOptions: { cloud } })
  const call = async (url: string, body: unknown) => {
    const response = await fetch(kit.origin + url, { method: 'POST', headers: { ...appHeaders, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(scaled(10_000)) })
    return { status: response.status, json: await response.json() as Record<string, any> }
  }
  const invalid = [{ at: { __type: 'Date', iso: 'nope' } }, { at: { nested: [{ __type: 'Date', iso: '2026-13-45' }] } }]
  for (const body of invalid) {
    for (const url of ['/parse/dates/echo', '/parse/functions/echo']) {
      const refused = await call(url, body)
      t.equal(refused.status, 400, `${url} ${JSON.stringify(body)} → 400 (${JSON.stringify(refused.json).slice(0, 160)})`)
      t.match(refused.json, { code: Parse.Error.VALIDATION_ERROR, error: /^at holds a Date whose iso is not a date/ })
    }
    const raw = await call('/parse/functions/rawEcho', body)
    t.equal(raw.status, 400, `Parse's router: ${JSON.stringify(body)} → 400 (${JSON.stringify(raw.json).slice(0, 160)})`)
    t.match(raw.json, { code: Parse.Error.INVALID_JSON, error: /Request refused: at holds a Date whose iso is not a date/ })
  }
  // Neither can the SDK encode a Pointer without objectId or a File without url: Parse's router never answered either.
  for (const at of [{ __type: 'Pointer', className: 'Note' }, { list: [{ __type: 'File', name: 'a.txt' }] }]) {
    const raw = await call('/parse/functions/rawEcho', { at })
    t.equal(raw.status, 400, `Parse's router: ${JSON.stringify(at)} → 400 (${JSON.stringify(raw.json).slice(0, 160)})`)
    t.match(raw.json, { code: Parse.Error.INVALID_JSON, error: /Request refused: at holds a (Pointer|File) without/ })
  }
  const iso = '2026-01-02T03:04:05.000Z'
  const valid = { at: { __type: 'Date', iso } }
  t.match((await call('/parse/dates/echo', valid)).json, { at: iso, isDate: true }, 'a valid Date reaches the handler as a Date')
  t.match((await call('/parse/functions/echo', valid)).json, { result: { at: { __type: 'Date', iso }, isDate: true } })
  t.match((await call('/parse/functions/rawEcho', valid)).json, { result: { at: { __type: 'Date', iso } } }, 'and Parse\'s router still echoes it')
  const pointer = { __type: 'Pointer', className: 'Note', objectId: 'abc' }
  t.match((await call('/parse/functions/rawEcho', { at: pointer })).json, { result: { at: pointer } }, 'as a Pointer with its objectId')
})

// The NUL character (U+0000) is bad input, wherever it comes in: 400 {code: 142}
// naming the field, on declared endpoints and on the Parse routes the gate opens.
import t, { type Test } from 'tap'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { Note } from '../fixtures/models/Note.js'
import { appHeaders, masterHeaders, startKit, type HttpResult } from './helpers/kit.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const fixtures = path.join(here, '..', 'fixtures')
const master = { useMasterKey: true }

t.test('NUL characters answer 400 {code: 142} naming the field', async (t) => {
  const kit = await startKit(t, {
    models: path.join(fixtures, 'models'),
    functions: path.join(fixtures, 'functions'),
    allowAuthRoutes: true
  })
  const writer = await kit.signUp('nina')
  const user = { ...appHeaders, 'x-parse-session-token': writer.token }
  const note = await new Note({ title: 'clean', status: 'published' }).save(null, master)
  const notes = async () => new Parse.Query(Note).exists('objectId').count(master)
  const before = await notes()

  const refused = (t: Test, answer: HttpResult, field: string) => {
    t.equal(answer.status, 400, answer.text)
    t.equal(answer.json?.code, 142)
    t.match(answer.json?.error, new RegExp(`^${field.replace(/[.$\\]/g, '\\$&')} must not contain the NUL character`), `names ${field}`)
  }

  t.test('declared endpoints', async (t) => {
    refused(t, await kit.request('POST', '/parse/notes/createNote', { headers: user, body: { title: 'a\u0000b' } }), 'title')
    refused(t, await kit.request('POST', '/parse/functions/createNote', { headers: user, body: { title: 'ok', body: 'x\u0000' } }), 'body')
    refused(t, await kit.request('GET', '/parse/notes/getNote?id=%00', { headers: appHeaders }), 'id')
    refused(t, await kit.request('GET', `/parse/notes/getNote?id=${note.id}%00`, { headers: appHeaders }), 'id')
    refused(t, await kit.request('POST', '/parse/notes/updateNote', { headers: user, body: { id: note.id, title: '\u0000' } }), 'title')
    refused(t, await kit.request('POST', '/parse/orders/createOrder', { headers: user, body: { lines: [{ product: 'p\u0000', quantity: 1 }] } }), 'lines/0/product')
    refused(t, await kit.request('POST', '/parse/notes/createNote', { headers: user, body: { title: 'ok', 'x\u0000y': 1 } }), 'x\\u0000y')
  })

  t.test('Parse routes the gate lets through', async (t) => {
    refused(t, await kit.request('POST', '/parse/classes/Note', { headers: masterHeaders, body: { title: 'a\u0000b' } }), 'title')
    refused(t, await kit.request('PUT', `/parse/classes/Note/${note.id}`, { headers: masterHeaders, body: { body: 'b\u0000' } }), 'body')
    // A NUL in the path never reaches Parse: the gate refuses control characters in a target.
    for (const [method, url] of [['GET', '/parse/classes/Note/%00'], ['DELETE', '/parse/classes/Note/ab%00']] as const) {
      const answer = await kit.request(method, url, { headers: masterHeaders })
      t.equal(answer.status, 400, answer.text)
      t.match(answer.json, { code: Number, error: /refused/ }, `${method} ${url} is refused before Parse`)
    }
    const where = encodeURIComponent(JSON.stringify({ title: 'a\u0000' }))
    refused(t, await kit.request('GET', `/parse/classes/Note?where=${where}`, { headers: masterHeaders }), 'title')
    const inList = encodeURIComponent(JSON.stringify({ objectId: { $in: ['x', '\u0000'] } }))
    refused(t, await kit.request('GET', `/parse/classes/Note?where=${inList}&count=1`, { headers: masterHeaders }), 'objectId/$in/1')
    refused(t, await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'nul\u0000user', password: 'secret-password-1' } }), 'username')
    const login = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'nina\u0000', password: 'x' } })
    t.ok(login.status >= 400 && login.status < 500, `a login is refused as bad input, not a 500: ${login.text}`)
    for (const [method, url] of [['GET', '/parse/classes/No%00te'], ['GET', '/parse/users/%00'], ['POST', '/parse/functions/he%00llo'], ['GET', '/parse/schemas/No%00te'], ['GET', '/parse/roles/%00'], ['GET', '/parse/notes/getNote%00?id=1'], ['POST', '/parse/classes/No%00te'], ['PUT', '/parse/classes/Note/x%00'], ['GET', '/parse/classes/Note?order=ti%00tle'], ['GET', '/parse/classes/Note?keys=ti%00tle'], ['GET', '/parse/classes/Note?include=ti%00tle']] as const) {
      const answer = await kit.request(method, url, { headers: masterHeaders, body: method === 'POST' ? {} : undefined })
      t.ok(answer.status < 500, `${method} ${url}: never a 5xx (Parse ignores an unknown include): ${answer.status} ${answer.text}`)
    }
    const batch = await kit.request('POST', '/parse/batch', {
      headers: masterHeaders,
      body: { requests: [{ method: 'POST', path: '/parse/classes/Note', body: { title: 'fine' } }, { method: 'POST', path: '/parse/classes/Note', body: { title: 'bad\u0000' } }], transaction: true }
    })
    refused(t, batch, 'requests/1/body/title')
  })

  t.test('nothing was written, and clean input still works', async (t) => {
    t.equal(await notes(), before)
    const created = await kit.request('POST', '/parse/notes/createNote', { headers: user, body: { title: 'clean again' } })
    t.equal(created.status, 200, created.text)
    const stored = await new Parse.Query(Note).get(note.id!, master)
    t.equal(stored.body, undefined, 'the refused update left the note alone')
  })
})

// Reads (and writes) share Parse's schema controller while the schema is unchanged
// (lib/parse/reused-schema.ts) — except when protected fields by pointer
// ("userField:…") exist: a read with `keys` then parks temporary keys on the
// class's permissions, which a shared controller would pass on to the next
// read (stripping a field it must send). Every answer here must equal Parse's
// REST answer for the same caller, in this order.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, queryRows, Route, type CloudRequest } from '../lib/index.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

@ParseClass('Ticket', {
  clp: { find: { '*': true }, count: { '*': true }, get: { '*': true }, create: {}, update: {}, delete: {} },
  // The user a ticket's `owner` points to does not see its `note`.
  protectedFields: { 'userField:owner': ['note'] }
})
class Ticket extends BaseModel {
  @ParseField({ type: 'String' }) declare title: string
  @ParseField({ type: 'String' }) declare note: string
  @ParseField({ type: 'Pointer', targetClass: '_User' }) declare owner: Parse.User
}

const byTitle = () => new Parse.Query(Ticket).ascending('title')

@Route('tickets')
export class TicketFunctions {
  @CloudFunction({ methods: ['GET'] })
  static async titlesOnly (request: CloudRequest) {
    return queryRows(byTitle().select('title'), request, { count: true })
  }

  @CloudFunction({ methods: ['GET'] })
  static async everything (request: CloudRequest) {
    return queryRows(byTitle(), request, { count: true })
  }
}

t.test('a read with keys leaves nothing behind for the next read (protected fields by pointer)', async (t) => {
  const kit = await startKit(t, { allowedRoutes: [{ path: '/classes/Ticket', methods: ['GET'] }] })
  const owner = await kit.signUp('ticket-owner')
  const reader = await kit.signUp('ticket-reader')
  const as = (user: { token: string }) => ({ ...appHeaders, 'x-parse-session-token': user.token })
  const created = await kit.request('POST', '/parse/classes/Ticket', {
    headers: masterHeaders,
    body: { title: 'one', note: 'for others', owner: { __type: 'Pointer', className: '_User', objectId: owner.id }, ACL: { '*': { read: true } } }
  })
  t.equal(created.status, 201, created.text)
  const rest = (user: { token: string }, keys?: string) =>
    kit.request('GET', `/parse/classes/Ticket?${new URLSearchParams({ order: 'title', count: '1', where: JSON.stringify({ objectId: { $exists: true } }), ...(keys ? { keys } : {}) })}`, { headers: as(user) })

  for (const user of [reader, owner, reader]) {
    const everything = await kit.request('GET', '/parse/tickets/everything', { headers: as(user) })
    t.equal(everything.text, (await rest(user)).text, 'every field, as REST sends it')
    const titles = await kit.request('GET', '/parse/tickets/titlesOnly', { headers: as(user) })
    t.equal(titles.text, (await rest(user, 'title')).text, 'keys, as REST sends them')
  }
  const last = await kit.request('GET', '/parse/tickets/everything', { headers: as(reader) })
  t.ok('owner' in last.json.results[0], 'the pointer a keyed read needed temporarily is still sent')
  t.equal(last.json.results[0].note, 'for others')
})

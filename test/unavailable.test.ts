// Telling "the database cannot be reached" from every other failure, and a
// PostgreSQL transaction that cannot even BEGIN: it must fail, not hang or
// leave a promise rejecting with no handler (which ends the process).
import t, { type Test } from 'tap'
import Parse from 'parse/node'
import { parseInternals } from '../lib/parse/internals.js'
import { wrapAdapter } from '../lib/storage/adapter.js'
import { watchAvailability } from '../lib/storage/availability.js'
import { freePort } from '../lib/storage/free-port.js'
import { CallTimeoutError, ConnectionWaitError, isNoAnswerInTime, isWaitForConnection } from '../lib/storage/call-bound.js'
import { outage } from '../lib/storage/outages.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { DATABASE_BUSY, DATABASE_UNAVAILABLE, DatabaseBusyError, DatabaseUnavailableError, describeOutage, isDatabaseUnavailable } from '../lib/storage/unavailable.js'
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { PostgresStorageAdapter } = parseInternals()

const named = (name: string, message = name) => Object.assign(new Error(message), { name })
const coded = (code: string, message = code) => Object.assign(new Error(message), { code })

t.test('what counts as the database being unreachable', async (t) => {
  const unreachable: Array<[string, unknown]> = [
    ['refused', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['reset', coded('ECONNRESET')],
    ['server shut down (57P01)', coded('57P01', 'terminating connection due to administrator command')],
    ['crash shutdown (57P02)', coded('57P02')],
    ['starting up (57P03)', coded('57P03', 'the database system is starting up')],
    ['connection failure class 08', coded('08006')],
    ['no free connections', coded('53300')],
    ['a database that takes no connections (55000, FATAL)', Object.assign(coded('55000', 'database "parse" is not currently accepting connections'), { severity: 'FATAL' })],
    ['a dropped database (57P04)', coded('57P04')],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly')],
    ['pg: client not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['pg pool: connect timeout', new Error('timeout exceeded when trying to connect')],
    ['MongoDB server selection', named('MongoServerSelectionError', 'connect ECONNREFUSED 127.0.0.1:27017')],
    ['MongoDB network', named('MongoNetworkError')],
    ['wrapped in a cause', Object.assign(new Error('outer'), { cause: coded('ECONNREFUSED') })],
    ['an aggregate of refusals', Object.assign(new Error('all failed'), { errors: [coded('ECONNREFUSED')] })],
    ['already classified', new DatabaseUnavailableError()]
  ]
  for (const [what, error] of unreachable) t.ok(isDatabaseUnavailable(error), what)
  const refusedOne: Array<[string, unknown]> = [
    ['unique violation', coded('23505', 'duplicate key value')],
    ['deadlock (a conflict, re-run)', coded('40P01', 'deadlock detected')],
    ['syntax error', coded('42601')],
    ['55000 on a statement (ERROR): the connection stays', Object.assign(coded('55000', 'currval of sequence is not yet defined'), { severity: 'ERROR' })],
    ['Parse not found', new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'Object not found.')],
    ['Parse internal error', new Parse.Error(Parse.Error.INTERNAL_SERVER_ERROR, 'An internal server error occurred')],
    ['MongoDB duplicate key', Object.assign(named('MongoServerError'), { code: 11000 })],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined]
  ]
  for (const [what, error] of refusedOne) t.notOk(isDatabaseUnavailable(error), what)
  t.equal(describeOutage(coded('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:5432')), 'connection refused', 'the reason names no host')
  t.equal(describeOutage(new DatabaseUnavailableError(coded('57P01'))), 'the database server shut down')
  t.equal(describeOutage(Object.assign(coded('55000'), { severity: 'FATAL' })), 'the database does not accept connections')
  const error = new DatabaseUnavailableError()
  t.equal(error.code, DATABASE_UNAVAILABLE)
  t.equal(error.statusCode, 503)
  t.ok(error instanceof Parse.Error, 'a Parse error, so Parse passes it through unchanged')
})

t.test('a PostgreSQL transaction whose BEGIN cannot reach the server fails at once, with nothing unhandled', async (t) => {
  const unhandled: unknown[] = []
  const record = (reason: unknown) => { unhandled.push(reason) }
  process.on('unhandledRejection', record)
  t.teardown(() => { process.off('unhandledRejection', record) })

  // Nothing listens on this port.
  const port = await freePort()
  const raw = new PostgresStorageAdapter({ uri: `postgres://postgres:x@127.0.0.1:${port}/parse`, collectionPrefix: '', databaseOptions: { connectionTimeoutMillis: 2_000 } })
  const notices: string[] = []
  const availability = watchAvailability({ probe: () => Promise.reject(new Error('not probed here')), onNotice: (line) => notices.push(line) })
  t.teardown(() => availability.close())
  const adapter = wrapAdapter(raw, 'postgres', availability) as unknown as { createTransactionalSession (): Promise<unknown> }

  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    adapter.createTransactionalSession().then(() => 'opened', (error: unknown) => error),
    new Promise((resolve) => { timer = setTimeout(() => resolve('still waiting after 10 s (scaled)'), scaled(10_000)) })
  ])
  clearTimeout(timer)
  t.type(outcome, DatabaseUnavailableError, 'the caller gets DatabaseUnavailableError (503), not a hang')
  await new Promise((resolve) => setTimeout(resolve, 100)) // let any stray rejection surface
  t.same(unhandled, [], 'no promise rejected unhandled')
  t.equal(availability.reachable, false, 'the outage is noted')
  t.match(notices.join('\n'), /the database cannot be reached \(connection refused\)/, 'in one log line')
  ;(raw as unknown as { _client: { $pool: { end (): Promise<void> } } })._client.$pool.end().catch(() => {})
})

/** An availability watch whose probe answers while `answering` is true, counting its probes. */
function probedDatabase (t: Test) {
  const state = { answering: true, probes: 0, notices: [] as string[] }
  const availability = watchAvailability({
    probe: async () => { state.probes++; if (!state.answering) throw coded('ECONNREFUSED') },
    onNotice: (line) => state.notices.push(line)
  })
  t.teardown(() => availability.close())
  return Object.assign(state, { availability })
}

t.test('a call with no answer in time makes the kit probe; only a failed probe marks the database unreachable', async (t) => {
  const database = probedDatabase(t)
  const { availability, notices } = database
  await availability.check() // a fresh answer, which a suspicion does not rely on
  availability.suspect(new CallTimeoutError(1_000))
  t.ok(availability.reachable, 'still reachable while the probe runs')
  t.ok(availability.inDoubt, 'but in doubt (a failed file read then answers 503, not 404)')
  await until('the probe', () => database.probes === 2)
  await availability.check()
  t.ok(availability.reachable, 'a probe that answers keeps the database reachable: the slow call failed alone')
  t.notOk(availability.inDoubt, 'and ends the doubt')
  t.same(notices, [])
  database.answering = false
  availability.suspect(new CallTimeoutError(1_000))
  await until('the outage to be noted', () => !availability.reachable)
  t.match(notices, [/the database cannot be reached \(connection refused\)/], 'a failed probe is an outage, in one line')
  t.ok(isNoAnswerInTime(new CallTimeoutError(5)) && isNoAnswerInTime(new Error('Query read timeout')), 'timeouts are suspicions')
  t.notOk(isNoAnswerInTime(coded('ECONNREFUSED')), 'a refused connection is an outage at once')
})

t.test('a call that found no free pooled connection in time: busy while the database answers a probe, an outage when it does not', async (t) => {
  const database = probedDatabase(t)
  const { availability, notices } = database
  const waited = (error: unknown) => (outage(error, availability) as Promise<never>).then(() => undefined, (failed: unknown) => failed)
  /** Longer than an answer of the probe counts as fresh for this decision. */
  const stale = () => sleep(1_100)

  await availability.check()
  let before = database.probes
  const fresh = await waited(new ConnectionWaitError(1_000))
  t.type(fresh, DatabaseBusyError, 'the probe answered within the last second: busy at once')
  t.match(fresh, { code: DATABASE_BUSY, statusCode: 503 })
  t.equal(database.probes, before, 'without asking again')

  await stale()
  before = database.probes
  const poolWait = new Error('timeout exceeded when trying to connect')
  t.ok(isWaitForConnection(poolWait) && isDatabaseUnavailable(poolWait), 'pg-pool\'s own wait is a wait for a connection')
  t.type(await waited(poolWait), DatabaseBusyError, 'no recent answer: busy once a fresh probe answers')
  t.equal(database.probes, before + 1, 'one probe asked')
  t.ok(availability.reachable && !availability.inDoubt, 'the database stays up')
  t.notOk(isWaitForConnection(new CallTimeoutError(1_000)), 'a statement with no answer is not a wait for a connection')
  t.same(notices, [], 'no outage line')

  database.answering = false
  await stale()
  t.type(await waited(new ConnectionWaitError(1_000)), DatabaseUnavailableError, 'no answer to the probe either: an outage (5003)')
  t.notOk(availability.reachable, 'marked down')
  t.match(notices, [/the database cannot be reached \(connection refused\)/])
  t.type(await waited(new ConnectionWaitError(1_000)), DatabaseUnavailableError, 'and while it is down, 5003 at once')
})

// The `tracing` option with an in-memory span exporter: one declared call gives
// @fastify/otel's request span, the kit's span for the function (named after it),
// its transaction as a child, and the database calls (@opentelemetry/instrumentation-pg,
// registered by the application as usual) as children of the transaction.
// Spans go through the kit's redactingSpanExporter, and a login, a session
// lookup and a sign-up leave no secret in any of them.
import t from 'tap'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'

// As an application sets up OpenTelemetry: before the modules it instruments are loaded.
const exporter = new InMemorySpanExporter()
const { redactingSpanExporter } = await import('../lib/host/span-redaction.js')
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(redactingSpanExporter(exporter))] })
provider.register()
registerInstrumentations({ instrumentations: [new PgInstrumentation()] })
t.teardown(() => provider.shutdown())

const { BaseModel, CloudFunction, Job, ParseClass, ParseField, Route, withTransaction } = await import('../lib/index.js')
const { appHeaders, lane, masterHeaders, startKit } = await import('./helpers/kit.js')
const { default: Parse } = await import('parse/node')

@ParseClass('Traced')
class Traced extends BaseModel {
  @ParseField({ type: 'Number' }) declare n: number
}

@Route('traced')
class TracedFunctions {
  @CloudFunction({ methods: ['POST'] })
  static async record () {
    return withTransaction(async () => {
      const saved = await new Traced({ n: 1 }).save(null, { useMasterKey: true })
      return { id: saved.id, count: await new Parse.Query(Traced).equalTo('n', 1).count({ useMasterKey: true }) }
    })
  }

  @CloudFunction({ methods: ['POST'] })
  static refuse (): never {
    throw new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'no such record')
  }

  @CloudFunction({ methods: ['POST'] })
  static refuseLater () {
    return withTransaction(async () => { throw new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'gone meanwhile') })
  }

  @CloudFunction({ methods: ['POST'] })
  static constant () {
    return { answer: 42 }
  }
}
void TracedFunctions

class TracedJobs {
  /** Saves a row, then fails: its run is one span, with the save inside it. */
  @Job()
  static async tracedJob () {
    await new Traced({ n: 2 }).save(null, { useMasterKey: true })
    throw new Error('the traced job failed')
  }
}
void TracedJobs

t.test('one declared call: request, function, transaction and database spans, parent to child', { skip: lane.kind !== 'postgres' ? 'the pg instrumentation traces PostgreSQL' : false }, async (t) => {
  const kit = await startKit(t, { tracing: true, allowAuthRoutes: true })
  exporter.reset()
  const answer = await kit.request('POST', '/parse/traced/record', { headers: appHeaders, body: {} })
  t.equal(answer.status, 200, answer.text)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const spans = exporter.getFinishedSpans()
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
  const ancestors = (span: ReadableSpan): ReadableSpan[] => {
    const parent = byId.get(parentOf(span) ?? '')
    return parent ? [parent, ...ancestors(parent)] : []
  }

  const fn = spans.find((span) => span.name === 'fpk.function record')
  t.ok(fn, `the function's span, named after it (spans: ${spans.map((s) => s.name).join(', ')})`)
  t.equal(fn?.attributes['fpk.function.name'], 'record')
  const outermost = fn && ancestors(fn).at(-1)
  t.equal(outermost?.instrumentationScope.name, '@fastify/otel', 'inside @fastify/otel\'s spans for the request')
  t.equal(outermost && parentOf(outermost), undefined, 'whose request span is the root')

  const transaction = spans.find((span) => span.name === 'fpk.transaction')
  t.equal(transaction && parentOf(transaction), fn?.spanContext().spanId, 'the transaction is a child of the function')
  t.equal(transaction?.attributes['fpk.transaction.max_attempts'], 3)

  const database = spans.filter((span) => span.instrumentationScope.name.includes('instrumentation-pg'))
  t.ok(database.length > 0, 'database calls are traced')
  const insert = database.find((span) => /INSERT/i.test(String(span.attributes['db.statement'] ?? span.attributes['db.query.text'] ?? span.name)))
  t.ok(insert, `the insert has a span (${database.map((s) => s.name).join(', ')})`)
  t.ok(insert && ancestors(insert).includes(transaction!), 'the insert is a descendant of the transaction')
  t.same(new Set([fn, transaction, insert].map((span) => span?.spanContext().traceId)).size, 1, 'all in one trace')

  // A function that throws at once, one whose transaction rejects, and one that answers without a promise.
  exporter.reset()
  t.equal((await kit.request('POST', '/parse/traced/refuse', { headers: appHeaders, body: {} })).json.code, 101)
  t.equal((await kit.request('POST', '/parse/traced/refuseLater', { headers: appHeaders, body: {} })).json.code, 101)
  t.same((await kit.request('POST', '/parse/traced/constant', { headers: appHeaders, body: {} })).json, { answer: 42 })
  await new Promise((resolve) => setTimeout(resolve, 200))
  const finished = exporter.getFinishedSpans()
  for (const [name, message] of [['fpk.function refuse', 'no such record'], ['fpk.function refuseLater', 'gone meanwhile'], ['fpk.transaction', 'gone meanwhile']]) {
    const span = finished.find((s) => s.name === name)
    t.equal(span?.status.code, 2, `${name}: status ERROR`)
    t.equal(span?.status.message, message)
    t.ok(span?.events.some((event) => event.name === 'exception'), `${name}: the exception is recorded`)
  }
  t.equal(finished.find((s) => s.name === 'fpk.function constant')?.status.code, 0, 'a synchronous answer ends its span unset (no error)')

  // A sign-up, a login by GET (password in the query string) and by POST, and a session lookup.
  exporter.reset()
  const password = 'Secret-Pass-4821'
  const signUp = await kit.request('POST', '/parse/users', { headers: appHeaders, body: { username: 'traced-user', password, email: 'traced@example.com' } })
  t.equal(signUp.status, 201, signUp.text)
  const byGet = await kit.request('GET', `/parse/login?username=traced-user&password=${password}`, { headers: appHeaders })
  t.equal(byGet.status, 200, byGet.text)
  const byPost = await kit.request('POST', '/parse/login', { headers: appHeaders, body: { username: 'traced-user', password } })
  t.equal(byPost.status, 200, byPost.text)
  const me = await kit.request('GET', '/parse/users/me', { headers: { ...appHeaders, 'X-Parse-Session-Token': byPost.json.sessionToken } })
  t.equal(me.status, 200, me.text)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const authSpans = exporter.getFinishedSpans()
  const tokens = [signUp.json.sessionToken, byGet.json.sessionToken, byPost.json.sessionToken]
  const statements = authSpans.map((span) => String(span.attributes['db.statement'] ?? span.attributes['db.query.text'] ?? '')).filter(Boolean)
  t.ok(statements.some((sql) => /"_Session"/.test(sql) && /"sessionToken"/.test(sql)), 'the session lookup is traced')
  t.ok(statements.some((sql) => /INSERT/i.test(sql) && /_hashed_password/.test(sql)), 'the sign-up\'s insert is traced')
  t.ok(authSpans.some((span) => String(span.attributes['url.path']).startsWith('/parse/login?')), 'the GET login is traced')
  for (const span of authSpans) {
    const text = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events })
    for (const secret of [password, ...tokens]) {
      if (text.includes(secret)) t.fail(`span ${span.name} carries ${secret.slice(0, 6)}…: ${text}`)
    }
    if (/\$2[aby]\$\d\d\$/.test(text)) t.fail(`span ${span.name} carries a password hash: ${text}`)
  }
  t.pass(`${authSpans.length} spans scanned`)

  // A job run is one span, failed with the job's error, with its database work inside.
  exporter.reset()
  const started = await kit.request('POST', '/parse/jobs/tracedJob', { headers: masterHeaders, body: {} })
  t.equal(started.status, 200, started.text)
  const jobId = started.headers.get('x-parse-job-status-id')
  let job: ReadableSpan | undefined
  for (let i = 0; i < 200 && !job; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    job = exporter.getFinishedSpans().find((span) => span.name === 'fpk.job tracedJob')
  }
  t.ok(job, 'the run\'s span, named after the job')
  t.equal(job?.attributes['fpk.job.id'], jobId)
  t.equal(job?.status.code, 2, 'status ERROR')
  t.equal(job?.status.message, 'the traced job failed')
  const jobSpans = exporter.getFinishedSpans()
  const jobById = new Map(jobSpans.map((span) => [span.spanContext().spanId, span]))
  const within = (span: ReadableSpan): boolean => {
    const parent = jobById.get(span.parentSpanContext?.spanId ?? '')
    return parent === job || (parent !== undefined && within(parent))
  }
  t.ok(jobSpans.some((span) => span.instrumentationScope.name.includes('instrumentation-pg') && within(span)), 'its database calls are inside it')
})

t.test('without the option the kit adds no spans of its own', { skip: lane.kind !== 'postgres' ? 'runs on PostgreSQL' : false }, async (t) => {
  const kit = await startKit(t)
  exporter.reset()
  t.equal((await kit.request('POST', '/parse/traced/record', { headers: appHeaders, body: {} })).status, 200)
  t.same(exporter.getFinishedSpans().filter((span) => span.name.startsWith('fpk.')).map((span) => span.name), [], 'no fpk.* spans')
})

t.test('a MongoDB statement recorded with its values (enhancedDatabaseReporting) loses them when it names a secret field', async (t) => {
  const { redactSpanAttributes } = await import('../lib/host/span-redaction.js')
  const find = redactSpanAttributes({ 'db.statement': '{"find":"_Session","filter":{"_session_token":"r:abc123","user":{"$in":["a\\"b"]}},"limit":1}' })
  t.notMatch(find['db.statement'], /r:abc123|a\\"b/, 'no value is left')
  t.same(JSON.parse(find['db.statement']), { find: '[redacted]', filter: { _session_token: '[redacted]', user: { $in: ['[redacted]'] } }, limit: 1 }, 'the statement keeps its shape (and stays JSON)')
  const other = '{"find":"Note","filter":{"title":"hello"}}'
  t.equal(redactSpanAttributes({ 'db.statement': other })['db.statement'], other, 'other statements keep their values')
})

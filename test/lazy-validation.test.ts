// Declared routes compile their input schemas on first use (boot stays cheap with
// many functions): validation must stay exactly what Fastify's own compile gave —
// the entity route and its /functions twin answer alike, for the function whose
// route Fastify compiled at boot and for those compiled later — and a schema error
// is still refused before the server runs (response schemas, compiled at boot once
// per schema object: lib/routing/shared-serializers.ts).
import t from 'tap'
import { rmSync } from 'node:fs'
import Parse from 'parse/node'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { CloudFunction, Route, type CloudRequest } from '../lib/index.js'
import { kitPlugin } from '../plugin.js'
import { resetKitConfig } from '../lib/config.js'
import { APP_ID, MASTER_KEY, masterHeaders, startKit, tempDir } from './helpers/kit.js'
import { clusterFromTemplate } from './helpers/pg-template.js'

const fields = {
  title: { type: String, required: true },
  count: { type: Number },
  flag: { type: Boolean },
  status: { type: String, options: ['draft', 'published'] },
  level: { type: Number, default: 3 }
} as const

const echo = (request: CloudRequest) => ({ params: request.params, types: Object.fromEntries(Object.entries(request.params).map(([k, v]) => [k, typeof v])) })

@Route('checks')
export class Checks {
  // Declared first: the one route Fastify compiles itself at boot.
  @CloudFunction({ validation: { fields } })
  static first (request: CloudRequest) { return echo(request) }

  @CloudFunction({ validation: { fields } })
  static later (request: CloudRequest) { return echo(request) }

  @CloudFunction({ methods: ['GET'], validation: { fields } })
  static read (request: CloudRequest) { return echo(request) }
}

t.test('entity route and twin validate alike, whether compiled at boot or on first call', async (t) => {
  const kit = await startKit(t)
  const call = (method: string, url: string, body?: unknown) => kit.request(method, url, { headers: masterHeaders, ...(body === undefined ? {} : { body }) })

  for (const name of ['first', 'later']) {
    const answers = []
    for (const url of [`/parse/checks/${name}`, `/parse/functions/${name}`]) {
      const ok = await call('POST', url, { title: 't', count: 5, flag: true, status: 'draft', extra: 'kept' })
      t.equal(ok.status, 200, ok.text)
      const result = url.includes('/functions/') ? ok.json.result : ok.json
      t.same(result.params, { title: 't', count: 5, flag: true, status: 'draft', extra: 'kept', level: 3 }, `${url}: defaulted, undeclared kept`)
      // A JSON body has types: a wrong one is refused naming the field, never converted.
      for (const [field, value] of [['count', '5'], ['flag', 'true'], ['title', 12345], ['title', null]] as const) {
        const converted = await call('POST', url, { title: 't', [field]: value })
        t.equal(converted.status, 400, `${url} ${field}=${JSON.stringify(value)}: ${converted.text}`)
        t.match(converted.json, { code: Parse.Error.VALIDATION_ERROR, error: new RegExp(`body/${field} must be`) })
      }
      const missing = await call('POST', url, { count: 1 })
      const badEnum = await call('POST', url, { title: 't', status: 'gone' })
      const badType = await call('POST', url, { title: 't', count: 'many' })
      for (const refused of [missing, badEnum, badType]) {
        t.equal(refused.status, 400, refused.text)
        t.equal(refused.json.code, Parse.Error.VALIDATION_ERROR)
      }
      t.match(missing.json.error, /title/)
      t.equal(badEnum.json.error, 'body/status must be one of draft, published', 'an enum refusal names the allowed values')
      answers.push([missing.json, badEnum.json, badType.json])
    }
    t.same(answers[0], answers[1], `${name}: the twin refuses with the same answers as the entity route`)
  }

  const query = await call('GET', '/parse/checks/read?title=q&count=2&flag=false')
  const twin = await call('GET', '/parse/functions/read?title=q&count=2&flag=false')
  t.same(query.json.params, { title: 'q', count: 2, flag: false, level: 3 }, 'query strings are coerced too')
  t.same(twin.json.result.params, query.json.params)
  const badQuery = await call('GET', '/parse/checks/read?count=2')
  const badTwin = await call('GET', '/parse/functions/read?count=2')
  t.equal(badQuery.status, 400)
  t.same(badTwin.json, badQuery.json)
})

t.test('field options that would make a broken schema are refused at import', async (t) => {
  const declare = (field: object) => () => CloudFunction({ validation: { fields: { f: field } } } as never)(class Owner {}, 'fn', { value: () => {} } as never)
  t.throws(declare({ type: String, options: ['a', 'b', 'a'] }), /validation\.fields\.f\.options" lists "a" twice/)
  t.throws(declare({ type: String, description: 5 }), /validation\.fields\.f\.description" must be text/)
})

t.test('a malformed response schema still fails boot', async (t) => {
  // After the first kit has closed (one kit per process), with a function declared for this boot only.
  // A sound response schema first: Fastify compiles that one itself, the broken one goes through the kit's shared compiler.
  class Broken {}
  CloudFunction({ returns: Type.Object({ ok: Type.Boolean() }) })(Broken, 'sound', { value: () => ({ ok: true }) } as never)
  CloudFunction({ returns: Type.Unsafe({ type: 'nonsense' }) })(Broken, 'broken', { value: () => ({}) } as never)
  Route('broken')(Broken)
  resetKitConfig()
  const dir = tempDir()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true }) // its database, once closed
  })
  await t.rejects(
    (async () => {
      await clusterFromTemplate(`${dir}/postgres`)
      await app.register(kitPlugin, { appId: APP_ID, masterKey: MASTER_KEY, dataDir: `${dir}/postgres`, ephemeralDatabase: true })
      await app.ready()
    })(),
    /serialization schema .*broken/
  )
})

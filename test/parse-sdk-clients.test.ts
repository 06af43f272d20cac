// What Parse JavaScript SDK clients get through the kit, with every route opened
// as an SDK application would (allowAuthRoutes, allowedRoutes /*): the SDK runs in
// a child process and speaks real HTTP, so directAccess never routes it in process.
import t from 'tap'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, Type, type CloudRequest } from '../lib/index.js'
import { APP_ID, MASTER_KEY, appHeaders, lane, masterHeaders, startKit, tempDir, type Kit } from './helpers/kit.js'
import { mongoReplicaSet } from './helpers/mongo.js'
import { copyTemplateCluster } from './helpers/pg-template.js'

const here = path.dirname(fileURLToPath(import.meta.url))

@ParseClass('SdkMemo')
class SdkMemo extends BaseModel {
  @ParseField({ type: 'String' }) declare text: string
  @ParseField({ type: 'Date' }) declare due: Date
}

const SdkMemoJSON = Type.Object({ objectId: Type.String(), text: Type.String(), createdAt: Type.String({ format: 'date-time' }) })

class SdkFunctions {
  @CloudFunction({ returns: SdkMemoJSON, validation: { fields: { text: { type: String, required: true } } } })
  static async makeSdkMemo (request: CloudRequest) {
    return new SdkMemo({ text: request.params.text }).save(null, { useMasterKey: true })
  }
}

// Dates in params: `when` declared, `also` and `nested` not. The answer says what the handler got, and hands `when` back.
@Route('sdk-dates')
class DateFunctions {
  @CloudFunction({ validation: { fields: { when: { type: Date, required: true } } } })
  static async sdkDates (request: CloudRequest<{ when: Date, also?: unknown, nested?: { at: unknown, list: unknown[] } }>) {
    const { when, also, nested } = request.params
    const isDate = (value: unknown) => value instanceof Date
    return { whenIsDate: isDate(when), when: when.toISOString(), alsoIsDate: isDate(also), nestedIsDate: isDate(nested?.at) && isDate(nested?.list[0]), echo: when }
  }

  // `returns` gives `due` as ISO text: the saved object's toJSON() has it in Parse's encoding.
  @CloudFunction({ returns: Type.Object({ objectId: Type.String(), due: Type.String({ format: 'date-time' }) }), validation: { fields: { when: { type: Date, required: true } } } })
  static async sdkDatedMemo (request: CloudRequest<{ when: Date }>) {
    return new SdkMemo({ text: 'dated', due: request.params.when }).save(null, { useMasterKey: true })
  }
}

async function sdk (kit: Kit, scenario: string, sessionToken = ''): Promise<any> {
  const args = [path.join(here, 'helpers', 'sdk-scenario.mjs'), `${kit.origin}/parse`, APP_ID, MASTER_KEY, scenario, sessionToken]
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 120_000 })
  return JSON.parse(stdout)
}

t.test('Parse SDK clients', async (t) => {
  // A database of the test's own, so that the last subtest can restart the server on it.
  const dataDir = path.join(tempDir(), 'postgres')
  const mongo = lane.kind === 'mongo' ? await mongoReplicaSet(t) : undefined
  if (!mongo) await copyTemplateCluster(dataDir)
  const options = {
    dataDir,
    ...(mongo ? { databaseURI: mongo.uri } : {}),
    models: [SdkMemo],
    functions: [SdkFunctions, DateFunctions],
    allowAuthRoutes: true,
    allowedRoutes: [{ path: '/*' }],
    parseServerOptions: {
      cloud: (parse: typeof Parse) => {
        parse.Cloud.job('tally', async () => 'counted')
      }
    }
  }
  let kit = await startKit(t, options)
  const user = await kit.signUp('sdk-client')
  // A class created at run time, not declared (Parse refuses class creation to clients by default: allowClientClassCreation).
  const note = await kit.request('POST', '/parse/classes/SdkNote', { headers: masterHeaders, body: { first: 1 } })
  t.equal(note.status, 201, note.text)

  t.test('Parse.Cloud.startJob answers the job status id, and the status can be read', async (t) => {
    const answer = await sdk(kit, 'startJob')
    t.ok(answer.ok, JSON.stringify(answer))
    t.type(answer.id, 'string', 'the id came through X-Parse-Job-Status-Id')
    t.equal(answer.status, 'succeeded')
    // The header the SDK needs is exposed without Origin too (a Node client sends none).
    const raw = await kit.request('POST', '/parse/jobs/tally', { headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY }, body: {} })
    t.ok(raw.headers.get('x-parse-job-status-id'))
    t.match(raw.headers.get('access-control-expose-headers'), /X-Parse-Job-Status-Id/)
  })

  t.test('byte-array and base64 uploads with credentials in the body are admitted as Parse admits them', async (t) => {
    const answer = await sdk(kit, 'uploads', user.token)
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer.bytes, /\/parse\/files\/test-app\/.*bytes\.txt$/)
    t.equal(answer.content, 'hello', 'the base64 upload stored its bytes')
    const upload = (body: unknown) => kit.request('POST', '/parse/files/raw.txt', { body, contentType: 'text/plain' })
    const base64 = Buffer.from('raw').toString('base64')
    const withMaster = await upload({ base64, _ApplicationId: APP_ID, _MasterKey: MASTER_KEY })
    t.equal(withMaster.status, 201, withMaster.text)
    const withSession = await upload({ base64, _ApplicationId: APP_ID, _SessionToken: user.token })
    t.equal(withSession.status, 201, withSession.text)
    const anonymous = await upload({ base64 })
    t.equal(anonymous.status, 403, 'no application id: refused')
    // As with Parse alone: a wrong master key is no master key, and public uploads are off by default.
    for (const body of [{ base64, _ApplicationId: APP_ID, _MasterKey: 'wrong' }, { base64, _ApplicationId: APP_ID }]) {
      const refused = await upload(body)
      t.match({ status: refused.status, ...refused.json }, { status: 400, code: Parse.Error.FILE_SAVE_ERROR, error: /public is disabled/ }, JSON.stringify(body))
    }
    const oversized = await upload({ base64: 'A'.repeat(1024 * 1024 + 16), _ApplicationId: APP_ID, _MasterKey: MASTER_KEY })
    t.equal(oversized.status, 413, 'bounded by the body limit')
  })

  t.test('a streaming upload with header credentials stays a stream', async (t) => {
    const response = await fetch(`${kit.origin}/parse/files/streamed.bin`, {
      method: 'POST',
      headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY, 'x-parse-upload-mode': 'stream', 'content-type': 'application/octet-stream' },
      body: Buffer.from([0, 1, 2, 3])
    })
    t.equal(response.status, 201, await response.clone().text())
    const { url } = await response.json() as { url: string }
    const read = await fetch(url.replace(/^https?:\/\/[^/]+/, kit.origin))
    t.same([...Buffer.from(await read.arrayBuffer())], [0, 1, 2, 3])
  })

  t.test('a copied Parse.File saves: the server\'s own host is an allowed file URL domain', async (t) => {
    const answer = await sdk(kit, 'copyFile')
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer.url, /^http:\/\/127\.0\.0\.1:\d+\/parse\/files\//)
    const elsewhere = await kit.request('POST', '/parse/classes/Holder', {
      headers: { ...appHeaders, 'x-parse-master-key': MASTER_KEY },
      body: { doc: { __type: 'File', name: 'x.txt', url: 'http://elsewhere.example/x.txt' } }
    })
    t.equal(elsewhere.status, 400, 'another host stays refused')
    t.equal(elsewhere.json?.code, Parse.Error.FILE_SAVE_ERROR)
  })

  t.test('Parse.Cloud.run of a function with returns gives a Parse.Object', async (t) => {
    const answer = await sdk(kit, 'cloudRunObject')
    t.ok(answer.ok, JSON.stringify(answer))
    t.match(answer, { isParseObject: true, className: 'SdkMemo', text: 'from the SDK', createdAt: true })
    t.type(answer.id, 'string')
  })

  t.test('Parse.Cloud.run with JS Dates: a declared Date param and undeclared ones reach the handler as Dates', async (t) => {
    const answer = await sdk(kit, 'cloudRunDates')
    t.match(answer, { ok: true, whenIsDate: true, when: '2026-12-24T10:00:00.000Z', alsoIsDate: true, nestedIsDate: true }, JSON.stringify(answer))
    t.equal(answer.echoIsDate, true, 'a returned Date comes back to Parse.Cloud.run as a Date ({__type: "Date", iso} on /functions, as Parse answers)')
    const iso = '2026-12-24T10:00:00.000Z'
    const twin = await kit.request('POST', '/parse/functions/sdkDates', { headers: appHeaders, body: { when: iso, also: { __type: 'Date', iso } } })
    t.match(twin.json, { result: { whenIsDate: true, when: iso, alsoIsDate: true, echo: { __type: 'Date', iso } } }, 'REST: ISO text for the declared field is a Date too')
    const entity = await kit.request('POST', '/parse/sdk-dates/sdkDates', { headers: appHeaders, body: { when: { __type: 'Date', iso } } })
    t.match(entity.json, { whenIsDate: true, when: iso, echo: iso }, 'the entity route (plain JSON) answers a Date as ISO text')
    for (const url of ['/parse/sdk-dates/sdkDatedMemo', '/parse/functions/sdkDatedMemo']) {
      const dated = await kit.request('POST', url, { headers: appHeaders, body: { when: iso } })
      t.equal(dated.status, 200, dated.text)
      t.equal((dated.json.result ?? dated.json).due, iso, `${url}: a Date field \`returns\` gives as ISO text is ISO text, not a 500`)
    }
    for (const when of ['not a date', { __type: 'Date', iso: 'not a date' }, 12]) {
      const refused = await kit.request('POST', '/parse/functions/sdkDates', { headers: appHeaders, body: { when } })
      t.match({ status: refused.status, ...refused.json }, { status: 400, code: Parse.Error.VALIDATION_ERROR, error: /when/ }, JSON.stringify(when))
    }
    // Params nested as deep as the body limit allows are walked without recursion: never a 500 (it was a stack overflow).
    const deep = `${'['.repeat(200_000)}{"__type":"Date","iso":"${iso}"}${']'.repeat(200_000)}`
    for (const url of ['/parse/functions/sdkDates', '/parse/sdk-dates/sdkDates']) {
      const nested = await kit.request('POST', url, { headers: appHeaders, body: `{"when":"${iso}","also":${deep}}` })
      t.equal(nested.status, 200, `${url}: ${nested.text.slice(0, 200)}`)
    }
  })

  // Last: the server restarts on the same database (its second Defined Schemas migration).
  t.test('after a restart, clients still add fields where Parse alone lets them; declared classes stay closed', async (t) => {
    const before = await sdk(kit, 'newFields')
    t.match(before, { ok: true, signUp: 'saved', note: 'saved', memo: Parse.Error.OPERATION_FORBIDDEN }, 'first boot')
    await kit.app.close()
    kit = await startKit(t, options)
    const after = await sdk(kit, 'newFields')
    t.match(after, { ok: true, signUp: 'saved', phone: '555-0100', note: 'saved' }, 'a sign-up with a new field and a new field on an undeclared class: 201, as on Parse alone')
    t.equal(after.memo, Parse.Error.OPERATION_FORBIDDEN, 'a declared class keeps addField closed')
    const addField = async (className: string) => (await kit.request('GET', `/parse/schemas/${className}`, { headers: masterHeaders })).json?.classLevelPermissions?.addField
    for (const className of ['_User', '_Session', '_Role', 'SdkNote']) t.same(await addField(className), { '*': true }, `${className}: addField as Parse gives it`)
    t.same(await addField('SdkMemo'), {}, 'SdkMemo (declared): addField closed')
  })
})

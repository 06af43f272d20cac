// Parse JavaScript SDK scenarios against a running server, in a process of their own
// (an SDK client in the server's process would share Parse's global state and
// take the in-process path). Several scenarios run one after the other in one
// process (each process pays for loading Node and the SDK). Prints one JSON line:
// { [scenario]: { ok, ...result } or { ok: false, code, message } }.
// argv: serverURL appId masterKey scenario[,scenario…] [sessionToken]
// The session token is for `uploads` alone; `newFields` signs a user up (the SDK's
// current user from then on), so it goes last.
import Parse from 'parse/node'

const [serverURL, appId, masterKey, names, sessionToken] = process.argv.slice(2)
Parse.initialize(appId, undefined, masterKey)
Parse.serverURL = serverURL
const master = { useMasterKey: true }

const scenarios = {
  /** Parse.Cloud.startJob answers the job status id (read from a response header), and the status can be read. */
  async startJob () {
    const id = await Parse.Cloud.startJob('tally', {})
    if (typeof id !== 'string') return { id: id ?? null }
    let status
    for (let i = 0; i < 200; i++) {
      status = (await Parse.Cloud.getJobStatus(id)).get('status')
      if (status === 'succeeded' || status === 'failed') break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return { id: id ?? null, status }
  },
  /** A byte-array file with the master key in the body, a base64 file with a session token in the body. */
  async uploads () {
    const bytes = await new Parse.File('bytes.txt', [104, 105]).save(master)
    const base64 = await new Parse.File('base64.txt', { base64: Buffer.from('hello').toString('base64') }).save({ sessionToken })
    // Read back through the server under test (file URLs carry the configured serverURL's origin).
    const read = await fetch(base64.url().replace(/^https?:\/\/[^/]+\/parse/, serverURL))
    return { bytes: bytes.url(), base64: base64.url(), content: await read.text() }
  },
  /** A saved Parse.File set on a second object: Parse checks the URL's host against allowedFileUrlDomains. */
  async copyFile () {
    const file = await new Parse.File('copied.txt', [1, 2, 3]).save(master)
    const first = await new Parse.Object('Holder', { doc: file }).save(null, master)
    const fetched = await new Parse.Query('Holder').get(first.id, master)
    const second = await new Parse.Object('Holder', { doc: fetched.get('doc') }).save(null, master)
    return { first: first.id, second: second.id, url: second.get('doc').url() }
  },
  /**
   * New fields from a client, as an SDK application sends them: a sign-up with a field _User lacks,
   * a save of an undeclared class (SdkNote) with a new field, and one on a declared class (SdkMemo).
   */
  async newFields () {
    const user = new Parse.User()
    user.set({ username: `phone-${Date.now()}-${Math.random()}`, password: 'phone-password-1', phone: '555-0100' })
    const outcome = async (save) => save.then(() => 'saved', (error) => error.code)
    const signUp = await outcome(user.signUp())
    const note = await outcome(new Parse.Object('SdkNote', { [`added${Date.now()}`]: 1 }).save())
    const memo = await outcome(new Parse.Object('SdkMemo', { text: 'x', undeclared: 1 }).save())
    return { signUp, phone: user.get('phone'), note, memo }
  },
  /** Parse.Cloud.run with JS Dates (the SDK sends them as {__type: 'Date', iso}): one declared param, two not. */
  async cloudRunDates () {
    const when = new Date('2026-12-24T10:00:00.000Z')
    const answer = await Parse.Cloud.run('sdkDates', { when, also: when, nested: { at: when, list: [when] } })
    return { ...answer, echo: undefined, echoIsDate: answer.echo instanceof Date }
  },
  /** Parse.Cloud.run of a function declared with `returns` that answers a Parse.Object. */
  async cloudRunObject () {
    const memo = await Parse.Cloud.run('makeSdkMemo', { text: 'from the SDK' })
    return { isParseObject: memo instanceof Parse.Object, className: memo.className, id: memo.id, text: memo.get('text'), createdAt: memo.createdAt instanceof Date }
  }
}

const answers = {}
for (const scenario of names.split(',')) {
  try {
    answers[scenario] = { ok: true, ...await scenarios[scenario]() }
  } catch (error) {
    answers[scenario] = { ok: false, code: error.code, message: error.message }
  }
}
process.stdout.write(JSON.stringify(answers))

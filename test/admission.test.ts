// The admission decision of a declared route (lib/access/admission.ts), without
// Parse Server or a database: app id, client keys, the master-key verdict taken
// once, and the caller when no session has to be read. The same rules wired
// into a server: function-serving (was declared-admission), attack-admission (with restriction-defects).
import t, { type Test } from 'tap'
import Parse from 'parse/node'
import { Admission, Admitter, MASTER, NOBODY, UNAUTHORIZED, callerWithoutLookup, type AdmissionRules } from '../lib/access/admission.js'
import { KitError } from '../lib/errors.js'

const APP_ID = 'app'
const MASTER_KEY = 'master-secret'
const LOCAL = '127.0.0.1'
const REMOTE = '203.0.113.9'

/** Rules whose master-key address list counts its reads: one read per verdict taken with the right key. */
function countingRules (extra: Partial<AdmissionRules> = {}): { rules: AdmissionRules, ipsReads: () => number } {
  let reads = 0
  const ips = [LOCAL]
  const masterKey = { key: MASTER_KEY, get ips () { reads++; return ips } }
  return { rules: { appId: APP_ID, masterKey, ...extra }, ipsReads: () => reads }
}

const rules = (extra: Partial<AdmissionRules> = {}) => countingRules(extra).rules
const asking = (headers: Record<string, string>, ip = LOCAL, body?: unknown) => ({ headers, ip, body })
const app = { 'x-parse-application-id': APP_ID }

function admitted (t: Test, result: Admission | typeof UNAUTHORIZED | undefined, what: string): Admission {
  t.type(result, Admission, what)
  return result as Admission
}

function thrown (run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

t.test('the application id: a wrong header is refused before the body, a missing one leaves the body to decide', async (t) => {
  const admitter = new Admitter(rules())
  t.ok(admitter.refusesAppIdHeader({ 'x-parse-application-id': 'other' }))
  t.notOk(admitter.refusesAppIdHeader({}), 'no header: the body may name the application')
  t.notOk(admitter.refusesAppIdHeader(app))
  t.equal(admitter.fromHeaders(asking({ 'x-parse-application-id': 'other' })), UNAUTHORIZED)
  t.equal(admitter.fromHeaders(asking({})), undefined, 'headers without an app id: decided once the body is read')
  t.equal(admitter.admit(asking({})), UNAUTHORIZED, 'no app id anywhere')
  t.equal(admitter.admit(asking({}, LOCAL, { _ApplicationId: 'other' })), UNAUTHORIZED, 'a wrong app id in the body')
  const fromBody = admitted(t, admitter.admit(asking({}, LOCAL, { _ApplicationId: APP_ID, _SessionToken: 'r:1' })), 'the body names the application')
  t.equal(fromBody.credentials.sessionToken, 'r:1')
  const fromHeaders = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-session-token': 'r:2' })), 'the headers name the application')
  t.equal(fromHeaders.credentials.sessionToken, 'r:2')
  t.equal(fromHeaders.caller, undefined, 'the caller is named later (after a rate limit)')
})

t.test('client keys: with a REST API key configured it (or the master key) is required', async (t) => {
  const admitter = new Admitter(rules({ restApiKey: 'rest' }))
  t.equal(admitter.fromHeaders(asking(app)), UNAUTHORIZED, 'missing')
  t.equal(admitter.fromHeaders(asking({ ...app, 'x-parse-rest-api-key': 'nope' })), UNAUTHORIZED, 'wrong')
  admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-rest-api-key': 'rest' })), 'present')
  admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': MASTER_KEY })), 'the master key instead')
  t.equal(admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': MASTER_KEY }, REMOTE)), UNAUTHORIZED,
    'a master key from an address masterKeyIps does not list does not stand in for it')
  t.equal(admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': 'nope' })), UNAUTHORIZED, 'nor does a wrong one')
  const open = new Admitter(rules())
  admitted(t, open.fromHeaders(asking(app)), 'no key configured: the app id is enough')
  const js = new Admitter(rules({ clientKeys: { javascriptKey: 'js' } }))
  t.equal(js.admit(asking({}, LOCAL, { _ApplicationId: APP_ID })), UNAUTHORIZED, 'a javascript key configured, none sent')
  admitted(t, js.admit(asking({}, LOCAL, { _ApplicationId: APP_ID, _JavaScriptKey: 'js' })), 'the SDK\'s body key')
})

t.test('the master key: its verdict, and the caller or refusal it makes', async (t) => {
  const admitter = new Admitter(rules())
  const master = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': MASTER_KEY })), 'master key from an allowed address')
  t.equal(master.verdict, 'master')
  t.equal(callerWithoutLookup(master), MASTER)

  const far = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': MASTER_KEY }, REMOTE)), 'admitted: refused only once the caller is named')
  t.equal(far.verdict, 'address')
  const refusal = thrown(() => callerWithoutLookup(far))
  t.type(refusal, KitError)
  t.match(refusal, {
    code: Parse.Error.OPERATION_FORBIDDEN,
    statusCode: 403,
    message: `The master key is not accepted from ${REMOTE}: Parse Server option masterKeyIps does not include it`
  }, 'answered 403, as Parse does, naming the address')

  const wrong = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': 'nope' })), 'a wrong master key')
  t.equal(wrong.verdict, 'wrong')
  t.throws(() => callerWithoutLookup(wrong), { code: Parse.Error.OPERATION_FORBIDDEN, message: 'Invalid master key' })
})

t.test('no master key: nobody without a session, a lookup with one', async (t) => {
  const admitter = new Admitter(rules())
  const anonymous = admitted(t, admitter.fromHeaders(asking(app)), 'anonymous')
  t.equal(anonymous.verdict, 'absent')
  t.equal(callerWithoutLookup(anonymous), NOBODY)
  t.equal(NOBODY.master, false)
  const session = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-session-token': 'r:abc' })), 'with a session')
  t.equal(callerWithoutLookup(session), undefined, 'the session is read by session.ts')
})

t.test('the master-key verdict is taken once per request, however many steps read it', async (t) => {
  // Client keys configured: the key check, the caller and the rate limit's allow list all need the verdict.
  const { rules, ipsReads } = countingRules({ restApiKey: 'rest' })
  const admitter = new Admitter(rules)
  const admission = admitted(t, admitter.fromHeaders(asking({ ...app, 'x-parse-master-key': MASTER_KEY })), 'the master key stands in for the REST key')
  t.equal(ipsReads(), 1, 'one verdict while admitting')
  t.equal(callerWithoutLookup(admission), MASTER)
  t.equal(admission.verdict, 'master', 'what the rate limit\'s allow list reads')
  t.equal(ipsReads(), 1, 'naming the caller took no second verdict')

  // Refused on the app id: no verdict at all.
  t.equal(admitter.fromHeaders(asking({ 'x-parse-application-id': 'other', 'x-parse-master-key': MASTER_KEY })), UNAUTHORIZED)
  t.equal(admitter.admit(asking({ 'x-parse-master-key': MASTER_KEY }, LOCAL, { _ApplicationId: 'other' })), UNAUTHORIZED)
  t.equal(ipsReads(), 1, 'a wrong app id is refused before the master key is judged')
})

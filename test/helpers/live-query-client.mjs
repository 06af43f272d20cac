// A LiveQuery subscriber in its own process (an SDK client in the server's
// process would share Parse's global state). Prints one JSON line per event.
// argv: serverURL appId sessionToken className whereJSON
import Parse from 'parse/node'

const [serverURL, appId, sessionToken, className, where] = process.argv.slice(2)
Parse.initialize(appId)
Parse.serverURL = serverURL
Parse.liveQueryServerURL = serverURL.replace(/^http/, 'ws')
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n')

const query = new Parse.Query(className)
for (const [key, value] of Object.entries(JSON.parse(where))) query.equalTo(key, value)
// A refused subscription rejects (or reports later); either way it is printed as an error event.
process.on('unhandledRejection', (error) => print({ event: 'error', code: error?.code, message: error?.message ?? String(error) }))
let subscription
try {
  subscription = await query.subscribe(sessionToken)
} catch (error) {
  print({ event: 'error', code: error?.code, message: error?.message ?? String(error) })
  subscription = undefined
}
if (!subscription) await new Promise(() => {})
subscription.on('open', () => print({ event: 'open' }))
subscription.on('error', (error) => print({ event: 'error', code: error?.code, message: error?.message ?? String(error) }))
for (const event of ['create', 'update', 'enter', 'leave', 'delete']) {
  subscription.on(event, (object) => print({ event, object: object.toJSON() }))
}
process.on('SIGTERM', () => process.exit(0))

// Runs Parse.Cloud.run from the real `parse` JavaScript SDK in its own process
// (an SDK client in the server's process would share Parse's global state).
// argv: serverURL appId functionName paramsJSON [sessionToken]
import Parse from 'parse/node'

const [serverURL, appId, name, params, sessionToken] = process.argv.slice(2)
Parse.initialize(appId)
Parse.serverURL = serverURL
try {
  const result = await Parse.Cloud.run(name, JSON.parse(params), sessionToken ? { sessionToken } : {})
  const plain = result instanceof Parse.Object ? { className: result.className, ...result.toJSON() } : result
  process.stdout.write(JSON.stringify({ ok: true, result: plain }))
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, code: error.code, message: error.message }))
}

// Starts a job with the real `parse` JavaScript SDK in its own process
// (Parse.Cloud.startJob uses the master key), and, for the same job, reads the
// X-Parse-Job-Status-Id header of a plain POST: the SDK can only return the
// id when the server's CORS answer exposes that header.
// argv: serverURL appId masterKey jobName paramsJSON
import Parse from 'parse/node'

const [serverURL, appId, masterKey, name, params] = process.argv.slice(2)
Parse.initialize(appId, undefined, masterKey)
Parse.serverURL = serverURL
try {
  const id = await Parse.Cloud.startJob(name, JSON.parse(params))
  let headerId
  if (!id) {
    const response = await fetch(`${serverURL}/jobs/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-parse-application-id': appId, 'x-parse-master-key': masterKey },
      body: params
    })
    headerId = response.headers.get('x-parse-job-status-id') ?? undefined
  }
  process.stdout.write(JSON.stringify({ ok: true, id, headerId }))
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, code: error.code, message: error.message }))
}

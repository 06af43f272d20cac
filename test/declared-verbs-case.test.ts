// Two declared paths that differ only in case (`caseTwin`, `casetwin`): the kit's
// single refusal route cannot tell their loose spellings apart, so each keeps
// refusal routes of its own. Every verb on every spelling of both is pinned in a
// snapshot recorded from the per-path refusal routes (see declared-verbs.test.ts).
// Regenerate only when an answer is meant to change: `npx tap --snapshot test/declared-verbs-case.test.ts`.
import t from 'tap'
import { CloudFunction, Route } from '../lib/index.js'
import { APP_ID, startKit } from './helpers/kit.js'

@Route('cases')
class CaseTwinFunctions {
  @CloudFunction({ methods: ['GET'] })
  static caseTwin () { return { fn: 'caseTwin' } }

  @CloudFunction({ methods: ['POST'] })
  static casetwin () { return { fn: 'casetwin' } }
}

const VERBS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND']
const CALLERS: Array<[string, Record<string, string>]> = [['no credentials', {}], ['app id', { 'x-parse-application-id': APP_ID }]]

t.test('paths differing only in case keep their own answers', async (t) => {
  const kit = await startKit(t, { functions: [CaseTwinFunctions] })
  const urls = ['caseTwin', 'casetwin', 'CaseTwin', 'CASETWIN'].flatMap((name) => [
    `/parse/cases/${name}`, `/parse/cases/${name}/`, `/parse/functions/${name}`, `/parse/functions/${name}/`
  ])
  const answers: Record<string, string> = {}
  for (const url of urls) {
    for (const verb of VERBS) {
      for (const [caller, headers] of CALLERS) {
        const response = await kit.app.inject({ method: verb as 'GET', url, headers })
        const allow = response.headers.allow === undefined ? '' : `allow=${String(response.headers.allow)} `
        // A HEAD answer carries no body on the wire, whatever inject() hands back.
        answers[`${verb} ${url} [${caller}]`] = `${response.statusCode} ${allow}${verb === 'HEAD' ? '' : response.body}`
      }
    }
  }
  t.matchSnapshot(answers, 'answers')
})

// The {{jobName}} job (written by fpk g job {{Name}}). Parse runs it and records
// each run in _JobStatus (Parse Dashboard → Jobs → Job Status):
//   - by hand: Dashboard → Jobs → "Run now", or
//       curl -X POST http://127.0.0.1:1337/parse/jobs/{{jobName}} \
//         -H "X-Parse-Application-Id: $APP_ID" -H "X-Parse-Master-Key: $MASTER_KEY" \
//         -H 'Content-Type: application/json' -d '{"dryRun": true}'
//   - on a schedule: uncomment @Cron below (each tick runs on one instance only,
//     however many you run), or make one in the Dashboard ("Schedule a job").
//   - queued from a handler, trigger or job (kit option jobs: { queue: true },
//     PostgreSQL): await enqueue('{{jobName}}', { dryRun: false }) — inside a
//     transaction the job commits or rolls back with it; a failed run is retried
//     as a new run (retries below), on any instance.
import Parse from 'parse/node'
import { Job, type JobRequest } from '{{kit}}'
// import { Cron } from '{{kit}}'

export interface {{Name}}Params {
  /** Count what would change without changing it. */
  dryRun?: boolean
}

export class {{className}} {
  // @Cron('0 3 * * *') // every day at 03:00 UTC; add { timezone: 'Europe/Paris' } for local time
  @Job({ description: '{{Name}}: describe what it does', retries: 1, timeoutMs: 10 * 60_000 })
  static async {{jobName}} (request: JobRequest<{{Name}}Params>) {
    await request.message('started')
    // A job runs with no user: read and write with the master key, in batches,
    // and stop early when request.signal is aborted (timeout or shutdown).
    const count = await new Parse.Query('_Role').count({ useMasterKey: true })
    if (request.params.dryRun) return `dry run: would look at ${count} role(s)`
    return `looked at ${count} role(s)`
  }
}

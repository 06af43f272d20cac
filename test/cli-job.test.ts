// `fpk g job <Name>`: the files it writes in a project, what it refuses, and
// that the job file it writes runs on the real kit (Parse's job route, _JobStatus).
import t from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Io } from '../cli/context.js'
import { main } from '../cli/fpk.js'
import { renderTemplate } from '../cli/templates.js'
import { jobNames } from '../cli/names.js'
import { lane, masterHeaders, startKit } from './helpers/kit.js'
import { enqueue } from '../lib/index.js'
import { until } from './helpers/until.js'

const here = path.dirname(fileURLToPath(import.meta.url))

async function fpkHere (cwd: string, ...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    cwd,
    out: (text) => { stdout += text },
    err: (text) => { stderr += text },
    interactive: false,
    fancyProgress: false,
    ask: async () => { throw new Error('no questions in tests') }
  }
  const code = await main(['node', 'fpk', ...args], io)
  return { code, stdout, stderr }
}

t.test('names: PascalCase in, a class, a camelCase job and kebab-case files out', async (t) => {
  t.same(jobNames('CleanupDrafts'), { name: 'CleanupDrafts', className: 'CleanupDraftsJob', jobName: 'cleanupDrafts', kebab: 'cleanup-drafts' })
  t.same(jobNames('NightlyReportJob'), { name: 'NightlyReport', className: 'NightlyReportJob', jobName: 'nightlyReport', kebab: 'nightly-report' }, 'a trailing Job is not doubled')
  t.throws(() => jobNames('cleanup-drafts'), /not a PascalCase name.*Did you mean CleanupDrafts\?/)
})

t.test('fpk g job writes the job in the functions directory and its test, and refuses to write them twice', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'fpk-job-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(path.join(root, 'package.json'), '{"name":"shop","type":"module"}')
  mkdirSync(path.join(root, 'src', 'functions'), { recursive: true })
  writeFileSync(path.join(root, 'src', 'app.ts'), 'export async function buildApp () {}\n')

  const made = await fpkHere(root, 'g', 'job', 'CleanupDrafts')
  t.equal(made.code, 0, made.stderr)
  const job = path.join(root, 'src', 'functions', 'cleanup-drafts-job.ts')
  const test = path.join(root, 'test', 'cleanup-drafts-job.test.ts')
  t.ok(existsSync(job) && existsSync(test) && existsSync(path.join(root, 'test', 'harness.ts')), 'job, test and harness')
  t.match(made.stdout, /created src\/functions\/cleanup-drafts-job\.ts/)
  t.match(made.stdout, /POST \/parse\/jobs\/cleanupDrafts/)
  const source = readFileSync(job, 'utf8')
  t.match(source, /import \{ Job, type JobRequest \} from 'fastify-parse-kit'/)
  t.match(source, /export class CleanupDraftsJob \{/)
  t.match(source, /static async cleanupDrafts \(request: JobRequest<CleanupDraftsParams>\)/)
  t.match(readFileSync(test, 'utf8'), /import \{ buildApp \} from '\.\.\/src\/app\.js'/)

  const again = await fpkHere(root, 'g', 'job', 'CleanupDrafts')
  t.not(again.code, 0, 'an existing file is not overwritten without -f')
  t.match(again.stderr, /cleanup-drafts-job\.ts/)
  const bad = await fpkHere(root, 'g', 'job', 'cleanup')
  t.not(bad.code, 0)
  t.match(bad.stderr, /not a PascalCase name/)
})

t.test('the job file fpk g job writes runs on the kit and ends succeeded', async (t) => {
  // The rendered template, importing the kit from this checkout (a project imports the published package).
  const dir = mkdtempSync(path.join(here, 'generated-job-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const names = jobNames('CountRoles')
  const source = (await renderTemplate('job/job.ts', { Name: names.name, className: names.className, jobName: names.jobName, kebab: names.kebab, kit: 'fastify-parse-kit' }))
    .replaceAll("from 'fastify-parse-kit'", `from '${pathToFileURL(path.join(here, '..', 'lib', 'index.ts')).href}'`)
  const file = path.join(dir, 'count-roles-job.ts')
  writeFileSync(file, source)
  const loaded = await import(pathToFileURL(file).href) as Record<string, new () => unknown>
  // Queued too, as its comment offers (PostgreSQL: MongoDB has no queue).
  const queued = lane.kind !== 'mongo'
  const kit = await startKit(t, { functions: [loaded.CountRolesJob], ...(queued ? { jobs: { queue: { pollingIntervalSeconds: 0.5 } } } : {}) })
  const started = await kit.request('POST', '/parse/jobs/countRoles', { headers: masterHeaders, body: { dryRun: true } })
  t.equal(started.status, 200, started.text)
  const id = started.headers.get('x-parse-job-status-id')
  let row: Record<string, any> = {}
  await until('the generated job to finish', async () => {
    row = (await kit.request('GET', `/parse/classes/_JobStatus/${id}`, { headers: masterHeaders })).json
    return row.status === 'succeeded' || row.status === 'failed'
  })
  t.equal(row.status, 'succeeded', row.message)
  t.match(row.message, /^dry run: would look at \d+ role\(s\)$/)
  t.same(row.params, { dryRun: true })
  if (!queued) return
  const job = await enqueue('countRoles', { dryRun: true })
  let run: Record<string, any> = {}
  await until('the queued run to finish', async () => {
    const where = encodeURIComponent(JSON.stringify({ source: `queue ${job.id} (attempt 1 of 2)` }))
    run = (await kit.request('GET', `/parse/classes/_JobStatus?where=${where}`, { headers: masterHeaders })).json.results?.[0] ?? {}
    return run.status === 'succeeded' || run.status === 'failed'
  })
  t.equal(run.status, 'succeeded', 'enqueue(\'countRoles\') runs the generated job')
})

// Two surviving instances look for lost runs at once. Before the fixes (at the
// end of this comment) the first to take an expired lease deleted it, then reported its run (reads the _JobStatus row,
// marks it failed, retries it if the job has retries left). Until its report
// is written the row says "running" and holds no lease, which is what the
// other instance's look for runs that never took a lease takes (max(3 x
// leaseMs, 60 s) after the run began: any run older than a minute). That
// instance then reports the run as lost "before it took its lease", reads its
// attempt from the row's params (which never hold it: the lease did) and
// retries a run whose retries were spent.
//
// The instance that died (H) is written straight into the database: five
// runs of `resumable` (retries: 1), begun ten minutes ago, the first in its
// first attempt and the others in their last (2 of 2), leases expired. The
// first run's row is locked by the test until its taker's row write has run
// out of the database bound: that write still lands once the lock goes (the
// server never saw its caller give up), so the lease, put back for a later
// look, is retaken with the row already failed. The taker then used to drop it unreported (and, with retries left,
// unretried); it now knows the write it began was its own (lost-runs.ts).
//
// The second case: an instance whose clock runs two minutes behind the
// database's writes its runs' createdAt two minutes in the past, so the look
// for runs without a lease (which compares createdAt with the database's
// now()) takes a healthy run in the moment between Parse marking its row
// "running" and the handler writing its lease: the run is failed "instance
// lost" and retried while it goes on. The test widens that moment by making
// the lease's insert fail for a few seconds (a trigger; the handler tries it
// again at each renewal), and writes the skew into the row.
//
// The fixes: the taker holds the expired lease until the run's row says failed
// (lost-runs.ts), and a row without a lease is judged by how long the looking
// instance has seen it so on its own clock, never by createdAt
// (unleased-sightings.ts).
import t from 'tap'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { sharedPostgres, startJobsInstance } from './helpers/jobs-processes.js'
import { jobStatuses, startJob } from './helpers/job-status.js'
import { until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'

t.test('lost runs, looked for by two instances at once', async (t) => {
  const postgres = await sharedPostgres(t)
  const databaseURI = await postgres.database('jobs_lost_race')
  const env = { DATABASE_URI: databaseURI, SCHEDULES: 'off', LEASE_MS: '2000' }
  const [first, second] = await Promise.all([startJobsInstance('S1', env, undefined, { compiled: true }), startJobsInstance('S2', env, undefined, { compiled: true })])
  t.teardown(() => Promise.all([first.stop(), second.stop()]))
  const status = await jobStatuses(t, databaseURI)
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())

  // A run makes Parse's _JobStatus table; the survivors' looks make the lease table.
  const brief = await startJob(t, first.origin, 'brief')
  await until('a run to finish', async () => (await status.one(brief))?.status === 'succeeded', scaled(30_000))
  await until('the lease table', async () => (await client.query('SELECT to_regclass(\'fpk_job_run_leases\') AS name')).rows[0].name !== null, scaled(30_000))

  t.test('a run whose expired lease one instance has taken is reported by that instance alone, its attempt kept, even when its row write answered an error and landed after', async (t) => {
    // H's five runs, as its handler left them: the row's params without the attempt (recordRun), the lease with it.
    const runs = Array.from({ length: 5 }, () => randomBytes(5).toString('hex'))
    for (const id of runs) {
      await client.query(`INSERT INTO "_JobStatus" ("objectId", "createdAt", "updatedAt", "jobName", source, status, params)
        VALUES ($1, now() - interval '10 minutes', now() - interval '10 minutes', 'resumable', 'api', 'running', '{}'::jsonb)`, [id])
    }
    const locker = new pg.Client({ connectionString: databaseURI })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN')
    await locker.query('SELECT 1 FROM "_JobStatus" WHERE "objectId" = $1 FOR UPDATE', [runs[0]])
    // The locked one in its first attempt (a retry is owed), the others in their last.
    for (const [index, id] of runs.entries()) {
      const attempt = index === 0 ? 1 : 2
      await client.query(`INSERT INTO fpk_job_run_leases (job_id, job_name, holder, params, attempt, started_at, lease_until)
        VALUES ($1, 'resumable', 'H', $2::jsonb, $3, now() - interval '10 minutes', now() - interval '1 second')`, [id, JSON.stringify({ __attempt: attempt }), attempt])
    }

    // The leases are taken at once; the first report waits on the locked row.
    // Taken: held for its report (no longer expired), or already dropped once reported.
    await until('the leases to be taken', async () => (await client.query('SELECT count(*)::int AS n FROM fpk_job_run_leases WHERE job_id = ANY($1) AND lease_until < now()', [runs])).rows[0].n === 0, scaled(30_000))
    // Its write outlasts the database bound (databaseTimeout): the taker is answered an error, but PostgreSQL
    // still holds the UPDATE, waiting on the lock. Released the moment the taker gives up, it lands before
    // the next look retakes the lease, which then finds the row failed by its own earlier write.
    const gaveUp = `run ${runs[0]} lost its instance but could not be reported yet`
    await until('the first report to give up on the locked row', () => (first.output() + second.output()).includes(gaveUp), scaled(60_000))
    await locker.query('COMMIT')
    await until('the runs to be marked', async () => {
      for (const id of runs) if ((await status.one(id)).status === 'running') return false
      return true
    }, scaled(30_000))

    for (const id of runs) t.match(await status.one(id), { status: 'failed', message: 'instance lost' }, `run ${id} is failed "instance lost"`)
    const said = () => first.output() + second.output()
    await until('each run\'s report to be logged', () => runs.every((id) => said().includes(`run ${id} of resumable was lost`)), scaled(30_000))
    const retried = new RegExp(`run ${runs[0]} of resumable was lost with its instance \\(H\\) during attempt 1 of 2; marked failed \\\\?"instance lost\\\\?"; retried as run (\\w+) \\(attempt 2 of 2\\)`).exec(said())
    t.ok(retried, `run ${runs[0]}: reported as lost with H during its first attempt, and retried`)
    // Give a wrongly started retry the time to show up.
    await new Promise((resolve) => setTimeout(resolve, scaled(2_000)))
    const others = (await status.of('resumable')).filter((row) => !runs.includes(row.objectId))
    t.same(others.map((row) => row.objectId), retried ? [retried[1]] : [], 'the run in its first attempt is run again once, the others not at all')
    for (const id of runs) {
      t.equal(said().split(`run ${id} of resumable was lost`).length - 1, 1, `run ${id}: reported once`)
      if (id !== runs[0]) {
        t.match(said(), new RegExp(`run ${id} of resumable was lost with its instance \\(H\\) during attempt 2 of 2; marked failed \\\\?"instance lost\\\\?", its retries spent`),
          `run ${id}: as lost with H during its last attempt`)
      }
      t.notMatch(said(), new RegExp(`run ${id} of resumable was lost with its instance before it took its lease`), `run ${id}: not taken for a run that never held a lease`)
    }
  })

  t.test('a healthy run of an instance whose clock is two minutes behind is not taken for one that never took its lease', async (t) => {
    // The lease's insert fails for a moment (the handler tries it again at each renewal).
    await client.query('CREATE FUNCTION fpk_test_refuse_lease() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION \'lease refused by the test\'; END $$')
    await client.query('CREATE TRIGGER fpk_test_refuse_lease BEFORE INSERT ON fpk_job_run_leases FOR EACH ROW EXECUTE FUNCTION fpk_test_refuse_lease()')
    const earlier = new Set((await status.of('resumable')).map((row) => row.objectId))
    const run = await startJob(t, first.origin, 'resumable')
    await until('its lease write to fail', () => first.output().includes(`run ${run} could not take its lease yet`), scaled(30_000))
    // What the instance's clock wrote: two minutes before the database's now().
    await client.query('UPDATE "_JobStatus" SET "createdAt" = "createdAt" - interval \'2 minutes\' WHERE "objectId" = $1', [run])
    // Two looks of each instance while the lease is not written.
    await new Promise((resolve) => setTimeout(resolve, scaled(2_500)))
    await client.query('DROP TRIGGER fpk_test_refuse_lease ON fpk_job_run_leases')
    await until('the run to hold its lease', () => status.leased(run), scaled(30_000))
    t.equal((await status.one(run)).status, 'running', 'the run going on is still running')
    const retries = (await status.of('resumable')).filter((row) => !earlier.has(row.objectId) && row.objectId !== run)
    t.same(retries.map((row) => row.message), [], 'and it is not run a second time')
  })
})

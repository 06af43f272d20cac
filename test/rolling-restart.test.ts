// A first deploy of several instances at once on an empty database: each one
// comes up and serves (Parse's initialization and the kit's schema step run
// one instance at a time). The test holds them all at the schema step's first
// read, then lets them go at the same instant: without the kit's schema lock
// they collide there every time.
// Then a rolling restart behind a load balancer loses no request: two of those
// instances of the generated server (fixtures/serve.ts) on their database, a
// round-robin proxy checking {mount}/health every 100 ms, steady load over
// keep-alive connections; each instance in turn gets SIGTERM (its replacement
// started before the next one goes). On SIGTERM readiness answers 503 at once
// while the instance keeps serving for the drain delay, then it stops listening,
// finishes what is in flight and exits 0.
// The drain is what a deploy sets to cover its balancer's check interval and
// answer time. This balancer runs in the test's process: on a loaded machine
// its checks are answered and read late (seconds at load 30), so the drain is
// stretched with the load as its lag is; the check that the balancer saw the
// 503 before the instance stopped listening holds whatever the drain.
// One deploy for both: the restart needs two instances that serve, and the first
// boot makes three (four boots and one PostgreSQL, where two deploys made six and two).
import t from 'tap'
import http from 'node:http'
import pg from 'pg'
import { sharedPostgres, startJobsInstance, type JobsInstance } from './helpers/jobs-processes.js'
import { startRoundRobinProxy } from './helpers/round-robin-proxy.js'
import { APP_ID, MASTER_KEY, httpRequest } from './helpers/kit.js'
import { sleep, until } from './helpers/until.js'
import { scaled } from './helpers/time-scale.js'
import { reportSubtestCost } from './helpers/subtest-cost.js'

reportSubtestCost(t) // FPK_SUBTEST_COST=1: what each case costs

/** Fifteen of the balancer's 100 ms check intervals on a quiet machine; scaled with the load when the test starts. */
const DRAIN_BASE_MS = 1_500
const PACE_MS = 50

t.test('a first deploy of three instances at once, then a rolling restart of two of them under load', async (t) => {
  const postgres = await sharedPostgres(t)
  const uri = await postgres.database('rolling_restart')
  const drainMs = scaled(DRAIN_BASE_MS)
  const env = { DATABASE_URI: uri, SCHEDULES: 'off', SHUTDOWN_DRAIN_MS: String(drainMs), GRACE_MS: '1000' }
  const started: JobsInstance[] = []
  t.teardown(async () => { await Promise.all(started.map((instance) => instance.stop())) })
  const start = async (name: string) => {
    const instance = await startJobsInstance(name, env, undefined, { compiled: true })
    started.push(instance)
    return instance
  }
  const deployed: Array<JobsInstance & { origin: string }> = []

  await t.test('instances doing their first boot together on an empty database all come up and serve', async (t) => {
    const count = 3
    // A gate all of them reach before the schema step's first read: the schema
    // generations table, made empty beforehand and held here. Each instance
    // blocks on it, or (with the kit's schema lock) waits for the one that does;
    // released once all are there, they start Parse's initialization together.
    const gate = new pg.Client({ connectionString: uri })
    const watch = new pg.Client({ connectionString: uri })
    await gate.connect()
    await watch.connect()
    const ended = { count: 0 }
    let booting: Array<Promise<JobsInstance & { origin: string }>> = []
    // Both clients end before the test's PostgreSQL stops (a client whose server went away first never ends).
    try {
      await gate.query(`CREATE TABLE ${GENERATIONS} (generation integer PRIMARY KEY, fingerprint text NOT NULL, version integer, declared_at timestamptz NOT NULL DEFAULT now())`)
      await gate.query('BEGIN')
      await gate.query(`LOCK TABLE ${GENERATIONS} IN ACCESS EXCLUSIVE MODE`)
      booting = Array.from({ length: count }, (_, i) => start(`F${i}`).finally(() => { ended.count++ }))
      await until(`all ${count} instances at the gate`, async () => ended.count > 0 || await atTheGate(watch) >= count, scaled(180_000))
      await gate.query('COMMIT')
    } finally {
      await Promise.all([gate.end(), watch.end()])
    }

    const outcomes = await Promise.allSettled(booting)
    const failed = outcomes.flatMap((outcome) => outcome.status === 'rejected' ? [String(outcome.reason).slice(0, 2000)] : [])
    t.same(failed, [], `all ${count} instances booted`)
    const headers = { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY }
    for (const outcome of outcomes) {
      if (outcome.status !== 'fulfilled') continue
      const users = await httpRequest(outcome.value.origin, 'GET', '/parse/classes/_User', { headers })
      t.equal(users.status, 200, `${outcome.value.origin} serves`)
      if (users.status === 200) deployed.push(outcome.value)
    }
  })

  await t.test('SIGTERM each instance in turn under steady load: no request fails, each exits 0', { skip: deployed.length < 2 && 'the first deploy left fewer than two instances serving' }, async (t) => {
    // Two of the deployed instances take the load; a third would keep the rotation whole while the others restart.
    const [a, b, ...spare] = deployed
    await Promise.all(spare.map((instance) => instance.stop()))

    const proxy = await startRoundRobinProxy({ healthPath: '/parse/health', checkMs: 100 })
    t.teardown(() => proxy.close())
    proxy.add(a.origin)
    proxy.add(b.origin)
    await until('both instances in rotation', () => proxy.healthyCount() === 2, scaled(30_000))

    // Steady load: a few clients, each on its own keep-alive connection, one request after another,
    // PACE_MS apart: some 80 a second reach an instance in each of its states (serving, draining, gone),
    // and the load does not grow with the minutes a loaded machine takes to boot the replacement
    // (back to back, the clients cost more CPU than the instances' boots).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
    t.teardown(() => agent.destroy())
    const outcome = { ok: 0, failed: [] as string[], running: true }
    const client = async () => {
      while (outcome.running) {
        const status = await get(`${proxy.origin}/parse/classes/TickRun?limit=1`, agent).catch((error: Error) => error.message)
        if (status === 200) outcome.ok++
        else outcome.failed.push(String(status))
        await sleep(PACE_MS)
      }
    }
    const clients = Promise.all([client(), client(), client(), client()])

    const restart = async (instance: JobsInstance & { origin: string }, name: string) => {
      const before = outcome.ok
      await until(`requests to flow before ${name} stops`, () => outcome.ok > before + 20, scaled(30_000))
      const signalled = Date.now()
      instance.child.kill('SIGTERM')
      const [code] = await instance.exited as [number | null]
      const exited = Date.now()
      t.equal(code, 0, `${name} exits 0 after SIGTERM`)
      // The contract itself: the balancer read readiness 503 while the instance still listened.
      const out = proxy.outOfRotation(instance.origin)
      // A check that timed out (a loaded instance) is a balancer's call too; a refused or reset one means it had stopped listening first.
      t.ok(out?.why === '503' || out?.why === 'health check timed out', `the balancer took ${name} out of rotation on its readiness answer (${out?.why ?? 'never'}), not on a refused connection`)
      t.comment(`${name}: out of rotation ${out === undefined ? 'never' : `${out.at - signalled} ms`} after SIGTERM, exited after ${exited - signalled} ms (drain ${drainMs} ms)`)
    }
    await restart(a, 'A')
    const replacement = await start('A2')
    proxy.add(replacement.origin)
    await until('the replacement in rotation', () => proxy.healthyCount() === 2, scaled(30_000))
    await restart(b, 'B')
    const after = outcome.ok
    await until('requests to flow after the restart', () => outcome.ok > after + 20, scaled(30_000))
    outcome.running = false
    await clients

    t.same(outcome.failed, [], 'no request failed')
    t.same(proxy.failures, [], 'no upstream connection was reset or refused')
    t.ok(outcome.ok > 60, `requests served throughout (${outcome.ok})`)
  })
})

function get (url: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { 'x-parse-application-id': APP_ID, 'x-parse-master-key': MASTER_KEY } }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    })
    request.on('error', reject)
  })
}

/** The kit's record of schema generations (lib/storage/postgres/schema-generations.ts): the schema step reads it first. */
const GENERATIONS = 'fpk_schema_generations'

/**
 * Instances held at the gate: backends waiting for the gate's lock, plus those
 * waiting for the kit's schema lock (lib/storage/postgres/schema-lock.ts tries
 * it every 100 ms on one connection, and holds no advisory lock meanwhile).
 */
async function atTheGate (watch: pg.Client): Promise<number> {
  const { rows: [{ blocked }] } = await watch.query(`SELECT count(*)::int AS blocked FROM pg_locks WHERE relation = '${GENERATIONS}'::regclass AND NOT granted`)
  await watch.query('SELECT pg_stat_clear_snapshot()')
  const { rows: [{ waiting }] } = await watch.query(`SELECT count(*)::int AS waiting FROM pg_stat_activity a
    WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.query LIKE 'SELECT pg_try_advisory_lock%'
      AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)`)
  return blocked + waiting
}

// Several instances, one schedule, no Redis: two kit processes on one
// PostgreSQL run a @Cron every second for 10 s, and each tick runs once in all
// (the lease lives in the shared database). test/jobs-cluster-redis.test.ts
// runs the same with Redis configured.
import t from 'tap'
import { sharedPostgres } from './helpers/jobs-processes.js'
import { cronScenario } from './helpers/cron-scenario.js'

t.test('a @Cron every second on two instances without Redis: each tick once', async (t) => {
  const postgres = await sharedPostgres(t)
  await cronScenario(t, await postgres.database('jobs_plain'))
})

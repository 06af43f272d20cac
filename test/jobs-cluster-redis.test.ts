// Several instances, one schedule, with Redis configured (cluster mode): the
// same scenario as test/jobs-cluster.test.ts. Redis shares caches and rate
// limits; the tick's lease still lives in the database.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { ownRedis, sharedPostgres } from './helpers/jobs-processes.js'
import { cronScenario } from './helpers/cron-scenario.js'

const REDIS_SKIP = 'needs redis-server: apt-get install redis-server, or set REDIS_URL'
const redisOnPath = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0

t.test('a @Cron every second on two instances with Redis configured: each tick once', { skip: process.env.REDIS_URL || redisOnPath ? false : REDIS_SKIP }, async (t) => {
  const postgres = await sharedPostgres(t)
  await cronScenario(t, await postgres.database('jobs_redis'), await ownRedis(t))
})

// The two-instance @Cron scenario, for test/jobs-cluster.test.ts: two kit
// processes on one database run a @Cron every second; over ten whole seconds
// each tick runs once in all, never twice and never overlapping. Counted by the
// ticks the runs record, so a loaded machine that starts runs late still counts right.
import type { Test } from 'tap'
import pg from 'pg'
import { startJobsInstance } from './jobs-processes.js'
import { sleep, until } from './until.js'

const WINDOW_TICKS = 10

interface TickRow { tick: string, instance: string, startedAt: Date, finishedAt: Date }

export async function cronScenario (t: Test, databaseURI: string, redisURL?: string): Promise<void> {
  const env: Record<string, string> = { DATABASE_URI: databaseURI, GRACE_MS: '5000', ...(redisURL ? { REDIS_URL: redisURL } : {}) }
  // One after the other: each applies the declared schema at boot.
  const a = await startJobsInstance('A', env, undefined, { compiled: true })
  t.teardown(() => a.stop())
  const b = await startJobsInstance('B', env, undefined, { compiled: true })
  t.teardown(() => b.stop())

  // The window: ten whole seconds, starting a second from now.
  const from = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000)
  const to = new Date(from.getTime() + WINDOW_TICKS * 1000)
  const client = new pg.Client({ connectionString: databaseURI })
  await client.connect()
  t.teardown(() => client.end())
  const rows = async () => (await client.query<TickRow>(
    'SELECT tick, instance, "startedAt", "finishedAt" FROM "TickRun" WHERE tick >= $1 AND tick < $2 ORDER BY "startedAt"',
    [from.toISOString(), to.toISOString()])).rows
  await sleep(to.getTime() - Date.now())
  // Runs may start late on a loaded machine: wait until the window's last tick has run (or a generous while).
  const last = new Date(to.getTime() - 1000).toISOString()
  await until('the last tick of the window to run', async () => (await rows()).some((row) => row.tick === last), 60_000).catch(() => {})
  await sleep(2_000)
  await Promise.all([a.stop(), b.stop()])

  const runs = await rows()
  const ticks = new Set(runs.map((row) => row.tick))
  t.ok(Math.abs(runs.length - WINDOW_TICKS) <= 1, `${runs.length} runs for ${WINDOW_TICKS} ticks (±1)`)
  t.equal(ticks.size, runs.length, 'no tick ran twice')
  for (let i = 1; i < runs.length; i++) {
    if (runs[i].startedAt < runs[i - 1].finishedAt) t.fail(`runs overlap: ${runs[i - 1].tick} (${runs[i - 1].instance}) and ${runs[i].tick} (${runs[i].instance})`)
  }
  t.pass('no two runs overlapped')
  const byInstance = runs.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.instance]: (counts[row.instance] ?? 0) + 1 }), {})
  t.comment(`runs per instance: ${JSON.stringify(byInstance)}`)
  t.notMatch(a.output() + b.output(), /could not run|close failed/, 'no tick failed to run')
}

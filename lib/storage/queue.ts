// The engine under queued jobs: pg-boss, on the kit's own PostgreSQL pool (its
// tables live in the schema `pgboss`). Only this folder knows it: the jobs side
// sees a QueueEngine. MongoDB has no engine here; a kit that asks for the
// queue on it fails at boot (see docs/internals/queues.md for why).
import '../parse/defer-modules.js' // before pg-boss loads: cron expressions at their first use
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import PgBoss from 'pg-boss'
import { QueueDatabaseError } from '../errors.js'
import { pgDatabase } from '../parse/adapter-internals.js'
import type { PgDatabase } from '../parse/internals.js'
import { QUEUE_SCHEMA } from './queue-schema.js'
import { transactionScope } from './scope.js'
import type { Database } from './database.js'

/** What one queued job carries in the engine. */
export interface QueuedJob {
  id: string
  data: Record<string, unknown>
  /** 1 for the first run, 2 for the first retry, … */
  attempt: number
  /** Runs it may have in all (the first and its retries). */
  attempts: number
}

export interface QueueSendOptions {
  startAfter?: Date
  dedupeKey?: string
  priority?: number
  retries: number
  backoffSeconds: number
}

export interface QueueDefinition {
  retries: number
  backoffSeconds: number
  /** How long a run may stay active before the engine counts it stalled and retries it. */
  expireSeconds: number
}

export interface DeadJob { id: string, data: Record<string, unknown>, diedAt: Date }

/**
 * How one run of a batch ended, as the engine needs it: its failure, undefined
 * for a success the engine is to complete, or COMPLETED for a success whose
 * end statement already completed its job in the queue.
 */
export type QueuedEnd = Error | undefined | typeof COMPLETED
export const COMPLETED = 'completed'

export interface QueueEngine {
  /** Creates (or updates) the queue of one job and its dead-letter queue. */
  define (name: string, definition: QueueDefinition): Promise<void>
  /** Queues a job; inside a transaction, on the transaction's own connection (it commits or rolls back with it). */
  send (name: string, data: Record<string, unknown>, options: QueueSendOptions): Promise<{ id: string, deduplicated: boolean }>
  /**
   * Runs the queue's jobs on this instance, in batches of up to `concurrency`
   * (so at most that many at once): `run` answers each job's end (QueuedEnd),
   * in the batch's order.
   */
  work (name: string, concurrency: number, run: (jobs: QueuedJob[]) => Promise<QueuedEnd[]>): Promise<void>
  /** Ends a job as failed if it is still active (retried while it has retries, else dead). */
  fail (name: string, id: string, message: string): Promise<void>
  /** Tells one idle worker of the queue on this instance to look for a job now (one job was queued). */
  wake (name: string): void
  /** The state of one job (archived ones included), or undefined once it has been deleted. */
  state (name: string, id: string): Promise<string | undefined>
  /** Jobs that used all their retries, oldest first. */
  /** At most `limit` dead jobs, oldest first (by died millisecond, then id), after the position `after` when given. */
  dead (name: string, limit: number, after?: { diedAt: Date, id: string }): Promise<DeadJob[]>
  /** Queues a dead job again with its params and full retries; the dead copy goes. */
  rerun (name: string, id: string): Promise<string | undefined>
  /** Stops taking new jobs on this instance (the ones running go on). */
  pause (): Promise<void>
  /** Stops the engine; jobs still active are failed, so they are retried. */
  stop (): Promise<void>
}

export interface QueueEngineSettings {
  pollingIntervalSeconds: number
  maintenanceIntervalSeconds: number
  keepFinishedSeconds: number
  deleteAfterSeconds: number
  deadLetterDays: number
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The dead-letter queue of a job's queue. */
export function deadLetterQueue (name: string): string {
  return `${name}__dead`
}

/** Refuses the queue where no engine runs (MongoDB): one line at boot, naming the option. */
export function refuseQueueOn (database: Pick<Database, 'kind'>): void {
  if (database.kind !== 'postgres') {
    throw new QueueDatabaseError('kitPlugin option "jobs.queue": queued jobs (enqueue) need PostgreSQL; this kit runs on MongoDB. Remove jobs.queue, or run the kit on PostgreSQL (DATABASE_URI=postgres://…). docs/internals/queues.md says why.')
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg-boss reads rows of its own shape
type Rows = { rows: any[] }
interface ResultQueries { result (query: string | { name?: string, text: string, values: unknown[] }): Promise<Rows> }

/**
 * How long a worker whose batch took every waiting job waits before it claims
 * again (at most its polling interval). Jobs queued one at a time, as orders
 * come in, are then claimed a few at once rather than each alone: a batch
 * costs three statements (claim, its runs' leases and rows, their ends with
 * the jobs' completion) whatever its size. The price: a job queued while a batch runs may wait this much
 * longer to start.
 */
const GATHER_MS = 100

/** How many of pg-boss's statement texts run as prepared statements (its set is fixed and small; this is a bound, not a size). */
const PREPARED_TEXTS = 256

/** Names pg-boss's parameterized texts: each is planned once per connection, not at every call (a job run makes several). */
export function statementNames (): (text: string) => string | undefined {
  const names = new Map<string, string>()
  return (text) => {
    const known = names.get(text)
    if (known || names.size >= PREPARED_TEXTS) return known
    const name = `fpk_queue_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
    names.set(text, name)
    return name
  }
}

/** pg-boss's completion of a worker's batch, as its worker sends it (its text is pg-boss's, compared whole). */
const completeText = (createRequire(import.meta.url)('pg-boss/src/plans.js') as { completeJobs (schema: string): string }).completeJobs(QUEUE_SCHEMA)

/**
 * The batches whose every job the kit's own end statement already completed:
 * pg-boss's worker still sends its completion after each batch, which would
 * find nothing left to complete. Answered here without a round trip (one
 * statement a batch). A batch is named by its ids; the mark lapses if that
 * completion never comes (pg-boss failed the batch instead).
 */
function completedBatches (): { mark (ids: string[]): void, take (text: string, values: unknown[]): boolean } {
  const marked = new Set<string>()
  return {
    mark (ids) {
      const key = ids.join(',')
      marked.add(key)
      setTimeout(() => marked.delete(key), 5_000).unref()
    },
    take (text, values) {
      if (marked.size === 0 || text !== completeText || !Array.isArray(values[1])) return false
      return marked.delete(values[1].join(','))
    }
  }
}

/** pg-boss's SQL on pg-promise queries: parameters go to the server; a text without any may hold several statements. */
function sqlOn (queries: unknown, nameOf: (text: string) => string | undefined, completed?: ReturnType<typeof completedBatches>): PgBoss.Db {
  const target = queries as ResultQueries
  return {
    executeSql: async (text, values) => {
      if (!values || values.length === 0) return { rows: (await target.result(text))?.rows ?? [] }
      if (completed?.take(text, values)) return { rows: [{ count: '0' }] }
      const name = nameOf(text)
      const result = await target.result(name ? { name, text, values } : { text, values })
      return { rows: result?.rows ?? [] }
    }
  }
}

/** The ambient transaction's own connection, when a transaction is open on PostgreSQL. */
function transactionSql (nameOf: (text: string) => string | undefined): PgBoss.Db | undefined {
  const session = transactionScope.getStore()?.session as { t?: unknown } | undefined
  return session?.t ? sqlOn(session.t, nameOf) : undefined
}

export async function openQueueEngine (database: Database, settings: QueueEngineSettings, onError: (error: Error) => void): Promise<QueueEngine> {
  refuseQueueOn(database)
  const client = pgDatabase(database.adapter)!
  const nameOf = statementNames()
  const completed = completedBatches()
  const db = sqlOn(client, nameOf, completed)
  const boss = new PgBoss({
    db,
    schema: QUEUE_SCHEMA,
    schedule: false,
    pollingIntervalSeconds: settings.pollingIntervalSeconds,
    maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds,
    archiveCompletedAfterSeconds: settings.keepFinishedSeconds,
    archiveFailedAfterSeconds: settings.keepFinishedSeconds,
    deleteAfterSeconds: settings.deleteAfterSeconds
  })
  boss.on('error', onError)
  // Instances booting together on a fresh database would both install pg-boss's schema (its own guard
  // misses one of the races): one installs while the others wait on this lock, then find it there.
  await whileLocked(client, 'fpk.queue.install', () => boss.start())
  /** This instance's workers: pg-boss's worker id, its queue. */
  const workers = new Map<string, string>()
  /** Workers running a job now: a wake goes to an idle one (a busy one looks again when its job ends). */
  const busy = new Set<string>()
  /** Workers that will look again once their gathering pause ends (see work), by their timer. */
  const gathering = new Map<string, NodeJS.Timeout>()
  const gather = (worker: string) => {
    const timer = setTimeout(() => {
      gathering.delete(worker)
      boss.notifyWorker(worker)
    }, Math.min(GATHER_MS, settings.pollingIntervalSeconds * 1000))
    timer.unref()
    gathering.set(worker, timer)
  }
  const stopGathering = () => {
    for (const timer of gathering.values()) clearTimeout(timer)
    gathering.clear()
  }
  const schema = QUEUE_SCHEMA

  return {
    // Serialized across instances: creating a queue attaches a partition, and two at once can deadlock.
    define: (name, definition) => whileLocked(client, 'fpk.queue.define', async () => {
      const dead = deadLetterQueue(name)
      const deadOptions = { name: dead, policy: 'standard' as const, retentionMinutes: settings.deadLetterDays * 24 * 60 }
      if (!(await boss.getQueue(dead))) await boss.createQueue(dead, deadOptions)
      const options = {
        name,
        // 'short': at most one waiting job per singleton key, the dedupe key's guarantee.
        policy: 'short' as const,
        retryLimit: definition.retries,
        retryDelay: definition.backoffSeconds,
        retryBackoff: definition.backoffSeconds > 0,
        expireInSeconds: definition.expireSeconds,
        deadLetter: dead
      }
      if (await boss.getQueue(name)) await boss.updateQueue(name, options)
      else await boss.createQueue(name, options)
    }),
    async send (name, data, options) {
      const on = transactionSql(nameOf)
      // Without a dedupe key every job gets a key of its own: the queue's policy then never merges two.
      const singletonKey = options.dedupeKey !== undefined ? `dedupe:${options.dedupeKey}` : `job:${crypto.randomUUID()}`
      const id = await boss.send(name, data, {
        singletonKey,
        ...(options.startAfter ? { startAfter: options.startAfter } : {}),
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
        retryLimit: options.retries,
        retryDelay: options.backoffSeconds,
        retryBackoff: options.backoffSeconds > 0,
        ...(on ? { db: on } : {})
      })
      if (id) return { id, deduplicated: false }
      const { rows } = await (on ?? db).executeSql(`SELECT id FROM ${schema}.job WHERE name = $1 AND singleton_key = $2 AND state = 'created' LIMIT 1`, [name, singletonKey])
      return { id: String(rows[0]?.id ?? ''), deduplicated: true }
    },
    async work (name, concurrency, run) {
      // One worker a queue, taking up to `concurrency` jobs a fetch: a batch costs one fetch of pg-boss's
      // whatever its size (a worker per slot cost a fetch and a completion a job); its completion goes
      // with the runs' ends (job-run-start.ts), and pg-boss's own is answered here (completedBatches).
      const worker = await boss.work<Record<string, unknown>>(name, { batchSize: concurrency, includeMetadata: true }, async (jobs) => {
        busy.add(worker)
        let ends: QueuedEnd[]
        try {
          ends = await run(jobs.map((job) => ({ id: job.id, data: job.data ?? {}, attempt: job.retryCount + 1, attempts: job.retryLimit + 1 })))
        } finally {
          busy.delete(worker)
        }
        const failed = ends.flatMap((end) => end instanceof Error ? [end.message] : [])
        if (failed.length > 0) {
          // The runs that succeeded end first (completed is final: no retry of theirs can be active
          // again), then pg-boss fails what is still active of the batch: the failed runs, each once.
          const done = jobs.filter((_job, i) => ends[i] === undefined).map((job) => job.id)
          if (done.length > 0) await boss.complete(name, done)
          throw new Error(failed.join('; '))
        }
        // Every job already completed by its run's end: pg-boss's completion that follows is answered here.
        if (ends.every((end) => end === COMPLETED)) completed.mark(jobs.map((job) => job.id))
        // A full batch: straight to the next one (pg-boss otherwise waits out its polling interval).
        // A batch that took every waiting job: the next one after GATHER_MS, so that jobs queued one by one
        // meanwhile are claimed together (one claim, lease write, lease drop and completion for several).
        if (jobs.length >= concurrency) boss.notifyWorker(worker)
        else gather(worker)
      })
      workers.set(worker, name)
    },
    async fail (name, id, message) {
      // Only a job still active: failing one already handed back would spend a second retry.
      const job = await boss.getJobById(name, id)
      if (job?.state === 'active') await boss.fail(name, id, { message })
    },
    wake (name) {
      // One job, one idle worker: waking them all sends every idle one to fetch, and all but one find nothing.
      // A gathering worker looks again shortly anyway: the job waits for it, to be claimed with the others.
      for (const [worker, queue] of workers) {
        if (queue === name && !busy.has(worker) && !gathering.has(worker)) return boss.notifyWorker(worker)
      }
    },
    async state (name, id) {
      const job = await boss.getJobById(name, id, { includeArchive: true })
      return job?.state
    },
    async dead (name, limit, after) {
      // The millisecond a Date holds: a position read back from diedAt is the same place (created_on keeps microseconds).
      const died = 'date_trunc(\'milliseconds\', created_on)'
      const { rows } = after
        ? await db.executeSql(`SELECT id, data, created_on FROM ${schema}.job WHERE name = $1 AND state = 'created' AND (${died}, id) > ($2::timestamptz, $3::uuid) ORDER BY ${died}, id LIMIT $4`, [deadLetterQueue(name), after.diedAt.toISOString(), after.id, limit])
        : await db.executeSql(`SELECT id, data, created_on FROM ${schema}.job WHERE name = $1 AND state = 'created' ORDER BY ${died}, id LIMIT $2`, [deadLetterQueue(name), limit])
      return rows.map((row) => ({ id: String(row.id), data: row.data ?? {}, diedAt: new Date(row.created_on) }))
    },
    async rerun (name, id) {
      // The queue's ids are UUIDs: any other text is no dead job (PostgreSQL refused it, 22P02).
      if (typeof id !== 'string' || !UUID.test(id)) return undefined
      const dead = deadLetterQueue(name)
      // One transaction: the dead copy goes only with the new job in.
      return await client.tx(async (t) => {
        const on = sqlOn(t, nameOf)
        const { rows } = await on.executeSql(`DELETE FROM ${schema}.job WHERE name = $1 AND id = $2 AND state = 'created' RETURNING data`, [dead, id])
        if (rows.length === 0) return undefined
        const again = await boss.send(name, rows[0].data ?? {}, { singletonKey: `job:${crypto.randomUUID()}`, db: on })
        return again ?? undefined
      }) as string | undefined
    },
    async pause () {
      stopGathering()
      for (const worker of workers.keys()) await boss.offWork({ id: worker })
      workers.clear()
    },
    async stop () {
      stopGathering()
      workers.clear()
      await boss.stop({ graceful: true, close: false, wait: true, timeout: 1000 })
    }
  }
}

/** Runs `work` holding a session advisory lock on one pooled connection. */
async function whileLocked<T> (client: PgDatabase, key: string, work: () => Promise<T>): Promise<T> {
  const connection = await client.connect()
  try {
    await connection.one('SELECT pg_advisory_lock(hashtext($1)) AS locked', [key])
    try {
      return await work()
    } finally {
      await connection.one('SELECT pg_advisory_unlock(hashtext($1)) AS unlocked', [key])
    }
  } finally {
    connection.done()
  }
}

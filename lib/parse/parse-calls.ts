// Parse Server's private calls the rest of the kit makes, each as a function
// with the kit's own signature: a Parse upgrade that changes one of them is
// fixed here, and its callers (access/, storage/, cluster/, host/) do not
// change. test/parse-contract.test.ts pins what each relies on.
import type Parse from 'parse/node'
import { parseInternals } from './internals.js'
import type { ParseAuth, ParseConfig, RedisPubSubConfig } from './server-shapes.js'

/** Parse's Config of the application (a new one per call, as Parse builds per request); undefined when it is not running here. */
export function appConfig (appId: string): ParseConfig | undefined {
  return parseInternals().Config.get(appId)
}

/** Who an operation runs as: the master key, a user already known, or nobody. */
export interface AuthCaller { master?: boolean, user?: Parse.User, installationId?: string }

/** The Auth Parse builds for that caller (Auth.master, new Auth({ user }), Auth.nobody). */
export function authOf (config: ParseConfig, caller: AuthCaller): ParseAuth {
  if (caller.master) return parseInternals().AuthModule.master(config)
  if (caller.user) return new (parseInternals().AuthModule.Auth)({ config, isMaster: false, user: caller.user, installationId: caller.installationId })
  return parseInternals().AuthModule.nobody(config)
}

/** Parse's Auth for a session token (its user cache, else the database); Parse's error for an unknown or expired one. */
export async function authOfSession (config: ParseConfig, sessionToken: string, installationId?: string): Promise<ParseAuth> {
  return await parseInternals().AuthModule.getAuthForSessionToken({ config, sessionToken, installationId })
}

/** The roles of a user by id (`role:Name` each), as Parse's Auth loads them (with its role cache). */
export async function rolesOfUser (config: ParseConfig, user: Parse.User): Promise<string[]> {
  return await new (parseInternals().AuthModule.Auth)({ config, isMaster: false, user }).getUserRoles()
}

/** Empties Parse's process-wide schema cache (a server started after another must not inherit its schemas). */
export function clearSchemaCache (): void {
  parseInternals().SchemaCache.default.clear()
}

/**
 * Empties Parse's process-wide Cloud Code store. Parse Server runs the `cloud`
 * function again at each start, so the next server registers its own; what a
 * server before it registered must not linger (lib/forget-declarations.ts).
 */
export function forgetCloudCode (): void {
  parseInternals().triggers._unregisterAll()
}

/** Parse's /batch: how an inner request's path becomes the path its router runs, for a batch at `batchPath`. */
export function batchRoutingPath (batchPath: string, serverURL: string, publicServerURL: string | undefined): (requestPath: string) => string {
  return parseInternals().makeBatchRoutingPathFunction(batchPath, serverURL, publicServerURL)
}

/**
 * Runs `after` once each afterSave or afterDelete of _Role has run: the
 * application's own trigger (kept, with its validator) runs inside the kit's.
 */
export function afterRoleWrites (appId: string, after: () => Promise<void>): void {
  const { triggers } = parseInternals()
  for (const type of [triggers.Types.afterSave, triggers.Types.afterDelete]) {
    const existing = triggers.getTrigger('_Role', type, appId)
    const validator = triggers.getValidator(`${type}._Role`, appId)
    // Replaced on purpose (the application's trigger runs inside ours): no "duplicate" warning.
    if (existing) triggers.removeTrigger(type, '_Role', appId)
    triggers.addTrigger(type, '_Role', async (request: unknown) => {
      try {
        return await existing?.(request)
      } finally {
        await after()
      }
    }, appId, validator)
  }
}

/**
 * Drops the role lists Parse keeps for its cacheTTL. Parse drops them itself when
 * a _Role is saved, not when one is deleted: its members kept the role meanwhile.
 */
export async function forgetRoleLists (config: ParseConfig): Promise<void> {
  await config.cacheController?.role.clear()
}

/** Parse's Redis client for publishing LiveQuery events. */
export function liveQueryPublisher (config: RedisPubSubConfig): unknown {
  return parseInternals().RedisPubSub.createPublisher(config)
}

/** Parse's Redis client for hearing LiveQuery events. */
export function liveQuerySubscriber (config: RedisPubSubConfig): unknown {
  return parseInternals().RedisPubSub.createSubscriber(config)
}

/** Whether `field` is one of the columns Parse gives `className` itself (not counting those of every class). */
export function isParseClassColumn (className: string, field: string): boolean {
  return Boolean(parseInternals().SchemaRules.defaultColumns[className]?.[field])
}

/** What a run started by jobStatusWriter holds besides Parse's own request: its row already has the params and source. */
export interface StartedJobRequest {
  params: Record<string, unknown>
  jobName: string
  jobId: string
  message: (text: string) => Promise<unknown>
  log: unknown
  /** The row was written with the run's params and source: the job need not write them again. */
  rowComplete: true
  /** The starter holds the run's lease (taken with its batch's, with or before the row) and drops it once the run's end is recorded. */
  leaseHeld: boolean
  /** Writes the run's end on its row (straight to the adapter: see jobStatusWriter; or with its lease dropped: see jobRunStarter); absent, endJobRun does. */
  recordEnd?: (end: RunEndRow) => Promise<void>
}

/** What the kit asks of Parse's storage adapter for _JobStatus rows (the calls DatabaseController makes after its checks). */
interface JobStatusAdapter {
  createObject (className: string, schema: unknown, object: Record<string, unknown>, transactionalSession?: unknown): Promise<unknown>
  updateObjectsByQuery (className: string, schema: unknown, query: Record<string, unknown>, update: Record<string, unknown>, transactionalSession?: unknown): Promise<unknown>
}

interface JobStatusSchemaCalls {
  getOneSchema (className: string, allowVolatileClasses?: boolean): Promise<unknown>
}

/** Writes the _JobStatus rows of queued runs: the class's schema read once for a batch, each row written by the storage adapter. */
export interface JobStatusWriter {
  /**
   * Starts a run of a registered job in this process, as Parse's POST /jobs does
   * (FunctionsRouter.handleCloudJob: a "running" _JobStatus row, then the function
   * on the next tick), without a routed request, and with the run's params and
   * source on the row from its first write. Answers the run's _JobStatus id
   * (`row.jobId` when given: see newJobRunId).
   */
  start (jobName: string, params: Record<string, unknown>, row: { params: Record<string, unknown>, source: string, jobId?: string, leaseHeld?: boolean }): Promise<string>
}

/**
 * A writer for a batch of runs. Parse's DatabaseController builds a
 * SchemaController for every create and update (loadSchema keeps none between
 * calls) and copies, walks and re-reads each row; the rows here are the kit's
 * own, of fixed fields, so they go straight to the adapter with the schema
 * read once (the class made first, as DatabaseController.create would).
 */
export async function jobStatusWriter (appId: string): Promise<JobStatusWriter> {
  const config = parseInternals().Config.get(appId)
  if (!config) throw new Error(`Parse is not running application ${appId}`)
  const controller = await (await config.database.loadSchema()).enforceClassExists('_JobStatus')
  const rules = parseInternals().SchemaRules as unknown as { convertSchemaToAdapterSchema (schema: unknown): unknown }
  const schema = rules.convertSchemaToAdapterSchema(structuredClone(await (controller as unknown as JobStatusSchemaCalls).getOneSchema('_JobStatus', true)))
  const adapter = config.database.adapter as JobStatusAdapter
  const end = async (jobId: string, outcome: RunEndRow): Promise<void> => {
    await adapter.updateObjectsByQuery('_JobStatus', schema, { objectId: jobId }, endUpdate(outcome))
  }
  return {
    async start (jobName, params, row) {
      const job = registeredJob(appId, jobName)
      const jobId = row.jobId ?? parseInternals().cryptoUtils.newObjectId(config.objectIdSize)
      // The fields Parse's jobStatusHandler writes (no updatedAt), locked down the same way (ACL {}: no reader, no writer), plus params and source.
      const createdAt = { __type: 'Date', iso: new Date().toISOString() }
      await adapter.createObject('_JobStatus', schema, { objectId: jobId, jobName, status: 'running', source: row.source, params: row.params, createdAt, _rperm: [], _wperm: [] })
      runJob(job, startedRequest(config, jobName, params, jobId, row.leaseHeld === true, end))
      return jobId
    }
  }
}

/** Whether Parse has a job of this name (the kit's @Job, a built-in, or the application's own Parse.Cloud.job). */
export function jobRegistered (appId: string, jobName: string): boolean {
  return parseInternals().triggers.getJob(jobName, appId) !== undefined
}

function registeredJob (appId: string, jobName: string): (request: StartedJobRequest) => unknown {
  const job = parseInternals().triggers.getJob(jobName, appId)
  if (!job) throw new Error(`the job "${jobName}" is not registered with Parse (application ${appId})`)
  return job
}

/** Runs of one registered job whose rows and leases their starter writes itself (a batch of queued runs). */
export interface JobRunStarter {
  /** A new _JobStatus id, as Parse draws one (the starter writes the row under it). */
  newId (): string
  /**
   * Runs the job whose "running" row (with its params and source) and lease
   * are written, as Parse runs one after writing its row (on the next tick);
   * `recordEnd` writes the run's end (and drops its lease).
   */
  run (params: Record<string, unknown>, jobId: string, recordEnd: (end: RunEndRow) => Promise<void>): void
}

/** Parse's config and the job are looked up once for a batch: Config.get builds a new Config (and DatabaseController) at each call. */
export function jobRunStarter (appId: string, jobName: string): JobRunStarter {
  const config = parseInternals().Config.get(appId)
  if (!config) throw new Error(`Parse is not running application ${appId}`)
  const job = registeredJob(appId, jobName)
  return {
    newId: () => parseInternals().cryptoUtils.newObjectId(config.objectIdSize),
    run: (params, jobId, recordEnd) => runJob(job, startedRequest(config, jobName, params, jobId, true, (_jobId, end) => recordEnd(end)))
  }
}

function startedRequest (config: ParseConfig, jobName: string, params: Record<string, unknown>, jobId: string, leaseHeld: boolean, end?: (jobId: string, outcome: RunEndRow) => Promise<void>): StartedJobRequest {
  return {
    params,
    jobName,
    jobId,
    log: config.loggerController,
    rowComplete: true,
    leaseHeld,
    ...(end ? { recordEnd: (outcome: RunEndRow) => end(jobId, outcome) } : {}),
    message: async (text) => {
      if (typeof text === 'string' && text) await config.database.update('_JobStatus', { objectId: jobId }, { message: text })
    }
  }
}

function runJob (job: (request: StartedJobRequest) => unknown, request: StartedJobRequest): void {
  // The kit's job handler (jobs/handler.ts) writes the run's end itself (endJobRun) and never settles what it answers.
  process.nextTick(() => { Promise.resolve().then(() => job(request)).catch(() => {}) })
}

/** A run's end as its _JobStatus row takes it. */
export interface RunEndRow { status: string, finishedAt: Date, message?: string }

function endUpdate ({ finishedAt, message, status }: RunEndRow): Record<string, unknown> {
  return { status, finishedAt: { __type: 'Date', iso: finishedAt.toISOString() }, ...(message !== undefined ? { message } : {}) }
}

/** Writes a run's end on its _JobStatus row as Parse's own status handler does (one update: no REST round trip, no triggers). */
export async function endJobRun (appId: string, jobId: string, end: RunEndRow): Promise<void> {
  const config = parseInternals().Config.get(appId)
  if (!config) throw new Error(`Parse is not running application ${appId}`)
  await config.database.update('_JobStatus', { objectId: jobId }, endUpdate(end))
}

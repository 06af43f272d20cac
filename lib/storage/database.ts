// Chooses and opens the database. This folder is the only place that knows
// which database is running; everything else sees a Parse storage adapter.
import path from 'node:path'
import '../parse/no-log-files.js' // before parse-server loads
import { parseServerPackage } from '../parse/parse-main.js'
import { mongoStorageAdapterClass, postgresStorageAdapterClass, type MongoAdapter, type PostgresAdapter } from '../parse/internals.js'
import { clearSchemaCache } from '../parse/parse-calls.js'
import { startEmbeddedPostgres, type EmbeddedPostgres } from './postgres/embedded.js'
import { pingPostgres, postgresPoolSize, postgresProbe, waitForPostgresPool } from './postgres/pool.js'
import { boundedPoolOptions } from './postgres/bounded.js'
import { markConnectionWaits } from './postgres/connection-waits.js'
import { holdPostgresSchemaLock } from './postgres/schema-lock.js'
import { keepArrayOrder } from './postgres/array-operations.js'
import { pgDatabase } from '../parse/adapter-internals.js'
import { wrapAdapter } from './adapter.js'
import { pingMongo, probeMongo } from './mongo/probe.js'
import { boundedMongoOptions, mongoPoolSize } from './mongo/bounded.js'
import { boundedGridFS } from './mongo/files.js'
import { guardSchemaStream } from './mongo/schema-stream.js'
import { watchAvailability, type DatabaseAvailability } from './availability.js'
import { databaseKindOf, redactURI, type DatabaseKind } from './kind.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'
import { DatabaseUnreachableError, OptionInvalidError } from '../errors.js'

export const DATABASE_URI_PROBLEM = 'must start with postgres://, mongodb:// or mongodb+srv:// (from the option or DATABASE_URI)'

export type { DatabaseKind }

export interface DatabaseOptions {
  /** postgres://…, mongodb://… or mongodb+srv://…; unset starts the embedded PostgreSQL. */
  databaseURI?: string
  /** Where the embedded PostgreSQL keeps its files (default `.data/postgres` in the working directory). */
  dataDir?: string
  /** Embedded database without fsync, for tests. */
  ephemeral?: boolean
  production?: boolean
  onNotice?: (line: string) => void
  /** Several instances: Parse reloads its schema cache when another instance changes the schema (PostgreSQL LISTEN/NOTIFY, MongoDB change stream). */
  schemaHooks?: boolean
  /** Longest a database call may wait for an answer before it fails as unavailable (503); default 15. */
  timeoutSeconds?: number
  /** Connections in the pool (pg `max`, MongoDB maxPoolSize); unset: the URI's own setting, else the driver's default. */
  poolSize?: number
}

interface OpenDatabase {
  /** The connection string, with any password replaced by `***`. */
  displayURI: string
  /** Where Parse.File contents go: GridFS on MongoDB, a directory beside the data on PostgreSQL. */
  filesAdapter: unknown
  /** Whether the database can be reached right now (readiness, 503s); recovers by itself. */
  availability: DatabaseAvailability
  /** Connections this instance's pool may open (for the boot line). */
  poolSize: number
  /**
   * Serializes first boots between instances on this database: held from the
   * schema step until Parse's migration is verified, then released (close()
   * releases it too, after a failed boot). On PostgreSQL an advisory lock
   * (postgres/schema-lock.ts); on MongoDB nothing, as Parse's initialization
   * there is made of upserts and index creations that tolerate a second
   * instance doing the same.
   */
  holdSchemaLock(onWait?: () => void): Promise<() => Promise<void>>
  /** Call once Parse Server has started: redefines what Parse's initialization defined that the kit does otherwise (PostgreSQL's array functions). */
  afterParseStart(): Promise<void>
  /** Call after Parse Server has shut down: waits for connections to close, then stops an embedded server. */
  close(): Promise<void>
}

export interface PostgresDatabase extends OpenDatabase {
  kind: 'postgres'
  /** Whether the kit started this PostgreSQL itself (no databaseURI). */
  embedded: boolean
  /** The embedded PostgreSQL's data directory as it runs (it may have moved to a cache directory the OS user postgres can reach). */
  dataDir?: string
  /** Parse's adapter for this database, wrapped for transactions and version checks. */
  adapter: PostgresAdapter
}

export interface MongoDatabase extends OpenDatabase {
  kind: 'mongo'
  embedded: false
  dataDir?: undefined
  /** Parse's adapter for this database, wrapped for transactions and version checks. */
  adapter: MongoAdapter
}

/** The open database; `kind` tells which adapter it holds. */
export type Database = PostgresDatabase | MongoDatabase

export function databaseKind (uri: string): DatabaseKind {
  const kind = databaseKindOf(uri)
  // resolveOptions refused any other scheme before boot.
  if (!kind) throw new OptionInvalidError(`kitPlugin option "databaseURI": ${DATABASE_URI_PROBLEM} (got "${redact(uri)}")`)
  return kind
}

/** The database a kit opened (index and validator helpers work on it); forgotten when it closes. */
const openedPart = statePart('database', () => ({ database: undefined as Database | undefined }))

/** The database of the given kit, by default the one running in this process. */
export function currentDatabase (state: KitState = currentKitState()): Database | undefined {
  return state.get(openedPart).database
}

/** Opens the database and records it as the kit's database (by default the running one's) until it closes. */
export async function openDatabase (options: DatabaseOptions, state: KitState = currentKitState()): Promise<Database> {
  const database = await open(options)
  const opened = state.get(openedPart)
  opened.database = database
  const close = database.close
  database.close = async () => {
    if (opened.database === database) opened.database = undefined
    await close()
  }
  return database
}

async function open (options: DatabaseOptions): Promise<Database> {
  const dataDir = path.resolve(options.dataDir ?? path.join('.data', 'postgres'))
  const filesDir = path.join(path.dirname(dataDir), 'files')
  if (options.databaseURI) {
    const kind = databaseKind(options.databaseURI)
    if (kind === 'mongo') await probeMongo(options.databaseURI, redact(options.databaseURI), options.onNotice ?? (() => {}))
    const database = connect(options.databaseURI, undefined, filesDir, options)
    if (kind === 'postgres') await answersOrClose(database, options.databaseURI)
    return database
  }
  if (options.production) {
    throw new OptionInvalidError('No database configured: set DATABASE_URI (or the databaseURI option) in production. The embedded PostgreSQL is for development and tests only.')
  }
  const embedded = await startEmbeddedPostgres({ dataDir, ephemeral: options.ephemeral, onNotice: options.onNotice })
  return connect(embedded.uri, embedded, filesDir, options)
}

/** A PostgreSQL that does not answer at boot fails boot naming where it was looked for (never "answering 503": nothing is served yet). */
async function answersOrClose (database: Database, uri: string): Promise<void> {
  try {
    await pingPostgres(database.adapter)
  } catch (error) {
    await database.close().catch(() => {})
    let where = redact(uri)
    try {
      const url = new URL(uri)
      where = `${url.hostname}:${url.port || '5432'}`
    } catch {}
    const refused = loginRefusal(error, uri)
    if (refused) throw new DatabaseUnreachableError(`PostgreSQL at ${where} ${refused}`)
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new DatabaseUnreachableError(`Cannot reach PostgreSQL at ${where} (${reason}). Start it, or point DATABASE_URI elsewhere.`)
  }
}

/** A PostgreSQL that answered but refused the login (SQLSTATE class 28, or 3D000): it runs, so "start it" would mislead. */
function loginRefusal (error: unknown, uri: string): string | undefined {
  const code = (error as { code?: unknown }).code
  let user = ''
  let database = ''
  try {
    const url = new URL(uri)
    user = decodeURIComponent(url.username)
    database = decodeURIComponent(url.pathname.replace(/^\//, ''))
  } catch {}
  const who = user ? `user "${user}"` : 'the user'
  if (code === '28P01') return `refused ${who}: wrong password (28P01). Fix the user and password in DATABASE_URI.`
  if (code === '28000') return `refused ${who} (28000: no such role, or pg_hba.conf allows it no connection from here). Fix the user in DATABASE_URI, or the server's pg_hba.conf.`
  if (code === '3D000') return `has no database${database ? ` "${database}"` : ''} (3D000). Create it, or fix the database name in DATABASE_URI.`
  return undefined
}

function notice (options: DatabaseOptions): (line: string) => void {
  return options.onNotice ?? ((line) => process.stderr.write(`${line}\n`))
}

/** Bounded waits, so that a database that stops answering makes calls fail (503) instead of hang. */
export const DEFAULT_TIMEOUT_SECONDS = 10

function connect (uri: string, embedded: EmbeddedPostgres | undefined, filesDir: string, options: DatabaseOptions): Database {
  const kind = databaseKind(uri)
  const onNotice = notice(options)
  const hooks = options.schemaHooks === true ? { enableSchemaHooks: true } : {}
  const timeoutMs = (options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000
  if (kind === 'postgres') {
    const bound = boundedPoolOptions(timeoutMs)
    const poolSize = postgresPoolSize(uri, options.poolSize)
    const PostgresStorageAdapter = postgresStorageAdapterClass()
    const raw = new PostgresStorageAdapter({ uri, collectionPrefix: '', databaseOptions: { ...bound, max: poolSize, ...hooks } })
    markConnectionWaits(raw, timeoutMs)
    const probe = postgresProbe(raw)
    const availability = watchAvailability({ probe: probe.ping, onNotice })
    const adapter = wrapAdapter(raw, kind, availability, timeoutMs)
    const held = new Set<() => Promise<void>>()
    return {
      kind: 'postgres',
      displayURI: redact(uri),
      embedded: embedded !== undefined,
      dataDir: embedded?.dataDir,
      adapter,
      filesAdapter: filesOnDisk(filesDir),
      availability,
      poolSize,
      async holdSchemaLock (onWait?: () => void) {
        const release = await holdPostgresSchemaLock(pgDatabase(raw)!, onWait)
        const once = async () => { held.delete(once); await release() }
        held.add(once)
        return once
      },
      afterParseStart: async () => keepArrayOrder(pgDatabase(raw)!),
      async close () {
        availability.close()
        await Promise.all([...held].map((release) => release()))
        await probe.close()
        await waitForPostgresPool(adapter)
        await embedded?.stop()
      }
    }
  }
  const poolSize = mongoPoolSize(uri, options.poolSize)
  const MongoStorageAdapter = mongoStorageAdapterClass()
  const raw = new MongoStorageAdapter({ uri, collectionPrefix: '', mongoOptions: { ...boundedMongoOptions(uri, timeoutMs), maxPoolSize: poolSize, ...hooks } })
  const availability = watchAvailability({ probe: () => pingMongo(raw), onNotice })
  if (options.schemaHooks === true) guardSchemaStream(raw, { outage: (error) => availability.noteOutage(error), notice: onNotice, forgetSchema: clearSchemaCache })
  const adapter = wrapAdapter(raw, kind, availability, timeoutMs)
  const filesAdapter = boundedGridFS(uri, timeoutMs, availability)
  return {
    kind: 'mongo',
    displayURI: redact(uri),
    embedded: false,
    adapter,
    filesAdapter,
    availability,
    poolSize,
    holdSchemaLock: async () => async () => {},
    afterParseStart: async () => {},
    async close () {
      availability.close()
      // Parse's shutdown closes both clients; after a failed boot nobody did. Closing twice is harmless.
      await adapter.handleShutdown()
      await (filesAdapter as { handleShutdown?: () => Promise<void> }).handleShutdown?.()
    }
  }
}

export function redact (uri: string): string {
  return redactURI(uri)
}

/** The filesystem adapter only takes a directory relative to `./files`; express ours that way. */
function filesOnDisk (directory: string): unknown {
  return new (parseServerPackage().FileSystemAdapter)({ filesSubDirectory: path.relative(path.resolve('files'), directory) })
}

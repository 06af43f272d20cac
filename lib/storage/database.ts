// Chooses and opens the database. This folder is the only place that knows
// which database is running; everything else sees a Parse storage adapter.
import path from 'node:path'
import { FileSystemAdapter } from 'parse-server'
import { GridFSBucketAdapter, MongoStorageAdapter, PostgresStorageAdapter } from '../host/parse-internals.js'
import { startEmbeddedPostgres, type EmbeddedPostgres } from './postgres/embedded.js'
import { waitForPostgresPool } from './postgres/pool.js'
import { wrapAdapter } from './adapter.js'
import { probeMongo } from './mongo/probe.js'

export type DatabaseKind = 'postgres' | 'mongo'

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
}

export interface Database {
  kind: DatabaseKind
  /** The connection string, with any password replaced by `***`. */
  displayURI: string
  embedded: boolean
  /** Parse's adapter for this database, wrapped for transactions and version checks. */
  adapter: PostgresStorageAdapter | MongoStorageAdapter
  /** Where Parse.File contents go: GridFS on MongoDB, a directory beside the data on PostgreSQL. */
  filesAdapter: unknown
  /** Call after Parse Server has shut down: waits for connections to close, then stops an embedded server. */
  close(): Promise<void>
}

export function databaseKind (uri: string): DatabaseKind {
  if (/^postgres(ql)?:\/\//i.test(uri)) return 'postgres'
  if (/^mongodb(\+srv)?:\/\//i.test(uri)) return 'mongo'
  throw new Error(`databaseURI must start with postgres://, mongodb:// or mongodb+srv:// (got "${redact(uri)}")`)
}

let current: Database | undefined

/** The database kitPlugin opened (index and validator helpers work on it). */
export function currentDatabase (): Database | undefined {
  return current
}

export async function openDatabase (options: DatabaseOptions): Promise<Database> {
  const database = await open(options)
  current = database
  const close = database.close
  database.close = async () => {
    if (current === database) current = undefined
    await close()
  }
  return database
}

async function open (options: DatabaseOptions): Promise<Database> {
  const dataDir = path.resolve(options.dataDir ?? path.join('.data', 'postgres'))
  const filesDir = path.join(path.dirname(dataDir), 'files')
  if (options.databaseURI) {
    if (databaseKind(options.databaseURI) === 'mongo') await probeMongo(options.databaseURI, redact(options.databaseURI), options.onNotice ?? (() => {}))
    return connect(options.databaseURI, undefined, filesDir, options.schemaHooks === true)
  }
  if (options.production) {
    throw new Error('No database configured: set DATABASE_URI (or the databaseURI option) in production. The embedded PostgreSQL is for development and tests only.')
  }
  const embedded = await startEmbeddedPostgres({ dataDir, ephemeral: options.ephemeral, onNotice: options.onNotice })
  return connect(embedded.uri, embedded, filesDir, options.schemaHooks === true)
}

function connect (uri: string, embedded: EmbeddedPostgres | undefined, filesDir: string, schemaHooks = false): Database {
  const kind = databaseKind(uri)
  const hooks = schemaHooks ? { enableSchemaHooks: true } : {}
  if (kind === 'postgres') {
    const adapter = wrapAdapter(new PostgresStorageAdapter({ uri, collectionPrefix: '', databaseOptions: hooks }), kind)
    return {
      kind,
      displayURI: redact(uri),
      embedded: embedded !== undefined,
      adapter,
      filesAdapter: filesOnDisk(filesDir),
      async close () {
        await waitForPostgresPool(adapter)
        await embedded?.stop()
      }
    }
  }
  const adapter = wrapAdapter(new MongoStorageAdapter({ uri, collectionPrefix: '', mongoOptions: hooks }), kind)
  const filesAdapter = new GridFSBucketAdapter(uri)
  return {
    kind,
    displayURI: redact(uri),
    embedded: false,
    adapter,
    filesAdapter,
    async close () {
      // Parse's shutdown closes both clients; after a failed boot nobody did. Closing twice is harmless.
      await adapter.handleShutdown()
      await (filesAdapter as { handleShutdown?: () => Promise<void> }).handleShutdown?.()
    }
  }
}

export function redact (uri: string): string {
  return uri.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@')
}

/** The filesystem adapter only takes a directory relative to `./files`; express ours that way. */
function filesOnDisk (directory: string): unknown {
  return new FileSystemAdapter({ filesSubDirectory: path.relative(path.resolve('files'), directory) })
}

// What the kit reads of Parse's storage adapters beyond the methods Parse
// Server itself calls: pg-promise's client and formatter on PostgreSQL, the
// driver's database and Parse's collection wrapper on MongoDB, and the
// transaction session Parse's PostgreSQL adapter commits. One declaration per
// shape; test/parse-contract.test.ts checks every name against Parse.
import type { ClientSession, Collection, Db } from 'mongodb'

/** Queries on a pg-promise context: the pool's client, one pooled connection, or a transaction. */
export interface PgQueries {
  one (query: string, values?: unknown): Promise<Record<string, unknown>>
  none (query: string, values?: unknown): Promise<null>
  any (query: string, values?: unknown): Promise<Array<Record<string, unknown>>>
}

/** pg-promise's transaction context, as Parse's commit hands its batch to it. */
export interface PgTransaction extends PgQueries {
  batch (values: unknown[]): Promise<unknown>
}

/** One connection taken out of the pool (pg-promise `db.connect()`). */
export interface PgConnection extends PgQueries {
  client: { connectionParameters?: { query_timeout?: number | false } }
  done (kill?: boolean): unknown
}

/** node-postgres's pool behind pg-promise (`db.$pool`). */
export interface PgPool {
  ending: boolean
  ended: boolean
  totalCount: number
  end (): Promise<void>
  on (event: 'error', listener: (error: Error) => void): unknown
}

/** pg-promise's database object: Parse's PostgreSQL adapter keeps it as `_client`. */
export interface PgDatabase extends PgQueries {
  tx (callback: (t: PgTransaction) => Promise<unknown>): Promise<unknown>
  connect (): Promise<PgConnection>
  $pool: PgPool
}

/**
 * The session Parse's PostgreSQL adapter builds in createTransactionalSession
 * and settles in commitTransactionalSession / abortTransactionalSession.
 */
export interface PostgresTransactionalSession {
  t: PgTransaction
  batch: unknown[]
  promise: Promise<unknown>
  resolve: (value: unknown) => void
  result: Promise<unknown>
}

/** Transactions as every Parse storage adapter offers them. */
export interface TransactionalAdapter {
  createTransactionalSession (): Promise<unknown>
  commitTransactionalSession (session: unknown): Promise<unknown>
  abortTransactionalSession (session: unknown): Promise<unknown>
}

/** The methods of both adapters that the kit calls itself. */
export interface StorageAdapter extends TransactionalAdapter {
  find (className: string, schema: unknown, query: Record<string, unknown>, options: Record<string, unknown>): Promise<unknown[]>
  ensureUniqueness (className: string, schema: unknown, fieldNames: string[]): Promise<void>
  handleShutdown (): Promise<void> | void
  /** The stored schema (Parse's `_SCHEMA`), as model/schema-boot.ts compares it with the declarations. */
  getAllClasses (): Promise<Array<{ className: string, fields: Record<string, { type: string, targetClass?: string }>, classLevelPermissions?: Record<string, unknown> }>>
}

export interface PostgresAdapter extends StorageAdapter {
  _client: PgDatabase
  /** pg-promise's root object: `as.format` renders a query with its values. */
  _pgp: { as: { format (query: string, values?: unknown): string } }
}

/** Parse's wrapper around a driver collection (MongoCollection). */
export interface MongoCollectionWrapper {
  _mongoCollection: Collection
}

export interface MongoAdapter extends StorageAdapter {
  /** Set by connect(). */
  database: Db
  _collectionPrefix: string
  connect (): Promise<unknown>
  _adaptiveCollection (name: string): Promise<MongoCollectionWrapper>
  handleError (error: unknown): never
}

/** The session a MongoDB transaction runs on (the driver's, from createTransactionalSession). */
export type MongoTransactionalSession = ClientSession

export interface PostgresAdapterClass {
  new (options: { uri: string, collectionPrefix?: string, databaseOptions?: Record<string, unknown> }): PostgresAdapter
}
export interface MongoAdapterClass {
  new (options: { uri: string, collectionPrefix?: string, mongoOptions?: Record<string, unknown> }): MongoAdapter
}
export interface GridFSBucketAdapterClass {
  new (uri: string, mongoOptions?: Record<string, unknown>): { handleShutdown?: () => Promise<void> }
}

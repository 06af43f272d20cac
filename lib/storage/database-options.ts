// kitPlugin's database options: the URI, the request-path timeout and the pool
// size, each from the option or its environment variable.
import { databaseKindOf, redactURI } from './kind.js'

export const TIMEOUT_PROBLEM = 'must be a number of seconds above 0 and at most 3600 (DATABASE_TIMEOUT or the option)'
export const POOL_SIZE_PROBLEM = 'must be a whole number of connections from 1 to 1000 (DATABASE_POOL_SIZE or the option)'

/** Seconds, from the option or DATABASE_TIMEOUT: a positive number, at most one hour. */
export function databaseTimeout (value: unknown, fail: (option: string, problem: string) => Error): number | undefined {
  if (value === undefined || value === '') return undefined
  const seconds = typeof value === 'string' ? Number(value) : value
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw fail('databaseTimeout', `${TIMEOUT_PROBLEM} (got ${JSON.stringify(value)})`)
  }
  return seconds
}

/** Connections, from the option or DATABASE_POOL_SIZE: a whole number from 1 to 1000. */
export function databasePoolSize (value: unknown, fail: (option: string, problem: string) => Error): number | undefined {
  if (value === undefined || value === '') return undefined
  const size = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 1000) {
    throw fail('databasePoolSize', `${POOL_SIZE_PROBLEM} (got ${JSON.stringify(value)})`)
  }
  return size
}

/** A URI the kit can open (PostgreSQL or MongoDB); none at all only outside production (the embedded PostgreSQL). */
export function checkDatabaseURI (databaseURI: string | undefined, production: boolean, fail: (option: string, problem: string) => Error): void {
  if (databaseURI !== undefined && !databaseKindOf(databaseURI)) {
    throw fail('databaseURI', `must start with postgres://, mongodb:// or mongodb+srv:// (from the option or DATABASE_URI; got "${redactURI(databaseURI)}")`)
  }
  if (databaseURI === undefined && production) {
    throw fail('databaseURI', 'required in production: set DATABASE_URI (or the databaseURI option). The embedded PostgreSQL is for development and tests only.')
  }
}

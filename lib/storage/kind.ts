// The two databases the kit runs on; a leaf so the adapter wrapper and the
// opener can both name it without importing each other.
export type DatabaseKind = 'postgres' | 'mongo'

/** The database a connection string names by its scheme, or undefined for a scheme the kit cannot use. */
export function databaseKindOf (uri: string): DatabaseKind | undefined {
  if (/^postgres(ql)?:\/\//i.test(uri)) return 'postgres'
  if (/^mongodb(\+srv)?:\/\//i.test(uri)) return 'mongo'
  return undefined
}

/** A connection string with any password replaced by `***`, for messages and logs. */
export function redactURI (uri: string): string {
  return uri.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@')
}

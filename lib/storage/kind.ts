// The two databases the kit runs on; a leaf so the adapter wrapper and the
// opener can both name it without importing each other.
export type DatabaseKind = 'postgres' | 'mongo'

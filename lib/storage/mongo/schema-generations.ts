// The schema generations on MongoDB: one document per declaration the
// database was reconciled to, its generation number as _id, so two instances
// appending at once cannot both take it.
import type { Db } from 'mongodb'
import type { GenerationRecord } from '../../model/schema-generations.js'

const COLLECTION = 'fpk_schema_generations'
const DUPLICATE_KEY = 11000

interface GenerationDocument { _id: number, fingerprint: string, version?: number, declaredAt: Date }

function generations (db: Db) {
  return db.collection<GenerationDocument>(COLLECTION)
}

export async function mongoGenerations (db: Db): Promise<GenerationRecord[]> {
  const documents = await generations(db).find({}).toArray()
  // One document per declaration ever booted: few enough to order here.
  return documents.map(({ _id: generation, fingerprint, version, declaredAt }) => ({
    generation,
    fingerprint,
    ...(typeof version === 'number' ? { version } : {}),
    declaredAt
  })).sort((a, b) => a.generation - b.generation)
}

/** false when another instance took that generation first. */
export async function appendMongoGeneration (db: Db, record: Omit<GenerationRecord, 'declaredAt'>): Promise<boolean> {
  try {
    await generations(db).insertOne({ _id: record.generation, fingerprint: record.fingerprint, ...(record.version !== undefined ? { version: record.version } : {}), declaredAt: new Date() })
    return true
  } catch (error) {
    if ((error as { code?: number }).code === DUPLICATE_KEY) return false
    throw error
  }
}

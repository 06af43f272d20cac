// Schema generations: the database records which declaration it was
// reconciled to, and in what order, so that an older version of the
// application restarted during a rolling deploy leaves the newer schema alone.
// The rule lives in model/schema-generations.ts; this file reads and appends
// the record on whichever database runs (postgres/ and mongo/ schema-generations.ts).
import { pgDatabase } from '../parse/adapter-internals.js'
import type { MongoAdapter } from '../parse/internals.js'
import { describeStanding, standingOf, type GenerationRecord, type Standing } from '../model/schema-generations.js'
import { appendPostgresGeneration, postgresGenerations } from './postgres/schema-generations.js'
import { appendMongoGeneration, mongoGenerations } from './mongo/schema-generations.js'
import type { MongoDatabase, PostgresDatabase } from './database.js'
import { prepareSchema, type PreparedSchema, type SchemaConfig } from '../model/schema-boot.js'
import { fingerprintDeclarations } from '../model/schema-fingerprint.js'
import { allModels } from '../model/registry.js'

type SchemaDatabase = Pick<PostgresDatabase, 'kind' | 'adapter'> | Pick<MongoDatabase, 'kind' | 'adapter'>

export interface SchemaStanding {
  standing: Standing
  /**
   * Once the plan is accepted, before anything is applied: a newer declaration
   * becomes the next generation. Answers the boot line.
   */
  record (): Promise<string>
}

interface GenerationStore {
  history (): Promise<GenerationRecord[]>
  append (record: Omit<GenerationRecord, 'declaredAt'>): Promise<boolean>
}

function storeOf (database: SchemaDatabase): GenerationStore {
  if (database.kind === 'postgres') {
    const client = pgDatabase(database.adapter)!
    return { history: () => postgresGenerations(client), append: (record) => appendPostgresGeneration(client, record) }
  }
  const adapter = database.adapter as MongoAdapter
  const db = async () => { await adapter.connect(); return adapter.database }
  return { history: async () => mongoGenerations(await db()), append: async (record) => appendMongoGeneration(await db(), record) }
}

/** The recorded history, oldest first (empty on a database no boot reconciled yet). */
export async function schemaGenerationHistory (database: SchemaDatabase): Promise<GenerationRecord[]> {
  return storeOf(database).history()
}

/** The fingerprint of the loaded declarations under a schema configuration. */
export function declaredFingerprint (declared: SchemaConfig): string {
  return fingerprintDeclarations({ definitions: declared.definitions, models: allModels(), deleteExtraFields: declared.deleteExtraFields, recreateModifiedFields: declared.recreateModifiedFields })
}

/**
 * The boot's schema step: where the declarations stand, the plan checked
 * (model/schema-boot.ts), then a newer declaration recorded, all before
 * Parse migrates anything. `behind`: leave indexes and constraints alone too.
 */
export async function prepareSchemaGeneration (declared: SchemaConfig, database: SchemaDatabase, log: { info (line: string): void, warn (line: string): void }): Promise<PreparedSchema & { behind: boolean }> {
  const generation = await schemaStanding(database, declaredFingerprint(declared), declared.version)
  const behind = generation.standing.kind === 'behind'
  const prepared = await prepareSchema(declared, database.adapter as never, { behind })
  const line = await generation.record()
  if (behind) log.warn(line)
  else log.info(line)
  return { ...prepared, behind }
}

/** Where these declarations stand against the recorded generations. */
export async function schemaStanding (database: SchemaDatabase, fingerprint: string, version?: number): Promise<SchemaStanding> {
  const store = storeOf(database)
  let history: GenerationRecord[]
  try {
    history = await store.history()
  } catch (error) {
    // Parse's own migration will say more if the database is away; this boot does not hold it back.
    const reason = (error as Error)?.message ?? String(error)
    return { standing: { kind: 'newer' }, record: async () => `[schema] the schema generations could not be read (${reason}): this boot reconciles its declarations as the newest` }
  }
  const standing = standingOf(history, fingerprint, version)
  return {
    standing,
    async record () {
      let now = standing
      // Another instance of the same (or a newer) version may take the next number first: read again and place this one.
      for (let attempt = 0; attempt < 10 && now.kind === 'newer'; attempt++) {
        const generation = (now.latest?.generation ?? 0) + 1
        if (await store.append({ generation, fingerprint, version })) return describeStanding(now, fingerprint, generation)
        now = standingOf(await store.history(), fingerprint, version)
      }
      return describeStanding(now, fingerprint)
    }
  }
}

// Before Parse Server starts on MongoDB: is the server there, is it new enough
// for Parse Server 9, and is it a replica set? Parse would otherwise wait half
// a minute and fail vaguely, or run on a server it does not support.
import type { MongoAdapter } from '../../parse/internals.js'
import { DatabaseUnreachableError } from '../../errors.js'

/** Parse Server 9 supports MongoDB 7.0.16 and newer. */
export const MINIMUM_MONGO_VERSION = '7.0.16'

export async function probeMongo (uri: string, displayURI: string, notice: (line: string) => void): Promise<void> {
  // Imported here: a kit on PostgreSQL never loads the MongoDB driver (parse/lazy-subsystems.ts).
  const { MongoClient } = await import('mongodb')
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 })
  try {
    let hello: Record<string, unknown>
    try {
      hello = await client.db().admin().command({ hello: 1 })
    } catch (error) {
      throw new DatabaseUnreachableError(`Cannot reach MongoDB at ${displayURI}: ${(error as Error).message}. Start it, or point DATABASE_URI elsewhere.`)
    }
    const build = await client.db().admin().command({ buildInfo: 1 }).catch(() => undefined)
    if (typeof build?.version !== 'string') {
      notice(`[fastify-parse-kit] MongoDB at ${displayURI} did not tell its version (buildInfo); Parse Server 9 needs ${MINIMUM_MONGO_VERSION} or newer`)
    } else {
      const problem = mongoVersionProblem(build.version)
      if (problem) throw new DatabaseUnreachableError(`MongoDB at ${displayURI}: ${problem}`)
    }
    if (!hello.setName && hello.msg !== 'isdbgrid') {
      notice(`[fastify-parse-kit] MongoDB at ${displayURI} is not a replica set: transactions and @ParseVersionField need one (see docker-compose.yml for a single-node replica set)`)
    }
  } finally {
    await client.close()
  }
}

/** One ping through Parse's own client: answers only when a server does. */
export async function pingMongo (adapter: object): Promise<void> {
  const mongo = adapter as MongoAdapter
  await mongo.connect()
  await mongo.database.command({ ping: 1 })
}

/** Why this server version cannot run Parse Server 9, or undefined when it can. */
export function mongoVersionProblem (version: string): string | undefined {
  const found = (version.match(/^(\d+)\.(\d+)\.(\d+)/) ?? []).slice(1).map(Number)
  const needed = MINIMUM_MONGO_VERSION.split('.').map(Number)
  if (found.length !== 3) return undefined // an unusual version string: let Parse try
  for (let i = 0; i < 3; i++) {
    if (found[i] > needed[i]) return undefined
    if (found[i] < needed[i]) {
      return `version ${version} is too old: Parse Server 9 needs MongoDB ${MINIMUM_MONGO_VERSION} or newer. Upgrade MongoDB (the generated docker-compose.yml runs a supported one).`
    }
  }
  return undefined
}

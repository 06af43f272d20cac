// Before Parse Server starts on MongoDB: is the server there, and is it a
// replica set? Parse would otherwise wait half a minute and fail vaguely.
import { MongoClient } from 'mongodb'

export async function probeMongo (uri: string, displayURI: string, notice: (line: string) => void): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 })
  try {
    const hello = await client.db().admin().command({ hello: 1 })
    if (!hello.setName && hello.msg !== 'isdbgrid') {
      notice(`[fastify-parse-kit] MongoDB at ${displayURI} is not a replica set: transactions and @ParseVersionField need one (see docker-compose.yml for a single-node replica set)`)
    }
  } catch (error) {
    throw new Error(`Cannot reach MongoDB at ${displayURI}: ${(error as Error).message}. Start it, or point DATABASE_URI elsewhere.`)
  } finally {
    await client.close()
  }
}

/** One ping through Parse's own client: answers only when a server does. */
export async function pingMongo (adapter: object): Promise<void> {
  const mongo = adapter as { connect (): Promise<unknown>, database: { command (command: object): Promise<unknown> } }
  await mongo.connect()
  await mongo.database.command({ ping: 1 })
}

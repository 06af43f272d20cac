// A database of its own for a kit, on one embedded PostgreSQL server that the
// test process starts once (from the template cluster) and stops when tap ends.
// startKit takes one for every kit on the PostgreSQL lane unless the test names
// a dataDir or databaseURI or asks for `ownDatabaseServer` (a reboot on a data
// directory, a killed or frozen PostgreSQL, server-wide settings): a server per
// kit costs about 1 CPU-s (copy, start and stop), a database cloned on the
// running server some 0.1. Each database is a clone of Parse's empty database
// of the template, so kits share no row and no schema. On the MongoDB lane it
// answers no option: startKit gives the kit its MongoDB database as usual.
import path from 'node:path'
import type { Test } from 'tap'
import pg from 'pg'
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../lib/storage/postgres/embedded.js'
import { lane, tempDir } from './kit.js'
import { clusterFromTemplate } from './pg-template.js'
import { atProcessEnd } from './process-teardown.js'

let server: Promise<EmbeddedPostgres> | undefined
let databases = 0

async function sharedServer (): Promise<EmbeddedPostgres> {
  server ??= (async () => {
    const dataDir = path.join(tempDir('fpk-shared-pg-'), 'postgres')
    await clusterFromTemplate(dataDir)
    const started = await startEmbeddedPostgres({ dataDir, ephemeral: true, onNotice: () => {} })
    // Stopped (and so waited for: its CPU is in this process's ledger line) once every test of the file has ended.
    atProcessEnd(() => started.stop())
    return started
  })()
  return await server
}

/** startKit's option for a new database of one kit on this process's shared server (PostgreSQL lane); none on the MongoDB lane. */
export async function sharedPostgres (t: Test): Promise<{ databaseURI?: string }> {
  if (lane.kind !== 'postgres') return {}
  const { uri } = await sharedServer()
  const name = `kit_${process.pid}_${++databases}`
  const template = new URL(uri)
  const admin = new URL(uri)
  admin.pathname = '/postgres' // cloning needs no session on the template database
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template.pathname.slice(1)}`)
  } finally {
    await client.end()
  }
  t.comment(`database ${name} on the file's shared PostgreSQL`)
  const own = new URL(uri)
  own.pathname = `/${name}`
  return { databaseURI: own.toString() }
}

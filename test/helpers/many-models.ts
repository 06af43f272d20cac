// Boots with many generated models (many-models-declare.ts), each in a process
// of its own, for boot-cost tests and the bench: the count of the statements
// Parse's pool sends, and what a boot process reports. Nothing here loads the
// kit: a test that only starts boot processes does not pay for it.
import path from 'node:path'
import { fork } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { childEntry } from './compiled-sources.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface StatementCounts {
  /** Every statement sent on Parse's pool (PostgreSQL), or every collection operation (MongoDB). */
  total: number
  /** Full reads of the stored schema: `SELECT * FROM "_SCHEMA"` (Parse's schema reload), a find on `_SCHEMA` with an empty filter. */
  schemaReads: number
  /** Writes to `_SCHEMA`: UPDATE, INSERT, DELETE; insertOne, updateOne, updateMany, findOneAndUpdate, deleteOne, deleteMany. */
  schemaWrites: number
}

const MONGO_READS = ['find', 'aggregate', 'countDocuments', 'estimatedDocumentCount', 'distinct', 'listIndexes']
const MONGO_WRITES = ['insertOne', 'insertMany', 'updateOne', 'updateMany', 'findOneAndUpdate', 'replaceOne', 'deleteOne', 'deleteMany', 'createIndex', 'createIndexes', 'dropIndex']

/**
 * Counts what Parse sends to the database until stop(): statements at
 * pg-promise's copy of node-postgres, collection operations at the MongoDB
 * driver's Collection.
 */
export function countStatements (): { counts: StatementCounts, stop: () => void } {
  const counts: StatementCounts = { total: 0, schemaReads: 0, schemaWrites: 0 }
  const restore: Array<() => void> = []
  const wrap = (proto: Record<string, unknown>, name: string, see: (self: any, args: unknown[]) => void) => {
    const original = proto[name] as ((...args: unknown[]) => unknown) | undefined
    if (typeof original !== 'function') return
    proto[name] = function (this: unknown, ...args: unknown[]) {
      see(this, args)
      return original.apply(this, args)
    }
    restore.push(() => { proto[name] = original })
  }
  // By package, not by path from ROOT: this module also runs from its compiled copy (compiled-sources.ts).
  const fromHere = createRequire(import.meta.url)
  const pg = createRequire(fromHere.resolve('pg-promise'))('pg')
  wrap(pg.Client.prototype, 'query', (_client, [config]) => {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | undefined)?.text
    if (typeof text !== 'string') return
    counts.total++
    if (/^\s*SELECT \* FROM "_SCHEMA"\s*$/i.test(text)) counts.schemaReads++
    if (/^\s*(UPDATE|INSERT INTO|DELETE FROM) "_SCHEMA"/i.test(text)) counts.schemaWrites++
  })
  const mongodb = createRequire(fromHere.resolve('parse-server/package.json'))('mongodb')
  const isSchema = (collection: { collectionName?: string }) => collection.collectionName?.endsWith('_SCHEMA') === true
  for (const name of MONGO_READS) {
    wrap(mongodb.Collection.prototype, name, (collection, [filter]) => {
      counts.total++
      if (isSchema(collection) && name === 'find' && Object.keys(filter ?? {}).length === 0) counts.schemaReads++
    })
  }
  for (const name of MONGO_WRITES) {
    wrap(mongodb.Collection.prototype, name, (collection) => {
      counts.total++
      if (isSchema(collection) && !name.includes('Index')) counts.schemaWrites++
    })
  }
  return { counts, stop: () => { for (const undo of restore.reverse()) undo() } }
}

/** What test/helpers/many-models-node.ts prints after this mark, as one JSON line. */
export const MANY_MODELS_MARK = 'MANY_MODELS_RESULT '

/** One boot of test/helpers/many-models-node.ts. */
export interface ManyModelsBoot {
  models: number
  version: number
  /** process.cpuUsage (user + system) around register + ready. */
  cpuMs: number
  wallMs: number
  /** Sent during register + ready. */
  boot: StatementCounts
  /** Sent from register until the declared indexes were applied after listen. */
  untilIndexed: StatementCounts
  stored?: Array<{ className: string, fields: Record<string, { type: string }>, classLevelPermissions?: Record<string, unknown> }>
}

/**
 * One boot in a process of its own (many-models-node.ts with `args`), as a
 * deploy starts one; answers what it printed after MANY_MODELS_MARK. `compiled`:
 * from the sources' plain-JavaScript copy (compiled-sources.ts), not under tsx.
 */
export async function forkManyModelsBoot (args: string[], env: NodeJS.ProcessEnv, label: string, compiled = false): Promise<ManyModelsBoot> {
  return (await forkBoots(args, env, label, compiled))[0]
}

/**
 * Two boots of one process (`args` plus `again`): the first, then `between()`
 * (a change to the database, say), then the second on the same declarations:
 * a boot process less where the second boot needs no process of its own.
 */
export async function forkManyModelsBootTwice (args: string[], env: NodeJS.ProcessEnv, label: string, between: () => Promise<void>, compiled = false): Promise<[ManyModelsBoot, ManyModelsBoot]> {
  const [first, second] = await forkBoots([...args, 'again'], env, label, compiled, between)
  if (!second) throw new Error(`${label}: the second boot printed no result`)
  return [first, second]
}

async function forkBoots (args: string[], env: NodeJS.ProcessEnv, label: string, compiled: boolean, between?: () => Promise<void>): Promise<ManyModelsBoot[]> {
  const source = path.join(ROOT, 'test', 'helpers', 'many-models-node.ts')
  const { file, execArgv } = compiled ? await childEntry(source) : { file: source, execArgv: ['--import', 'tsx/esm'] }
  return await new Promise((resolve, reject) => {
    const child = fork(file, args, { cwd: ROOT, env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    let output = ''
    child.stdout!.on('data', (chunk) => { output += chunk })
    child.stderr!.on('data', (chunk) => { output += chunk })
    // The child says when its first boot has closed; it boots again once told to.
    child.on('message', (message) => {
      if (message !== 'booted' || !between) return
      between().then(() => child.send('again'), (error: Error) => { output += `\nbetween the boots: ${error.stack}`; child.kill('SIGKILL') })
    })
    child.on('exit', (code, signal) => {
      const results = output.split('\n').filter((text) => text.startsWith(MANY_MODELS_MARK)).map((line) => JSON.parse(line.slice(MANY_MODELS_MARK.length)) as ManyModelsBoot)
      if (code === 0 && results.length > 0) resolve(results)
      else reject(new Error(`${label} failed (${signal ?? code}):\n${output.slice(-3000)}`))
    })
  })
}

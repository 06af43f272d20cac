// One boot with N generated models (test/helpers/many-models-declare.ts) in its own
// process, as a deploy starts one: kitPlugin registers, listens and applies the
// declared indexes, then closes. Prints one line after MANY_MODELS_MARK: the CPU
// this process spent in register + ready, the statements Parse's pool sent
// (during boot, and until the indexes were applied) and, with `report`, the
// stored schema of the generated classes as Parse's adapter reads it.
// With `twice`, the process boots a second kit once the first has closed, and
// reports that one: for setup boots nobody counts (a cold boot, then the boot
// that settles what it left), which need no process each. With `again`, it
// reports its boot, tells the parent (IPC) and boots again when the parent
// answers: a second counted boot after a change the parent made meanwhile.
// argv: N version [report] [twice] [again]. The database: DATABASE_URI, else embedded in KIT_DATA_DIR.
import Fastify from 'fastify'
import { kitPlugin } from '../../plugin.js'
import { currentDatabase } from '../../lib/storage/database.js'
import { MANY_MODELS_MARK, countStatements, type ManyModelsBoot } from './many-models.js'
import { declareManyModels } from './many-models-declare.js'

const [count, version, ...flags] = process.argv.slice(2)
const models = declareManyModels(Number(count), Number(version))
const dataDir = process.env.KIT_DATA_DIR

async function bootOnce (): Promise<ManyModelsBoot> {
  const counter = countStatements()
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'error' }, pluginTimeout: 300_000 })
  const started = performance.now()
  const cpu = process.cpuUsage()
  await app.register(kitPlugin, {
    appId: 'many-models',
    masterKey: 'many-models-master-key',
    models,
    ...(dataDir ? { dataDir, ephemeralDatabase: true } : {})
  })
  await app.ready()
  const { user, system } = process.cpuUsage(cpu)
  const wallMs = performance.now() - started
  const boot = { ...counter.counts }
  await app.listen({ port: 0, host: '127.0.0.1' })
  await app.kit.indexesApplied
  const untilIndexed = { ...counter.counts }
  counter.stop()
  const stored = flags.includes('report')
    ? (await currentDatabase()!.adapter.getAllClasses()).filter((schema) => schema.className.startsWith('Gen'))
    : undefined
  await app.close()
  return { models: models.length, version: Number(version), cpuMs: (user + system) / 1000, wallMs, boot, untilIndexed, stored }
}

if (flags.includes('twice')) await bootOnce()
const result = await bootOnce()
process.stdout.write(`\n${MANY_MODELS_MARK}${JSON.stringify(result)}\n`)
if (flags.includes('again')) {
  // The parent changes something between the two boots (forkManyModelsBootTwice), then says go.
  await new Promise<void>((resolve) => { process.once('message', () => resolve()); process.send!('booted') })
  const second = await bootOnce()
  process.stdout.write(`\n${MANY_MODELS_MARK}${JSON.stringify(second)}\n`)
}
process.exit(0)

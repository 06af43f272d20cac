// One scale measurement in its own process: N generated functions (classes
// decorated in a loop), then the time kitPlugin takes to boot with them, the
// time to the first OpenAPI document, and the resident memory after boot.
// argv: N dataDir [profileFile]. Prints its ScaleSample as one marked JSON line on stdout.
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import Fastify, { type FastifyInstance } from 'fastify'
import { kitPlugin, type KitOptions } from '../../plugin.js'
import { declareGeneratedFunctions } from './declare-generated.js'
import { GENERATED_URL_PREFIXES } from './generated-functions.js'
import { PhaseProfiler } from './profiler.js'
import { APP_ID, MASTER_KEY, MOUNT, ROOT, SCALE_RESULT_MARK, memorySample, type ScaleSample } from './shared.js'

const [countArg, dataDir, profileFile] = process.argv.slice(2)
const count = Number(countArg)
if (!Number.isInteger(count) || count < 0 || !dataDir) throw new Error('usage: scale.ts N dataDir [profileFile]')

const declareStart = performance.now()
const classes = declareGeneratedFunctions(count)
const declareMs = performance.now() - declareStart

const baseOptions: KitOptions = {
  appId: APP_ID,
  masterKey: MASTER_KEY,
  mountPath: MOUNT,
  dataDir,
  ephemeralDatabase: true,
  models: path.join(ROOT, 'fixtures', 'models'),
  functions: classes
}
// The docs option (`docs: { title, version }`, served at /api-docs/json) may not exist yet in this checkout.
const docsOption = { docs: { title: 'fastify-parse-kit bench', version: '0.0.0' } }

const profiler = profileFile ? new PhaseProfiler() : undefined

async function boot (withDocs: boolean): Promise<{ app: FastifyInstance, bootMs: number, bootCpuMs: number, routeTimes: number[] }> {
  const app = Fastify({ logger: { level: 'warn' }, pluginTimeout: 180_000 })
  const routeTimes: number[] = []
  app.addHook('onRoute', (route) => {
    if (GENERATED_URL_PREFIXES.some((prefix) => route.url.startsWith(prefix))) routeTimes.push(performance.now())
  })
  const options = (withDocs ? { ...baseOptions, ...docsOption } : baseOptions) as KitOptions
  const started = performance.now()
  const cpu = process.cpuUsage()
  await app.register(kitPlugin, options)
  await app.ready()
  const { user, system } = process.cpuUsage(cpu)
  // The profile is of the boot alone: the docs requests after it are timed on their own.
  if (profiler && profileFile) await profiler.stop(profileFile)
  return { app, bootMs: performance.now() - started, bootCpuMs: (user + system) / 1000, routeTimes }
}

function docsUnsupported (error: unknown): boolean {
  // Older checkouts name the error class; newer ones give it a code.
  const optionError = error instanceof Error && (error.name === 'KitOptionsError' || (error as { code?: unknown }).code === 'FPK_ERR_OPTION_UNKNOWN')
  return optionError && /"docs"/.test(error.message)
}

await profiler?.start()
let docsNote: string | undefined
let booted: Awaited<ReturnType<typeof boot>>
try {
  booted = await boot(true)
} catch (error) {
  if (!docsUnsupported(error)) throw error
  // Options are checked before anything starts, so nothing is left running: boot again without docs.
  docsNote = 'kitPlugin has no `docs` option in this checkout: OpenAPI generation not measured'
  booted = await boot(false)
}
const { app, bootMs, bootCpuMs, routeTimes } = booted
const memory = memorySample()

let docsFirstMs: number | null = null
let docsSecondMs: number | null = null
let docsBytes: number | null = null
if (!docsNote) {
  const first = performance.now()
  const response = await app.inject({ method: 'GET', url: '/api-docs/json' })
  docsFirstMs = performance.now() - first
  if (response.statusCode === 200) {
    docsBytes = response.body.length
    const second = performance.now()
    await app.inject({ method: 'GET', url: '/api-docs/json' })
    docsSecondMs = performance.now() - second
  } else {
    docsFirstMs = null
    docsNote = `GET /api-docs/json answered ${response.statusCode}: OpenAPI generation not measured`
  }
}
await app.close()

const sample: ScaleSample = {
  functions: count,
  declaredRoutes: routeTimes.length,
  declareMs,
  bootMs,
  bootCpuMs,
  routeSpanMs: routeTimes.length > 1 ? routeTimes[routeTimes.length - 1] - routeTimes[0] : 0,
  docsFirstMs,
  docsSecondMs,
  docsBytes,
  ...(docsNote ? { docsNote } : {}),
  memory
}
process.stdout.write(`\n${SCALE_RESULT_MARK}${JSON.stringify(sample)}\n`)

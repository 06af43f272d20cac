// The kit's own registration of N generated functions, without Parse Server or
// a database: registerDeclaredRoutes, then ready(), on a plain Fastify instance,
// in a fresh process. Its CPU time and heap growth set beside bare-routes.ts's
// (the same routes, registered by hand) are the kit's own share of the scale
// boot, without the ±40 ms a whole boot's Parse and PostgreSQL start adds.
// argv: N [--no-routes]. --no-routes makes the scope's route() a no-op: what
// is left is the kit's own work and allocation. The heap growth is allocation
// only while no collection runs: start node with a large young generation
// (--min-semi-space-size=256 --max-semi-space-size=256) to read it so.
// Prints one line: functions, CPU ms, heap growth MB, garbage collections and their pauses (ms).
import { PerformanceObserver } from 'node:perf_hooks'
import Fastify from 'fastify'
import { registerDeclaredRoutes } from '../../lib/routing/register.js'
import { declareGeneratedFunctions } from './declare-generated.js'
import { APP_ID, MASTER_KEY, MOUNT } from './shared.js'

const count = Number(process.argv[2])
if (!Number.isInteger(count) || count < 0) throw new Error('usage: register-alone.ts N [--no-routes]')
const withoutRoutes = process.argv.includes('--no-routes')

declareGeneratedFunctions(count)

const collections = { count: 0, pauseMs: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    collections.count++
    collections.pauseMs += entry.duration
  }
}).observe({ entryTypes: ['gc'] })

const app = Fastify({ logger: { level: 'warn' } })
// The scope inherits route() from the instance: a no-op here leaves the kit's own work alone.
if (withoutRoutes) app.route = function (this: typeof app) { return this } as unknown as typeof app.route
const heapBefore = process.memoryUsage().heapUsed
const cpu = process.cpuUsage()
await registerDeclaredRoutes(app, { mountPath: MOUNT, appId: APP_ID, masterKey: MASTER_KEY, masterKeyIps: ['127.0.0.1'] })
await app.ready()
const { user, system } = process.cpuUsage(cpu)
const heapGrowth = process.memoryUsage().heapUsed - heapBefore
// Let the observer hear of the last collection before reading its count.
await new Promise((resolve) => setTimeout(resolve, 5))
console.log(`functions ${count}${withoutRoutes ? ' (no routes)' : ''}: CPU ${((user + system) / 1000).toFixed(1)} ms, heap +${(heapGrowth / 1e6).toFixed(2)} MB, ${collections.count} collections (${collections.pauseMs.toFixed(1)} ms)`)
await app.close()

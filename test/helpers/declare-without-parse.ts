// Run as a child process by test/schema-declarations.test.ts: imports the
// package's index, declares a model, a route and a job, and has a boot refused
// for an option; then prints whether Parse Server itself (its main module) was
// loaded. Stand-ins of deferred modules sit under parse-server/ on purpose
// (parse/lazy-subsystems.ts): only the package's main module counts.
import { createRequire } from 'node:module'
import Fastify from 'fastify'
import { BaseModel, CloudFunction, Job, ParseClass, ParseField, Route, kitPlugin } from '../../lib/index.js'

@ParseClass('Declared')
class Declared extends BaseModel {
  @ParseField({ type: 'String', required: true }) title!: string
  @ParseField({ type: 'Pointer', targetClass: '_User' }) owner?: unknown
}

@Route(Declared)
class DeclaredRoutes {
  @CloudFunction({ methods: ['GET'] })
  static async listDeclared (): Promise<string[]> { return [] }
}

class DeclaredJobs {
  @Job()
  static async sweepDeclared (): Promise<void> {}
}

let refusal = ''
const app = Fastify()
try {
  await app.register(kitPlugin, { appId: 'declared', masterKey: 'declared-master-key', allowAuthRoute: true } as never)
  await app.ready()
} catch (error) {
  refusal = (error as { code?: string }).code ?? String(error)
}
const loaded = Object.keys(createRequire(import.meta.url).cache).some((file) => file.endsWith('/node_modules/parse-server/lib/index.js'))
process.stdout.write(JSON.stringify({ declared: [Declared.name, DeclaredRoutes.name, DeclaredJobs.name], refusal, parseServerLoaded: loaded }) + '\n')

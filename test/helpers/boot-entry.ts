// A server entry as an application writes one, for boot-failure tests: kitPlugin
// with the options in KIT_OPTIONS (JSON) and the models in KIT_MODELS, started
// through bootOrExit, so any mistake prints its one line and exits with 1.
import Fastify from 'fastify'
import { kitPlugin } from '../../plugin.js'
import { bootOrExit, kitServerOptions, listenOrExit } from '../../lib/index.js'

const options = JSON.parse(process.env.KIT_OPTIONS ?? '{}')
const app = Fastify(kitServerOptions({ level: process.env.LOG_LEVEL ?? 'warn' }))
await bootOrExit(async () => {
  await app.register(kitPlugin, { appId: 'boot-entry', masterKey: 'boot-entry-master-key', ...(process.env.KIT_MODELS ? { models: process.env.KIT_MODELS } : {}), ...options })
  await app.ready()
})
await bootOrExit(() => listenOrExit(app, { port: 0, host: '127.0.0.1' }))
process.stdout.write('boot-entry ready\n')
await app.close()

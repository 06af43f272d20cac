// `npm start` / `npm run dev`: reads .env, boots the app and serves it until
// SIGINT or SIGTERM, then shuts Parse Server and the database down cleanly.
loadDotEnv()
const { buildApp } = await import('./app.js') // after .env, so every module sees its values
const { listenOrExit, masterKeyHint } = await import('fastify-parse-kit')

const port = Number(process.env.PORT || 1337)
const host = process.env.HOST || '127.0.0.1'
const app = await buildApp()

let closing = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return
    closing = true
    app.log.info(`${signal}: shutting down`)
    app.close().then(() => process.exit(0), (error) => {
      app.log.error(error)
      process.exit(1)
    })
  })
}

await listenOrExit(app, { port, host })
const { mountPath, appId, docs, masterKey } = app.kit.options
const address = app.server.address()
const origin = `http://${host}:${typeof address === 'object' && address ? address.port : port}`
const base = `${origin}${mountPath === '/' ? '' : mountPath}`
const session = app.demoToken ? ` -H 'X-Parse-Session-Token: ${app.demoToken}'` : ''
process.stdout.write([
  '',
  `{{name}} is ready at ${base} (database: ${app.kit.database.displayURI})`,
  `  curl -s '${base}/notes/listNotes?limit=5' -H 'X-Parse-Application-Id: ${appId}'${session}`,
  `  curl -s -X POST ${base}/notes/createNote -H 'X-Parse-Application-Id: ${appId}'${session} -H 'Content-Type: application/json' -d '{"title":"Hello","status":"published"}'`,
  app.demoToken
    ? '  (the session token is the seeded demo user\'s: demo / demo-password)'
    : '  (no demo session token: seeding is off, or the demo user could not log in)',
  docs ? `  API docs: ${origin}${docs.path}` : '  API docs: off (DOCS_ENABLED=true to serve them)',
  `  ${masterKeyHint(masterKey)}`,
  ''
].join('\n') + '\n')

/** Values from .env fill in what the environment does not already set. */
function loadDotEnv (): void {
  try {
    process.loadEnvFile()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

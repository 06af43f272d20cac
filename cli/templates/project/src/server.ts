// `npm start` / `npm run dev` (tsx) and `npm run start:prod` (node dist/server.js):
// reads .env, checks the settings (src/env.ts), boots the app and serves it
// until SIGINT or SIGTERM, then shuts Parse Server and the database down cleanly.
loadDotEnv()
const { loadEnv } = await import('./env.js')
const { port, host } = validEnvOrExit(loadEnv)
const { buildApp } = await import('./app.js') // after .env, so every module sees its values
const { listenOrExit, masterKeyHint } = await import('fastify-parse-kit')
const { default: closeWithGrace } = await import('close-with-grace')

const app = await buildApp()

// A signal, an uncaught error or an unhandled rejection closes the app (Parse
// Server, the database) once; a close that hangs ends the process after 10 s,
// as a container's stop grace period would, and a second signal ends it at once.
closeWithGrace({ delay: 10_000, logger: app.log }, async ({ signal, err }) => {
  if (err) app.log.error(err, 'shutting down after an error')
  else app.log.info(`${signal ?? 'exit'}: shutting down`)
  await app.close()
})

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

/** A bad setting stops the boot with the message from src/env.ts, not a stack trace. */
function validEnvOrExit<T> (load: () => T): T {
  try {
    return load()
  } catch (error) {
    process.stderr.write(`Cannot start: ${(error as Error).message}\n`)
    process.exit(1)
  }
}

/** Values from .env fill in what the environment does not already set. */
function loadDotEnv (): void {
  try {
    process.loadEnvFile()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

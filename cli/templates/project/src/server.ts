// `npm start` / `npm run dev` (tsx) and `npm run start:prod` (node dist/server.js):
// reads .env, checks the settings (src/env.ts), boots the app and serves it
// (src/serve.ts) until SIGINT or SIGTERM, then shuts Parse Server and the
// database down cleanly.
loadDotEnv()
const { loadEnv } = await import('./env.js')
const { port, host } = validEnvOrExit(loadEnv)
const { assertPortFree, bootOrExit } = await import('fastify-parse-kit')

// A failed boot prints one line, `Cannot start: <what to change> (<FPK_ERR_… code>)`,
// and exits with 1; DEBUG=1 adds the stack. A taken port is said before the boot.
await bootOrExit(() => assertPortFree({ port, host }))
// After .env, so every module sees its values; inside bootOrExit, so a model file
// that cannot be compiled (tsconfig.json without experimentalDecorators) is one line too.
const { buildApp } = await bootOrExit(() => import('./app.js'))
const { serve } = await import('./serve.js')
const app = await bootOrExit(() => buildApp())
await bootOrExit(() => serve(app, { port, host, name: '{{name}}', demoToken: app.demoToken, dashboardPath: app.dashboardPath }))

/** A bad setting stops the boot with the message from src/env.ts, not a stack trace. */
function validEnvOrExit<T> (load: () => T): T {
  try {
    return load()
  } catch (error) {
    process.stderr.write(`Cannot start: ${(error as Error).message} (${(error as { code?: string }).code ?? 'FPK_ERR_ENV_INVALID'})\n`)
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
